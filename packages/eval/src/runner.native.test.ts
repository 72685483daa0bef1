/**
 * The runner on a real SQLite store (FTS5 + sqlite-vec) with a small hand-made fixture: the figures it
 * reports, and the runs it refuses.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import type { RetrievalFixture } from './fixture.js';
import { VARIANTS } from './report.js';
import { loadFixture, runFixture } from './runner.js';

const PROFILE = { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true } as const;

const fixture: RetrievalFixture = {
  version: 3,
  name: 'tiny',
  vectorProfile: PROFILE,
  corpus: [
    { id: 'a1', agentId: 'a', kind: 'fact', content: 'The project uses pnpm workspaces.', importance: 0.5 },
    { id: 'a2', agentId: 'a', kind: 'fact', content: 'Deploys run from the main branch.', importance: 0.5 },
    { id: 'a3', agentId: 'a', kind: 'event', content: 'Upgraded pnpm to version 9.', importance: 0.5 },
    // Identical text under another agent: it must never appear in agent a's rankings.
    { id: 'b1', agentId: 'b', kind: 'fact', content: 'The project uses pnpm workspaces.', importance: 0.5 },
  ],
  queries: [
    { id: 'q1', agentId: 'a', text: 'pnpm', subsets: ['exact'], relevantIds: ['a1', 'a3'] },
    { id: 'q2', agentId: 'a', text: 'main branch', subsets: ['exact', 'mixed'], relevantIds: ['a2'] },
  ],
};

const dir = mkdtempSync(join(tmpdir(), 'engram-eval-runner-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('runFixture', () => {
  it('ranks each query within its agent and scores it in the report shape, per variant and subset', async () => {
    const report = await runFixture({ fixture });
    expect(report.fixture).toEqual({ name: 'tiny', version: 3 });
    expect(report.vectorProfile).toEqual(PROFILE);
    for (const variant of ['fts', 'hybrid'] as const) {
      const v = report.variants[variant];
      const [q1, q2] = v.queries;
      // Both pnpm memories of agent a are found (in some order), never agent b's copy.
      expect(new Set(q1?.ranked.slice(0, 2)), variant).toEqual(new Set(['a1', 'a3']));
      expect(q1?.recallAt5).toBe(1);
      expect(q1?.ndcgAt10).toBeCloseTo(1, 12);
      expect(q2?.ranked[0], variant).toBe('a2');
      expect(v.overall).toEqual({ queries: 2, recallAt5: 1, mrrAt10: 1, ndcgAt10: expect.closeTo(1, 12) });
      expect(Object.keys(v.subsets)).toEqual(['exact', 'mixed']);
      expect(v.subsets.mixed?.queries).toBe(1);
    }
    for (const variant of VARIANTS) {
      for (const q of report.variants[variant].queries) expect(q.ranked).not.toContain('b1');
    }
  });

  it('refuses a fixture made for another vector profile, also one that is not normalized', async () => {
    for (const vectorProfile of [
      { ...PROFILE, id: 'text-embedding-3-small' },
      { ...PROFILE, dimensions: 256 },
      { ...PROFILE, normalized: false },
    ]) {
      await expect(runFixture({ fixture: { ...fixture, vectorProfile } })).rejects.toMatchObject({
        code: 'ENGRAM_EVAL_INVALID_FIXTURE',
      });
    }
  });

  it('runs on a fresh store file, and refuses one that exists instead of mixing its rows into the figures', async () => {
    const path = join(dir, 'store.sqlite');
    const first = await runFixture({ fixture, storePath: path });
    expect(first.variants.hybrid.overall.recallAt5).toBe(1);
    const size = statSync(path).size;
    await expect(runFixture({ fixture, storePath: path })).rejects.toMatchObject({
      code: 'ENGRAM_EVAL_INVALID_ARGUMENTS',
    });
    // Another fixture (other ids, same agent) would have run on top of the old rows: refused as well.
    const other: RetrievalFixture = {
      ...fixture,
      corpus: fixture.corpus.map((r) => ({ ...r, id: `x-${r.id}` })),
      queries: fixture.queries.map((q) => ({ ...q, relevantIds: q.relevantIds.map((id) => `x-${id}`) })),
    };
    await expect(runFixture({ fixture: other, storePath: path })).rejects.toMatchObject({
      code: 'ENGRAM_EVAL_INVALID_ARGUMENTS',
    });
    expect(statSync(path).size).toBe(size);
    const empty = join(dir, 'empty.sqlite');
    writeFileSync(empty, '');
    await expect(runFixture({ fixture, storePath: empty })).rejects.toMatchObject({
      code: 'ENGRAM_EVAL_INVALID_ARGUMENTS',
    });
  });

  it("stores a row's session and position with the memory, and nothing for a row without them", async () => {
    const store = await createSqliteMemoryStore({
      path: ':memory:',
      embedding: { id: PROFILE.id, dimensions: PROFILE.dimensions },
    });
    try {
      const corpus = fixture.corpus.map((r, i) => (i < 2 ? { ...r, sessionId: 'session_4', seq: i + 1 } : r));
      await loadFixture(store, { ...fixture, corpus }, { createdAt: Date.UTC(2025, 0, 1) });
      const rows = await store.listMemories('a');
      expect(rows.map((r) => [r.id, r.sessionId, r.seqFrom, r.seqTo])).toEqual([
        ['a1', 'session_4', 1, 1],
        ['a2', 'session_4', 2, 2],
        ['a3', null, null, null],
      ]);
    } finally {
      await store.close();
    }
  });
});
