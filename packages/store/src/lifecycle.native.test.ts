/**
 * What maintenance needs from the store, against a real SQLite file: a merge that supersedes every source
 * with lineage or writes nothing, archived rows found again on request, the import time of backdated rows,
 * and pending rows listed by id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const profile = { id: 'test-v1', dimensions: 4 };
let dir: string;
let store: SqliteMemoryStore;
let clock: number;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-store-'));
  clock = 1_000_000;
  let n = 0;
  store = createSqliteMemoryStore({
    path: join(dir, 'store.db'),
    embedding: profile,
    now: () => clock,
    idFactory: () => {
      n += 1;
      return `gen-${n}`;
    },
  });
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const note = (content: string) => ({ agentId: 'a', kind: 'semantic' as const, content });

describe('mergeMemories', () => {
  it('supersedes every source by the merged row, each with its lineage', async () => {
    const rows = await store.insertMemories([note('alpha one'), note('alpha two'), note('alpha three')]);
    clock += 10;
    const { merged, superseded } = await store.mergeMemories(
      'a',
      rows.map((r) => ({ id: r.id, expectedRevision: r.revision })),
      { ...note('alpha'), tags: ['source:merge'] },
    );
    expect(superseded.map((r) => [r.id, r.lifecycle, r.supersededBy, r.revision])).toEqual(
      rows.map((r) => [r.id, 'superseded', merged.id, 2]),
    );
    for (const r of rows) {
      expect(await store.getMemory('a', r.id)).toMatchObject({
        lifecycle: 'superseded',
        supersededBy: merged.id,
      });
    }
    expect(await store.getMemory('a', merged.id)).toMatchObject({ lifecycle: 'active', content: 'alpha' });
  });

  it('a merged text equal to one source is stored as the new row; one equal to another active row reuses it', async () => {
    const [a, b] = await store.insertMemories([note('delta one'), note('delta two')]);
    const same = await store.mergeMemories(
      'a',
      [
        { id: a?.id ?? '', expectedRevision: 1 },
        { id: b?.id ?? '', expectedRevision: 1 },
      ],
      note('delta one'),
    );
    expect(same.merged.id).not.toBe(a?.id);
    expect(same.superseded.map((r) => r.supersededBy)).toEqual([same.merged.id, same.merged.id]);
    const [c, d, other] = await store.insertMemories([note('eps one'), note('eps two'), note('eps')]);
    const reused = await store.mergeMemories(
      'a',
      [
        { id: c?.id ?? '', expectedRevision: 1 },
        { id: d?.id ?? '', expectedRevision: 1 },
      ],
      note('eps'),
    );
    expect(reused.merged.id).toBe(other?.id);
    for (const id of [c?.id, d?.id]) {
      expect(await store.getMemory('a', id ?? '')).toMatchObject({
        lifecycle: 'superseded',
        supersededBy: other?.id,
      });
    }
  });

  it('writes nothing when one source changed meanwhile', async () => {
    const [a, b] = await store.insertMemories([note('beta one'), note('beta two')]);
    await store.updateMemory('a', b?.id ?? '', 1, { importance: 0.9 });
    await expect(
      store.mergeMemories(
        'a',
        [
          { id: a?.id ?? '', expectedRevision: 1 },
          { id: b?.id ?? '', expectedRevision: 1 },
        ],
        note('beta'),
      ),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
    expect(await store.listMemories('a', { limit: 10 })).toHaveLength(2);
    expect(await store.getMemory('a', a?.id ?? '')).toMatchObject({ lifecycle: 'active', revision: 1 });
  });

  it('refuses fewer than two sources or a repeated one', async () => {
    const [a] = await store.insertMemories([note('gamma')]);
    const one = { id: a?.id ?? '', expectedRevision: 1 };
    await expect(store.mergeMemories('a', [one], note('x'))).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    await expect(store.mergeMemories('a', [one, one], note('x'))).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    expect(await store.listMemories('a', { limit: 10 })).toHaveLength(1);
  });
});

describe('archived rows on request', () => {
  it('lexical search and revalidation return archived rows only with includeArchived', async () => {
    const row = await store.insertMemory(note('the deploy script lives in tools/deploy.sh'));
    await store.archiveMemory('a', row.id);
    const query = { agentId: 'a', terms: ['deploy'], limit: 10 };
    expect((await store.searchLexical(query)).hits).toHaveLength(0);
    expect((await store.searchLexical({ ...query, includeArchived: true })).hits.map((h) => h.id)).toEqual([
      row.id,
    ]);
    const all = await store.searchLexical({ ...query, mode: 'all', includeArchived: true });
    expect(all.hits.map((h) => h.id)).toEqual([row.id]);
    expect(await store.revalidate('a', [{ id: row.id }])).toEqual([]);
    expect((await store.revalidate('a', [{ id: row.id }], { includeArchived: true }))[0]?.lifecycle).toBe(
      'archived',
    );
    await expect(
      store.searchLexical({ ...query, includeArchived: 'yes' as unknown as boolean }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
  });
});

describe('import time and pending rows by id', () => {
  it('a backdated row keeps its creation time and records when it was written', async () => {
    const row = await store.insertMemory({ ...note('an old message'), createdAt: 5_000 });
    expect(row).toMatchObject({ createdAt: 5_000, updatedAt: 1_000_000 });
    expect(await store.getMemory('a', row.id)).toMatchObject({ createdAt: 5_000, updatedAt: 1_000_000 });
  });

  it('lists only the pending rows named', async () => {
    const rows = await store.insertMemories([note('one'), note('two'), note('three')]);
    const listed = await store.listPendingEmbeddings({ agentId: 'a', limit: 10, ids: [rows[2]?.id ?? ''] });
    expect(listed.map((p) => p.id)).toEqual([rows[2]?.id]);
  });
});
