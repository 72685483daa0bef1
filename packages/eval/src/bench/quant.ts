/**
 * The quantised vector search figures of a scenario: the store's vector arm (k = 10) with the exact float
 * scan, then with the `int8` and the `bit` index (each built from the stored float vectors by
 * `resetVectorIndex`), on the same query vectors: p50/p95, their ratio to the exact scan, and Recall@10 against
 * the exact scan's top 10. The exact scan is timed before and after the quantised runs and both samples are
 * pooled, so a machine that slows down during the run does not flatter one side.
 */
import type { SqliteMemoryStore } from '@engram/store-sqlite';
import { percentile } from './workload.js';

/** One quantised index's figures. */
export interface BenchQuantMode {
  /** The coarse candidates per wanted neighbour (the store's default for this quantisation). */
  readonly rescore: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  /** p50 ÷ the exact scan's p50 (lower is faster). */
  readonly p50Ratio: number;
  /** p95 ÷ the exact scan's p95: the target is ≤ 0.25 at 1536-d × 100k. */
  readonly p95Ratio: number;
  /** Mean share of the exact top 10 found (target ≥ 0.99). */
  readonly recallAt10: number;
  /** Building the quantised table from the stored float vectors. */
  readonly buildMs: number;
}

/** The vector arm alone, exact and quantised. */
export interface BenchQuantised {
  readonly k: number;
  readonly queries: number;
  readonly exactP50Ms: number;
  readonly exactP95Ms: number;
  readonly int8: BenchQuantMode;
  readonly bit: BenchQuantMode;
}

/** One query of the vector arm: the agent and its query vector. */
export interface QuantQuery {
  readonly agentId: string;
  readonly vector: Float32Array;
}

const K = 10;
const WARMUP = 5;

function elapsedMs(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function timed(
  store: SqliteMemoryStore,
  queries: readonly QuantQuery[],
): Promise<{ ms: number[]; ids: string[][] }> {
  for (const q of queries.slice(0, WARMUP)) await store.searchVector({ ...q, k: K });
  const ms: number[] = [];
  const ids: string[][] = [];
  for (const q of queries) {
    const t = process.hrtime.bigint();
    const hits = await store.searchVector({ ...q, k: K });
    ms.push(elapsedMs(t));
    ids.push(hits.map((h) => h.id));
  }
  return { ms, ids };
}

/**
 * Measures the vector arm exact, then `int8`, then `bit`, then exact again, and leaves the store as it found it
 * (no quantised index). The store must have been opened without quantisation.
 */
export async function measureQuantised(
  store: SqliteMemoryStore,
  queries: readonly QuantQuery[],
  log: (line: string) => void,
): Promise<BenchQuantised> {
  const before = await timed(store, queries);
  const modes: Partial<
    Record<'int8' | 'bit', { run: { ms: number[]; ids: string[][] }; buildMs: number; rescore: number }>
  > = {};
  log(`  vector arm alone: ${queries.length} queries exact, then int8, then bit, then exact again`);
  for (const quantization of ['int8', 'bit'] as const) {
    log(`  quantised index ${quantization}: building from the stored float vectors`);
    const t = process.hrtime.bigint();
    const { indexed } = await store.resetVectorIndex({ quantization });
    const buildMs = elapsedMs(t);
    log(`  quantised index ${quantization}: ${indexed} vectors in ${(buildMs / 1000).toFixed(1)} s`);
    modes[quantization] = {
      run: await timed(store, queries),
      buildMs,
      rescore: store.vectorIndex.rescore,
    };
  }
  await store.resetVectorIndex({ quantization: 'none' });
  const after = await timed(store, queries);
  const exactMs = [...before.ms, ...after.ms];
  const exactP50 = percentile(exactMs, 0.5);
  const exactP95 = percentile(exactMs, 0.95);
  const figures = (quantization: 'int8' | 'bit'): BenchQuantMode => {
    const m = modes[quantization];
    if (m === undefined) throw new Error('a quantised run is missing');
    let found = 0;
    for (let i = 0; i < queries.length; i += 1) {
      const exact = new Set(before.ids[i]);
      found += (m.run.ids[i] ?? []).filter((id) => exact.has(id)).length / Math.max(1, exact.size);
    }
    const p50 = percentile(m.run.ms, 0.5);
    const p95 = percentile(m.run.ms, 0.95);
    return {
      rescore: m.rescore,
      p50Ms: p50,
      p95Ms: p95,
      p50Ratio: p50 / exactP50,
      p95Ratio: p95 / exactP95,
      recallAt10: found / Math.max(1, queries.length),
      buildMs: m.buildMs,
    };
  };
  return {
    k: K,
    queries: queries.length,
    exactP50Ms: exactP50,
    exactP95Ms: exactP95,
    int8: figures('int8'),
    bit: figures('bit'),
  };
}

/** The report lines of the quantised figures, one per scenario that has them. */
export function formatQuantLines(
  rows: readonly (readonly [string, BenchQuantised | undefined])[],
): readonly string[] {
  const lines: string[] = [];
  const f = (x: number, d: number): string => (Number.isFinite(x) ? x.toFixed(d) : '—');
  for (const [name, q] of rows) {
    if (q === undefined) continue;
    const mode = (label: string, m: BenchQuantMode): string =>
      `${label} (rescore ${m.rescore}) ${f(m.p50Ms, 2)} / ${f(m.p95Ms, 2)} ms = ${f(m.p50Ratio, 2)}× / ${f(m.p95Ratio, 2)}×, R@10 ${f(m.recallAt10, 3)}, built in ${f(m.buildMs / 1000, 1)} s`;
    lines.push(
      `${name}: exact ${f(q.exactP50Ms, 2)} / ${f(q.exactP95Ms, 2)} ms; ${mode('int8', q.int8)}; ${mode('bit', q.bit)}`,
    );
  }
  return lines.length === 0
    ? []
    : [
        '',
        `vector arm alone, k = 10, p50 / p95 (ratio to the exact float scan), Recall@10 against it:`,
        ...lines,
      ];
}
