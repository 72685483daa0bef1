/** The composition root over a real SQLite file: every producer reports to the one collector. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { healthDtoSchema } from '@engram/diagnostics';
import { createSqliteMemoryStore } from '@engram/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEngram } from './composition.js';
import { isEngramDemoError } from './errors.js';
import { SAMPLE_SESSIONS } from './sample/sample-data.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-composition-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('openEngram', () => {
  it('wires store, embedder, retriever, drain, ingestion, extraction and maintenance into one collector', async () => {
    const engram = await openEngram({ dbPath: join(dir, 'nested', 'dir', 'wired.db') });
    try {
      expect(engram.embedderLabel).toBe('deterministic-lexicon-v1 (128 d)');
      expect(engram.modelLabel).toBeNull();
      const session = SAMPLE_SESSIONS[0];
      if (session === undefined) throw new Error('the sample has sessions');
      const ingested = await engram.ingestor.appendAndIngest(
        session.agentId,
        session.sessionId,
        session.events,
      );
      expect(ingested.ingest.memories).toBe(session.events.length);

      const progress: [number, number][] = [];
      const drained = await engram.drain({ onProgress: (done, total) => progress.push([done, total]) });
      expect(drained).toMatchObject({
        rows: session.events.length,
        ready: session.events.length,
        backlog: 0,
        outcome: 'completed',
      });
      expect(progress[0]).toEqual([0, session.events.length]);
      expect(progress.at(-1)).toEqual([session.events.length, session.events.length]);

      const response = await engram.retriever.search(session.agentId, 'downtime', { limit: 3 });
      expect(response.execution.arms).toEqual(['lexical', 'vector']);
      expect(response.results[0]?.record.content).toContain('outage');

      const events = await engram.store.readEvents(
        session.agentId,
        session.sessionId,
        1,
        session.events.length,
      );
      const extraction = await engram.extract(events);
      expect(extraction?.report.outcome).toBe('skipped');

      const pass = await engram.maintain(session.agentId);
      expect(pass.report?.heavy.outcome).toBe('skipped');

      const dto = await engram.health(session.agentId);
      expect(healthDtoSchema.safeParse(dto).success).toBe(true);
      expect(dto.store.totals.events).toBe(session.events.length);
      const agent = dto.runtime.agent;
      expect(agent.retrieval.search.operations).toBe(1);
      expect(agent.embedding.rows).toBe(session.events.length);
      expect(agent.extraction.outcomes.skipped).toBe(1);
      expect(agent.maintenance.passes).toBe(1);
      expect(dto.runtime.process.embeddingBacklog.total).toBe(0);
      expect(dto.runtime.process.store.statements.write).toBeGreaterThan(0);
      expect(await engram.listAgents()).toEqual([session.agentId]);
    } finally {
      await engram.close();
      await engram.close();
    }
  });

  it('drains every agent in one pass, each under its own id, and reports the backlog even when it is empty', async () => {
    const path = join(dir, 'two-agents.db');
    const engram = await openEngram({ dbPath: path });
    const expected = new Map<string, number>();
    try {
      for (const session of SAMPLE_SESSIONS) {
        const r = await engram.ingestor.appendAndIngest(session.agentId, session.sessionId, session.events);
        expected.set(session.agentId, (expected.get(session.agentId) ?? 0) + r.ingest.memories);
      }
      expect(expected.size).toBe(2);
      const total = [...expected.values()].reduce((a, b) => a + b, 0);
      const progress: [number, number][] = [];
      const drained = await engram.drain({ onProgress: (done, all) => progress.push([done, all]) });
      expect(drained).toMatchObject({ rows: total, ready: total, backlog: 0, outcome: 'completed' });
      expect(progress[0]).toEqual([0, total]);
      expect(progress.at(-1)).toEqual([total, total]);
      expect(progress.every(([done, all]) => done <= all)).toBe(true);
      for (const [agentId, rows] of expected) {
        const dto = await engram.health(agentId);
        expect(dto.runtime.agent.embedding.rows).toBe(rows);
        expect(dto.runtime.agent.embedding.transitions.ready).toBe(rows);
      }
    } finally {
      await engram.close();
    }

    // A new process over the drained file: nothing pending, yet the gauge reads 0 rather than "not sampled".
    const again = await openEngram({ dbPath: path });
    try {
      const idle = await again.drain();
      expect(idle).toMatchObject({ rows: 0, batches: 0, backlog: 0, outcome: 'completed' });
      const dto = await again.health(null);
      expect(dto.runtime.process.embeddingBacklog.total).toBe(0);
      expect(dto.runtime.process.embeddingBacklog.activeAgents).toBe(0);
    } finally {
      await again.close();
    }
  });

  it('refuses a database indexed with another embedder, with a typed message', async () => {
    const path = join(dir, 'other-embedder.db');
    const store = createSqliteMemoryStore({ path, embedding: { id: 'someone-else-v1', dimensions: 8 } });
    await store.close();
    const failure = await openEngram({ dbPath: path }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isEngramDemoError(failure)).toBe(true);
    expect((failure as Error).message).toBe(
      'the database was indexed with another embedder than deterministic-lexicon-v1; use another --db or re-index it',
    );
  });

  it('rejects an invalid provider environment naming the variable, never its value', async () => {
    const failure = await openEngram({
      dbPath: join(dir, 'provider.db'),
      env: {
        ENGRAM_OPENAI_CHAT_MODEL: 'm',
        ENGRAM_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
        ENGRAM_OPENAI_TIMEOUT_MS: 'soon-ish',
      },
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect((failure as { code?: unknown }).code).toBe('ENGRAM_PROVIDER_CONFIG');
    expect((failure as Error).message).toContain('ENGRAM_OPENAI_TIMEOUT_MS');
    expect((failure as Error).message).not.toContain('soon-ish');
  });
});
