/**
 * The work of a BM25 search's join to the memories, counted (no clock): a search whose best units are single
 * memories that pass its filters joins only the units at or above its `limit`-th score (ties included), in one
 * scoring statement, and answers exactly as a search with a larger limit ranks them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CountedStatement } from './sqlite/context.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const ROWS = 600;
let dir: string;
let store: SqliteMemoryStore;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-lexical-cut-'));
  store = createSqliteMemoryStore({ path: join(dir, 'cut.db'), embedding: null });
  // Term frequency 1–3 and 50 lengths: 150 distinct scores, a few memories each.
  await store.insertMemories(
    Array.from({ length: ROWS }, (_, i) => ({
      id: `m${i}`,
      agentId: 'a',
      kind: 'fact' as const,
      content: `walrus ${'walrus '.repeat(i % 3)}note ${i} ${'filler '.repeat(i % 50)}`,
    })),
  );
});

afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('BM25 search: units joined to their memories', () => {
  it('joins only the units at or above the limit-th score, in one scoring statement', async () => {
    const all = await store.searchLexical({ agentId: 'a', terms: ['walrus'], limit: ROWS });
    expect(all.hits).toHaveLength(ROWS);
    const values = vi.spyOn(CountedStatement.prototype, 'values');
    try {
      for (const limit of [10, 50, 128]) {
        values.mockClear();
        const top = await store.searchLexical({ agentId: 'a', terms: ['walrus'], limit });
        expect(top.hits).toEqual(all.hits.slice(0, limit));
        const atOrAbove = all.hits.filter((h) => h.score >= (all.hits[limit - 1]?.score ?? 0)).length;
        expect(values).toHaveBeenCalledTimes(1);
        // The rows the scoring statement returned: one per joined unit, no more than the limit and its ties
        // (the former single cut joined twice the limit).
        expect((values.mock.results[0]?.value as unknown[] | undefined)?.length).toBe(atOrAbove);
        expect(atOrAbove).toBeLessThan(2 * limit);
      }
    } finally {
      values.mockRestore();
    }
  });
});
