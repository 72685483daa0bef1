/**
 * The quantised table's build is resumable: it runs in bounded steps, each recording how far it got, so a build
 * stopped part-way (a crash, a killed process) leaves a file whose next writable open finishes it, with the
 * same table and the same search results as a build that ran through; until then a read-only open searches
 * with the exact float scan, never with the half-built table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '@engram/test-support/prng';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { knnPlanTestHook } from './sqlite/vector-quant.js';
import { QUANT_BUILD_STEP } from './sqlite/vector-quant-build.js';
import { createSqliteMemoryStore, type SqliteMemoryStore, type VectorIndexProgress } from './sqlite-store.js';

const DIMS = 64;
const PROFILE = { id: 'random', dimensions: DIMS };
/** Three agents' partitions: 1,500 + 1,500 + 700 rows, five vec0 chunks of up to 1,024 vectors. */
const AGENTS = [
  ['a', 1500],
  ['b', 1500],
  ['c', 700],
] as const;
let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-quant-build-'));
  // The planner runs int8's exact float scan whatever the size; the coarse pass's guard on a pending build (the
  // file's watermark sends it to the float index) is what these tests are about, so searches take that SQL.
  knnPlanTestHook.forced = 'quantised';
});

const DEFAULT_STEP_BYTES = QUANT_BUILD_STEP.bytes;

afterEach(() => {
  knnPlanTestHook.forced = null;
  QUANT_BUILD_STEP.bytes = DEFAULT_STEP_BYTES;
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

const ROWS = new Map(AGENTS.map(([agent, n], i) => [agent, unitVectors(n, 11 + i)]));
const QUERIES = unitVectors(12, 5);

function openStore(path: string, access: 'read' | 'write' = 'write'): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path,
    access,
    ...(access === 'write' ? { embedding: PROFILE, vectorIndex: { quantization: 'int8' as const } } : {}),
  });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

/** Every query against every agent: ids and similarities, in order. */
async function searchAll(store: SqliteMemoryStore): Promise<{ id: string; similarity: number }[][]> {
  const out: { id: string; similarity: number }[][] = [];
  for (const [agent] of AGENTS) {
    for (const vector of QUERIES) {
      const hits = await store.searchVector({ agentId: agent, vector, k: 10 });
      out.push(hits.map((h) => ({ id: h.id, similarity: h.similarity })));
    }
  }
  return out;
}

/** The exact top 10 by brute force, per agent and query (ids only). */
function exactIds(): string[][] {
  const out: string[][] = [];
  for (const [agent] of AGENTS) {
    const rows = ROWS.get(agent) as Float32Array[];
    for (const q of QUERIES) {
      const scored = rows.map((v, i) => {
        let dot = 0;
        for (let d = 0; d < DIMS; d += 1) dot += (v[d] as number) * (q[d] as number);
        return { id: `${agent}${i}`, dot };
      });
      out.push(
        scored
          .sort((x, y) => y.dot - x.dot)
          .slice(0, 10)
          .map((s) => s.id),
      );
    }
  }
  return out;
}

/** Row counts of the float and quantised tables, and the recorded build watermark. */
function state(path: string): { float: number; quant: number; mark: string | undefined } {
  const db = openDatabase(path);
  try {
    const count = (table: string): number =>
      (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const mark = db.prepare("SELECT value FROM meta WHERE key = 'vector_index_build'").get() as
      | { value: string }
      | undefined;
    return { float: count('memories_vec'), quant: count('memories_vec_quant'), mark: mark?.value };
  } finally {
    db.close();
  }
}

/**
 * What a build stopped after its step through the second float chunk leaves (another process's, or this file's
 * own): the quantised copies of the first two chunks only (agent a's rows), and the watermark at chunk 2.
 */
function stopAfterChunk2(path: string): void {
  const raw = openDatabase(path);
  try {
    raw
      .prepare(
        'DELETE FROM memories_vec_quant WHERE rowid IN (SELECT rowid FROM memories_vec_rowids WHERE chunk_id > 2)',
      )
      .run();
    raw.prepare("INSERT INTO meta(key, value) VALUES ('vector_index_build', '2')").run();
  } finally {
    raw.close();
  }
}

/** A fully built file: every agent's rows, written through an `int8` store. */
async function built(path: string): Promise<{ id: string; similarity: number }[][]> {
  const store = openStore(path);
  for (const [agent] of AGENTS) {
    const rows = ROWS.get(agent) as Float32Array[];
    await store.insertMemories(
      rows.map((vector, i) => ({
        id: `${agent}${i}`,
        agentId: agent,
        kind: 'fact' as const,
        content: `n ${i}`,
        vector,
      })),
    );
  }
  const results = await searchAll(store);
  closeAll();
  return results;
}

describe('the quantised table build', () => {
  it('a build stopped part-way is finished by the next open, with the results of a full build', async () => {
    const path = join(dir, 'stopped.db');
    const full = await built(path);
    expect(state(path)).toEqual({ float: 3700, quant: 3700, mark: undefined });
    // What a build stopped after its step through the second chunk leaves: the quantised copies of the first
    // two chunks (agent a's rows), the watermark at chunk 2, nothing of agents b and c.
    stopAfterChunk2(path);
    expect(state(path)).toEqual({ float: 3700, quant: 1500, mark: '2' });

    // A read-only open cannot finish it: it keeps the recorded setting and searches exactly, so agents b and c
    // (absent from the half-built table) are found.
    const reader = openStore(path, 'read');
    expect(reader.vectorIndex.quantization).toBe('int8');
    const exact = exactIds();
    expect((await searchAll(reader)).map((hits) => hits.map((h) => h.id))).toEqual(exact);
    closeAll();
    expect(state(path).mark).toBe('2');

    // A writable open finishes it: the same table, the same answers as the full build.
    const store = openStore(path);
    expect(await searchAll(store)).toEqual(full);
    closeAll();
    expect(state(path)).toEqual({ float: 3700, quant: 3700, mark: undefined });
  });

  it('a step skips vectors that already have their quantised copy', async () => {
    const path = join(dir, 'again.db');
    const full = await built(path);
    // A build recorded as not started over a table that is already complete (another process got there, or
    // the store wrote copies while the build was pending): finishing writes nothing twice.
    const raw = openDatabase(path);
    try {
      raw.prepare("INSERT INTO meta(key, value) VALUES ('vector_index_build', '0')").run();
    } finally {
      raw.close();
    }
    const store = openStore(path);
    expect(await searchAll(store)).toEqual(full);
    closeAll();
    expect(state(path)).toEqual({ float: 3700, quant: 3700, mark: undefined });
  });

  it('a store already open searches exactly while another process rebuilds the quantised table', async () => {
    const path = join(dir, 'shared.db');
    const full = await built(path);
    const store = openStore(path);
    expect(await searchAll(store)).toEqual(full);
    // Another process's rebuild, stopped after its step through the second chunk: a new table holding only
    // agent a's copies, and the watermark. This store's own view (opened with a complete table) is unchanged.
    stopAfterChunk2(path);
    // Agents b and c are missing from the half-built table; the file's watermark sends every k-NN to the
    // float index, so they are found, by the coarse pass's SQL (its guard on the pending build).
    const coarse = knnPlanTestHook.quantised;
    expect((await searchAll(store)).map((hits) => hits.map((h) => h.id))).toEqual(exactIds());
    const agentC = await store.searchVector({ agentId: 'c', vector: QUERIES[0] as Float32Array, k: 10 });
    expect(agentC).toHaveLength(10);
    expect(knnPlanTestHook.quantised - coarse).toBe(AGENTS.length * QUERIES.length + 1);
    closeAll();
    // The next writable open finishes the build: the full build's answers again.
    expect(await searchAll(openStore(path))).toEqual(full);
  });

  it('resetVectorIndex builds in steps and leaves no watermark', async () => {
    const path = join(dir, 'reset.db');
    const full = await built(path);
    const store = openStore(path);
    expect(await store.resetVectorIndex({ quantization: 'int8' })).toEqual({ indexed: 3700 });
    expect(await searchAll(store)).toEqual(full);
    closeAll();
    expect(state(path)).toEqual({ float: 3700, quant: 3700, mark: undefined });
  });
});

describe('the quantised table build reports its progress', () => {
  /**
   * A writable `int8` store of `path` whose `onIndexProgress` keeps each report, then returns what `then` returns
   * for it (a throw or a rejected promise reaches the store as a failing callback's would).
   */
  function openReporting(
    path: string,
    reports: VectorIndexProgress[],
    then: (p: VectorIndexProgress) => void = () => undefined,
  ): SqliteMemoryStore {
    const store = createSqliteMemoryStore({
      path,
      embedding: PROFILE,
      vectorIndex: { quantization: 'int8' },
      onIndexProgress: (p) => {
        reports.push(p);
        return then(p);
      },
    });
    open.push(store);
    return store;
  }
  const steps = (reports: readonly VectorIndexProgress[]): number[][] =>
    reports.map((r) => [r.step, r.done, r.total]);

  it('resetVectorIndex reports after each step, counts only, rising to the total', async () => {
    const path = join(dir, 'progress.db');
    const full = await built(path);
    // One vec0 chunk (1,024 vectors) per step: the five chunks of agents a (2), b (2) and c (1).
    QUANT_BUILD_STEP.bytes = 1024 * DIMS * 4;
    const reports: VectorIndexProgress[] = [];
    const store = openReporting(path, reports);
    // Opening a complete file builds nothing and reports nothing.
    expect(reports).toEqual([]);
    expect(await store.resetVectorIndex({ quantization: 'int8' })).toEqual({ indexed: 3700 });
    expect(steps(reports)).toEqual([
      [0, 0, 3700],
      [1, 1024, 3700],
      [2, 1500, 3700],
      [3, 2524, 3700],
      [4, 3000, 3700],
      [5, 3700, 3700],
      [6, 3700, 3700],
    ]);
    for (const r of reports) {
      expect(Object.keys(r).sort()).toEqual(['done', 'phase', 'quantization', 'step', 'total']);
      expect(r).toMatchObject({ phase: 'vectorIndex', quantization: 'int8' });
    }
    expect(await searchAll(store)).toEqual(full);
  });

  it('a build another process abandons (a reset to another kind) never reports itself complete', async () => {
    const path = join(dir, 'abandoned.db');
    await built(path);
    QUANT_BUILD_STEP.bytes = 1024 * DIMS * 4;
    const reports: VectorIndexProgress[] = [];
    // An async callback: its rejections must not surface as unhandled (vitest fails the run on one).
    const store = openReporting(path, reports, async (p) => {
      // Between the first and the second step, another process records another quantisation.
      if (p.step === 1) {
        const raw = openDatabase(path);
        try {
          raw.prepare("UPDATE meta SET value = 'bit' WHERE key = 'vector_index'").run();
        } finally {
          raw.close();
        }
      }
      throw new Error('the progress display failed');
    });
    await store.resetVectorIndex({ quantization: 'int8' });
    // The second step finds the other kind and stops: its report repeats how far the build got, not the total.
    expect(steps(reports)).toEqual([
      [0, 0, 3700],
      [1, 1024, 3700],
      [2, 1024, 3700],
    ]);
    // The build is not done: the file keeps its watermark, so every k-NN reads the float index. This store named
    // int8 and the file now records bit: it refuses to search (as opening it with int8 would); a store that
    // adopts the file's setting searches, and reads the float index.
    expect(state(path).mark).toBeDefined();
    await expect(searchAll(store)).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_INDEX_MISMATCH' });
    const adopting = createSqliteMemoryStore({ path, access: 'read' });
    open.push(adopting);
    expect(adopting.vectorIndex.quantization).toBe('bit');
    expect((await searchAll(adopting)).map((hits) => hits.map((h) => h.id))).toEqual(exactIds());
  });

  it('an open that finishes a stopped build reports from what was done; a throwing callback changes nothing', async () => {
    const path = join(dir, 'resume.db');
    const full = await built(path);
    stopAfterChunk2(path);
    QUANT_BUILD_STEP.bytes = 1024 * DIMS * 4;
    const reports: VectorIndexProgress[] = [];
    const store = openReporting(path, reports, () => {
      throw new Error('the progress display failed');
    });
    // Agent a's 1,500 copies were there; chunks 3, 4 and 5, then the step that finds no more.
    expect(steps(reports)).toEqual([
      [0, 1500, 3700],
      [1, 2524, 3700],
      [2, 3000, 3700],
      [3, 3700, 3700],
      [4, 3700, 3700],
    ]);
    expect(await searchAll(store)).toEqual(full);
    closeAll();
    expect(state(path)).toEqual({ float: 3700, quant: 3700, mark: undefined });
  });
});
