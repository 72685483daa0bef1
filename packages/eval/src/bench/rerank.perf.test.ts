import { createHttpReranker } from '@engram/provider-openai';
import { describe, expect, it } from 'vitest';
import { formatRerankLines, RERANK_SCENARIO, runRerankScenario } from './rerank.js';
import { DETERMINISTIC_RERANK_SCORER, startDeterministicRerankServer } from './rerank-server.js';

// The rerank scenario of `pnpm bench` at a small size: it runs end to end against the loopback deterministic
// scorer and reports the stage's latency per candidates; never a wall-clock figure asserted.

describe('the rerank bench scenario', () => {
  it('times the rerank stage per candidates against the loopback deterministic scorer, none degraded', async () => {
    const server = await startDeterministicRerankServer();
    try {
      const reranker = createHttpReranker({ baseUrl: server.baseUrl, model: 'loopback-deterministic' });
      const report = await runRerankScenario({
        rows: 600,
        queries: 10,
        candidates: [5, 20],
        rerankers: [{ name: 'loopback', label: DETERMINISTIC_RERANK_SCORER, reranker }],
        log: () => {},
      });
      expect(report.cells.map((c) => [c.reranker, c.candidates, c.degraded])).toEqual([
        ['loopback', 5, 0],
        ['loopback', 20, 0],
      ]);
      for (const cell of report.cells) {
        expect(cell.rerank.p50Ms).toBeGreaterThanOrEqual(0);
        expect(Number.isFinite(cell.total.p95Ms)).toBe(true);
      }
      // Warm-up and timed queries of the two cells each made one rerank request.
      expect(server.requests()).toBe(2 * (10 + 20));
      const table = formatRerankLines(report).join('\n');
      expect(table).toContain(RERANK_SCENARIO);
      expect(table).toContain('not a model');
      expect(table).toMatch(/loopback × {2}20 candidates: rerank p50 \d+\.\d{2}/);
    } finally {
      await server.close();
    }
  }, 120_000);
});
