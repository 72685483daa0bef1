/**
 * A store that was open while another connection (another store object in this process, or another process)
 * changed the file's vector index quantisation with `resetVectorIndex` follows the file, the way opening the
 * store now would: a store opened with an explicit `vectorIndex.quantization` that no longer matches refuses
 * its writes and searches with `ENGRAM_STORE_VECTOR_INDEX_MISMATCH` (nothing written), and a store opened
 * without one adopts the file's setting, so its writes keep the quantised copies the other store searches.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '@engram/test-support/prng';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { knnPlanTestHook } from './sqlite/vector-quant.js';
import {
  createSqliteMemoryStore,
  type SqliteMemoryStore,
  type VectorQuantization,
  vectorWorkerProbe,
} from './sqlite-store.js';

const DIMS = 32;
const PROFILE = { id: 'random', dimensions: DIMS };
let dir: string;
let path: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-quant-change-'));
  path = join(dir, 'shared.db');
  // At these sizes the planner would run the exact float scan; the quantised table's statements (stale after
  // another connection's reset) are what these tests are about, so every quantised search takes the coarse pass.
  knnPlanTestHook.forced = 'quantised';
});

afterEach(() => {
  knnPlanTestHook.forced = null;
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function unitVectors(count: number, seed: number): Float32Array[] {
  const random = mulberry32(seed);
  return Array.from({ length: count }, () => {
    const v = Float32Array.from({ length: DIMS }, () => random() - 0.5);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

const ROWS = unitVectors(60, 3);
const NEW = unitVectors(3, 17);

/** A store of the shared file: `quantization` names the setting explicitly, undefined adopts the file's. */
function openStore(quantization?: VectorQuantization, access: 'read' | 'write' = 'write'): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path,
    access,
    vectorWorker: false,
    ...(access === 'write' ? { embedding: PROFILE } : {}),
    ...(quantization === undefined ? {} : { vectorIndex: { quantization } }),
  });
  open.push(store);
  return store;
}

/** The shared file with 60 memories of agent a, its index recorded as `initial`. */
async function seeded(initial: VectorQuantization): Promise<void> {
  const store = createSqliteMemoryStore({ path, embedding: PROFILE, vectorIndex: { quantization: initial } });
  await store.insertMemories(
    ROWS.map((vector, i) => ({
      id: `m${i}`,
      agentId: 'a',
      kind: 'fact' as const,
      content: `row ${i}`,
      vector,
    })),
  );
  store.close();
}

function newMemories(prefix: string) {
  return NEW.map((vector, i) => ({
    id: `${prefix}${i}`,
    agentId: 'a',
    kind: 'fact' as const,
    content: `new ${i}`,
    vector,
  }));
}

/** The file's rows: memories, float vectors and quantised copies (null without the quantised table). */
function counts(): { memories: number; float: number; quant: number | null; recorded: string | undefined } {
  const db = openDatabase(path, { readonly: true });
  try {
    const one = (sql: string): number => (db.prepare(sql).get() as { n: number }).n;
    const hasQuant =
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'memories_vec_quant'").get() !==
      undefined;
    const recorded = (
      db.prepare("SELECT value FROM meta WHERE key = 'vector_index'").get() as { value: string } | undefined
    )?.value;
    return {
      memories: one('SELECT count(*) AS n FROM memories'),
      float: one('SELECT count(*) AS n FROM memories_vec'),
      quant: hasQuant ? one('SELECT count(*) AS n FROM memories_vec_quant') : null,
      recorded,
    };
  } finally {
    db.close();
  }
}

/** The nearest memory's id for each of the new vectors. */
async function nearestIds(store: SqliteMemoryStore): Promise<string[]> {
  const out: string[] = [];
  for (const vector of NEW) {
    const hits = await store.searchVector({ agentId: 'a', vector, k: 3 });
    out.push(hits[0]?.id ?? 'none');
  }
  return out;
}

async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise;
  } catch (err) {
    return { code: (err as { code: string }).code, message: (err as Error).message };
  }
  throw new Error('expected a rejection');
}

const TRANSITIONS: readonly [VectorQuantization, VectorQuantization][] = [
  ['none', 'int8'],
  ['int8', 'bit'],
  ['int8', 'none'],
];

describe.each(TRANSITIONS)('another store resets the index from %s to %s', (from, to) => {
  it('a store opened with the old setting refuses to write or search, names both kinds, writes nothing', async () => {
    await seeded(from);
    const stale = openStore(from);
    expect(await nearestIds(stale)).toHaveLength(3);
    const other = openStore();
    await other.resetVectorIndex({ quantization: to });
    const before = counts();
    expect(before.recorded).toBe(to);

    const write = await rejection(stale.insertMemories(newMemories('s')));
    expect(write.code).toBe('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
    expect(write.message).toContain(`'${from}'`);
    expect(write.message).toContain(`'${to}'`);
    expect(write.message).not.toContain('new 0');
    // The transaction rolled back: no memory, no vector, no quantised copy.
    expect(counts()).toEqual(before);
    expect(await other.getMemory('a', 's0')).toBeNull();

    const search = await rejection(
      stale.searchVector({ agentId: 'a', vector: NEW[0] as Float32Array, k: 3 }),
    );
    expect(search.code).toBe('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
    // It stays refused (not only the first call after the change).
    expect(
      (
        await rejection(
          stale.insertMemory({
            id: 't0',
            agentId: 'a',
            kind: 'fact',
            content: 'new t',
            vector: NEW[0] as Float32Array,
          }),
        )
      ).code,
    ).toBe('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
    expect(counts()).toEqual(before);
    // A delete is never refused (erasing must not wait for a reopen), and it takes the file's quantised copy
    // with it, whatever kind that is now: nothing is left for maintenance to prune.
    expect(await stale.deleteMemory('a', 'm0')).toBe(true);
    expect(await other.getMemory('a', 'm0')).toBeNull();
    expect(counts()).toEqual({
      ...before,
      memories: before.memories - 1,
      float: before.float - 1,
      quant: before.quant === null ? null : before.quant - 1,
    });
    expect(await other.pruneOrphanedVectors('a')).toEqual({ pruned: 0 });
    // Writes stay refused after the delete.
    expect((await rejection(stale.insertMemories(newMemories('u')))).code).toBe(
      'ENGRAM_STORE_VECTOR_INDEX_MISMATCH',
    );

    // The recovery the message names: reopen with the file's setting.
    const reopened = openStore(to);
    await reopened.insertMemories(newMemories('r'));
    expect(await nearestIds(other)).toEqual(['r0', 'r1', 'r2']);
  });

  it('a store opened without a setting adopts the new one: its writes are found by the other store', async () => {
    await seeded(from);
    const stale = openStore();
    expect(stale.vectorIndex.quantization).toBe(from);
    expect(await nearestIds(stale)).toHaveLength(3);
    const other = openStore(from);
    await other.resetVectorIndex({ quantization: to });

    await stale.insertMemories(newMemories('s'));
    expect(stale.vectorIndex.quantization).toBe(to);
    const after = counts();
    expect(after).toEqual({ memories: 63, float: 63, quant: to === 'none' ? null : 63, recorded: to });
    // The other store searches the new index and finds what the adopting store wrote.
    expect(await nearestIds(other)).toEqual(['s0', 's1', 's2']);
    const coarse = knnPlanTestHook.quantised;
    expect(await nearestIds(stale)).toEqual(['s0', 's1', 's2']);
    // The adopting store's searches ran the coarse pass on the new table (none without quantisation).
    expect(knnPlanTestHook.quantised - coarse).toBe(to === 'none' ? 0 : 3);
    // A delete by the adopting store removes the quantised copy too: nothing is left for maintenance.
    expect(await stale.deleteMemory('a', 's1')).toBe(true);
    expect(await other.pruneOrphanedVectors('a')).toEqual({ pruned: 0 });
    expect(counts()).toMatchObject({ float: 62, quant: to === 'none' ? null : 62 });
  });
});

describe('a store that adopts on a search', () => {
  it('searches the new index, then writes copies the other store finds', async () => {
    await seeded('none');
    const stale = openStore();
    const other = openStore();
    await other.resetVectorIndex({ quantization: 'bit' });
    const exact = await other.searchVector({ agentId: 'a', vector: ROWS[5] as Float32Array, k: 5 });
    const coarse = knnPlanTestHook.quantised;
    expect(await stale.searchVector({ agentId: 'a', vector: ROWS[5] as Float32Array, k: 5 })).toEqual(exact);
    expect(knnPlanTestHook.quantised - coarse).toBe(1);
    expect(stale.vectorIndex).toEqual({ quantization: 'bit', rescore: 16 });
    await stale.insertMemories(newMemories('s'));
    expect(await nearestIds(other)).toEqual(['s0', 's1', 's2']);
  });

  it('a read-only store adopts too, and one opened with the old setting refuses', async () => {
    await seeded('int8');
    const reader = openStore(undefined, 'read');
    const pinned = openStore('int8', 'read');
    expect(await nearestIds(reader)).toHaveLength(3);
    const other = openStore();
    await other.insertMemories(newMemories('s'));
    await other.resetVectorIndex({ quantization: 'none' });
    expect(await nearestIds(reader)).toEqual(['s0', 's1', 's2']);
    expect(reader.vectorIndex.quantization).toBe('none');
    expect(
      (await rejection(pinned.searchVector({ agentId: 'a', vector: NEW[0] as Float32Array, k: 3 }))).code,
    ).toBe('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
  });
});

describe('refreshVectorIndex', () => {
  it('reads the file now: the pinned store is refused at once, the adopting one reports the new setting', async () => {
    await seeded('int8');
    const pinned = openStore('int8');
    const adopting = openStore();
    expect(await pinned.refreshVectorIndex()).toEqual({ quantization: 'int8', rescore: 8 });
    const other = openStore();
    await other.resetVectorIndex({ quantization: 'bit' });
    // Before any write or search: `vectorIndex` still says what the store last saw, the refresh reads the file.
    expect(adopting.vectorIndex.quantization).toBe('int8');
    expect(await adopting.refreshVectorIndex()).toEqual({ quantization: 'bit', rescore: 16 });
    expect(adopting.vectorIndex.quantization).toBe('bit');
    const refused = await rejection(pinned.refreshVectorIndex());
    expect(refused.code).toBe('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
    expect(refused.message).toContain("now 'bit'");
    expect(refused.message).toContain("'int8' this store was opened with");
    expect(
      (await rejection(pinned.searchVector({ agentId: 'a', vector: NEW[0] as Float32Array, k: 3 }))).code,
    ).toBe('ENGRAM_STORE_VECTOR_INDEX_MISMATCH');
    pinned.close();
    expect((await rejection(pinned.refreshVectorIndex())).code).toBe('ENGRAM_STORE_CLOSED');
  });
});

describe('a store that runs its k-NN on the vector worker', () => {
  it('hands the worker the adopted setting: its answers are the other store’s', async () => {
    await seeded('int8');
    const offloaded = createSqliteMemoryStore({ path, embedding: PROFILE, vectorWorker: true });
    open.push(offloaded);
    // Every k-NN to the worker, however small the partition.
    vectorWorkerProbe(offloaded)?.setMinScanBytes(0);
    for (let i = 0; i < 200 && vectorWorkerProbe(offloaded)?.state !== 'ready'; i += 1) {
      await offloaded.searchVector({ agentId: 'a', vector: NEW[0] as Float32Array, k: 1 });
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(vectorWorkerProbe(offloaded)?.state).toBe('ready');
    const other = openStore();
    await other.resetVectorIndex({ quantization: 'bit' });
    await other.insertMemories(newMemories('s'));
    const before = vectorWorkerProbe(offloaded)?.answered ?? 0;
    for (const vector of ROWS.slice(0, 10)) {
      const expected = await other.searchVector({ agentId: 'a', vector, k: 5 });
      expect(await offloaded.searchVector({ agentId: 'a', vector, k: 5 })).toStrictEqual(expected);
    }
    expect(await nearestIds(offloaded)).toEqual(['s0', 's1', 's2']);
    expect(offloaded.vectorIndex.quantization).toBe('bit');
    expect((vectorWorkerProbe(offloaded)?.answered ?? 0) - before).toBe(13);
    expect(vectorWorkerProbe(offloaded)?.fallbacks).toBe(0);
  });
});

describe('another process resets the index', () => {
  /** Runs `resetVectorIndex({ quantization })` on the shared file in a child process (the built package). */
  function resetInChild(quantization: VectorQuantization): { indexed: number } {
    const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = `
import { createSqliteMemoryStore } from ${JSON.stringify(dist)};
const store = createSqliteMemoryStore({ path: ${JSON.stringify(path)}, vectorWorker: false });
const out = await store.resetVectorIndex({ quantization: ${JSON.stringify(quantization)} });
store.close();
process.stdout.write(JSON.stringify(out));`;
    return JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }),
    ) as { indexed: number };
  }

  it('int8 to bit: the pinned store refuses, the adopting one writes bit copies', async () => {
    await seeded('int8');
    const pinned = openStore('int8');
    const adopting = openStore();
    expect(await nearestIds(pinned)).toHaveLength(3);
    expect(await nearestIds(adopting)).toHaveLength(3);
    expect(resetInChild('bit')).toEqual({ indexed: 60 });
    const before = counts();
    expect(before).toEqual({ memories: 60, float: 60, quant: 60, recorded: 'bit' });

    expect((await rejection(pinned.insertMemories(newMemories('p')))).code).toBe(
      'ENGRAM_STORE_VECTOR_INDEX_MISMATCH',
    );
    expect(counts()).toEqual(before);
    await adopting.insertMemories(newMemories('s'));
    expect(adopting.vectorIndex.quantization).toBe('bit');
    expect(counts()).toEqual({ memories: 63, float: 63, quant: 63, recorded: 'bit' });
    expect(await nearestIds(openStore('bit'))).toEqual(['s0', 's1', 's2']);
  });
});
