/**
 * The store remembers which agents have no open conflict link, so a search over such an agent reads none; it
 * must never hide a link: one written by this connection (link, resolve, forget, delete, import) or by another
 * connection to the same file is listed at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StatementKind } from '@engram/contracts';
import type { ExportRecord } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '../sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];
const reads: StatementKind[] = [];

function openStore(name = 'links.db'): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path: join(dir, name),
    embedding: null,
    observer: { onStatement: (kind) => reads.push(kind) },
  });
  open.push(store);
  return store;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-open-links-'));
  reads.length = 0;
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

async function twoFacts(store: SqliteMemoryStore, agentId: string): Promise<[string, string]> {
  const x = await store.insertMemory({ agentId, kind: 'fact', content: `${agentId} uses port 8080` });
  const y = await store.insertMemory({ agentId, kind: 'fact', content: `${agentId} uses port 9090` });
  return [x.id, y.id];
}

/** The read statements one open-links listing runs. */
async function readsOfListing(store: SqliteMemoryStore, agentId: string, ids: string[]): Promise<number> {
  const before = reads.filter((k) => k === 'read').length;
  await store.listConflicts(agentId, { ids, state: 'open' });
  return reads.filter((k) => k === 'read').length - before;
}

describe('open conflict links, remembered per agent', () => {
  it('an agent without open links is listed without reading a link; one with links reads them', async () => {
    const store = openStore();
    const quiet = await twoFacts(store, 'quiet');
    const busy = await twoFacts(store, 'busy');
    await store.linkConflict('busy', busy[0], busy[1], 'number');
    // First look: one check per agent; then the quiet agent reads nothing, the busy one its links.
    await store.listConflicts('quiet', { ids: quiet, state: 'open' });
    await store.listConflicts('busy', { ids: busy, state: 'open' });
    expect(await readsOfListing(store, 'quiet', quiet)).toBe(0);
    expect(await readsOfListing(store, 'busy', busy)).toBe(1);
    expect(await store.listConflicts('quiet', { ids: quiet, state: 'open' })).toEqual([]);
    expect(await store.listConflicts('busy', { ids: busy, state: 'open' })).toHaveLength(1);
  });

  it("this connection's link, resolve, forget and delete show at once", async () => {
    const store = openStore();
    const [x, y] = await twoFacts(store, 'a');
    const openLinks = async () => (await store.listConflicts('a', { ids: [x, y], state: 'open' })).length;
    expect(await openLinks()).toBe(0);
    await store.linkConflict('a', x, y, 'number');
    expect(await openLinks()).toBe(1);
    await store.resolveConflict('a', x, y, { outcome: 'dismiss' });
    expect(await openLinks()).toBe(0);
    const [z] = await twoFacts(store, 'a');
    await store.linkConflict('a', y, z as string, 'number');
    expect((await store.listConflicts('a', { state: 'open' })).length).toBe(1);
    await store.forgetMemory('a', z as string);
    expect((await store.listConflicts('a', { state: 'open' })).length).toBe(0);
    const [u, v] = await twoFacts(store, 'b');
    expect((await store.listConflicts('b', { state: 'open' })).length).toBe(0);
    await store.linkConflict('b', u, v, 'number');
    expect((await store.listConflicts('b', { state: 'open' })).length).toBe(1);
    await store.deleteAll('b');
    expect((await store.listConflicts('b', { state: 'open' })).length).toBe(0);
  });

  it('a link written by another connection to the file, or imported, is listed at once', async () => {
    const reader = openStore();
    const writer = openStore();
    const [x, y] = await twoFacts(writer, 'a');
    expect(await reader.listConflicts('a', { ids: [x, y], state: 'open' })).toEqual([]);
    await writer.linkConflict('a', x, y, 'number');
    expect(await reader.listConflicts('a', { ids: [x, y], state: 'open' })).toHaveLength(1);
    await writer.resolveConflict('a', x, y, { outcome: 'dismiss' });
    expect(await reader.listConflicts('a', { ids: [x, y], state: 'open' })).toEqual([]);

    const source = openStore('source.db');
    const [p, q] = await twoFacts(source, 'c');
    await source.linkConflict('c', p, q, 'entity');
    const records: ExportRecord[] = [];
    for await (const r of source.exportRecords({ agentId: 'c' })) records.push(r);
    const target = openStore('target.db');
    await twoFacts(target, 'other');
    expect(await target.listConflicts('c', { state: 'open' })).toEqual([]);
    await target.importRecords(records);
    expect(await target.listConflicts('c', { state: 'open' })).toHaveLength(1);
  });
});
