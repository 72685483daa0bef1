/**
 * The embedding scenario (`--only embedding`): the offline USE-lite embedder on the caller's thread (as before
 * worker threads) and on 1, 2 and N worker threads, measured side by side in one run.
 *
 * - Throughput: the same texts embedded in calls of 64 (as the drain sends them), short sentences and long
 *   texts (chunk-sized, about 1,000 characters), each configuration in turn, round after round, so a change in
 *   the machine's load hits every configuration alike. Reported in embeddings per wall second and per CPU second
 *   (`process.cpuUsage`, which counts every thread of the process, the workers included).
 * - Drain: `memory.ingest` of short texts then `flush()` (the background drain, store writes included), per
 *   configuration.
 * - `add`: one `add` at a time (latency), and 16 concurrent `add` calls (the time until all resolve), for the
 *   caller's thread and the default worker threads; the ratio says what 16 concurrent calls cost against 16 serial.
 *
 * Ratios are to the one-worker configuration (throughput) or to 16 serial adds (`add`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUseEmbedder, createUseEmbedderPool, defaultUseThreads } from '@engram/embedder-use';
import { createMemory, type Memory } from '@engram/memory';

/** The scenario's name (`--only embedding`). */
export const EMBEDDING_SCENARIO = 'embedding';

/** One configuration's throughput on one kind of text. */
export interface BenchEmbeddingThroughput {
  /** `main` (the caller's thread) or the worker threads. */
  readonly threads: number | 'main';
  readonly texts: number;
  readonly embeddingsPerSec: number;
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  /** CPU seconds ÷ wall seconds: the cores the process kept busy (about the threads on an idle machine). */
  readonly coresUsed: number;
  readonly embeddingsPerCpuSec: number;
  /** embeddings/s ÷ the one-worker configuration's. */
  readonly ratioToOneThread: number;
}

/** The `add` figures of one configuration. */
export interface BenchEmbeddingAdd {
  readonly threads: number | 'main';
  /** Median latency of one `add` at a time. */
  readonly aloneP50Ms: number;
  /** Time until 16 concurrent `add` calls have all resolved. */
  readonly concurrent16Ms: number;
  /** concurrent16Ms ÷ (16 × aloneP50Ms): below 1, concurrent calls share batches. */
  readonly concurrentRatioToSerial: number;
}

/** The embedding scenario's report. */
export interface BenchEmbeddingReport {
  readonly cores: number;
  /** The load average (1, 5, 15 min) at the start and at the end. */
  readonly loadStart: readonly number[];
  readonly loadEnd: readonly number[];
  readonly short: readonly BenchEmbeddingThroughput[];
  readonly long: readonly BenchEmbeddingThroughput[];
  readonly drain: readonly BenchEmbeddingThroughput[];
  readonly add: readonly BenchEmbeddingAdd[];
}

/** How the scenario is run. */
export interface EmbeddingScenarioConfig {
  /** Rounds of each measurement (default 3). */
  readonly rounds?: number;
  readonly dir?: string;
  readonly log: (line: string) => void;
}

interface Embedder {
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

const SUBJECTS = [
  'The deploy pipeline',
  'Our billing service',
  'The nightly backup',
  'The search index',
  'Alice',
];
const EVENTS = [
  'failed after the cache expired',
  'was moved to the new cluster',
  'needs a review before Friday',
];
const DETAILS = [
  'so we rolled back release',
  'and the team opened ticket',
  'according to the notes of meeting',
];

/** `count` distinct sentences of 12–16 words, a typical memory. */
export function shortTexts(count: number, seed = 0): string[] {
  return Array.from({ length: count }, (_, i) => {
    const subject = SUBJECTS[i % SUBJECTS.length];
    const event = EVENTS[(i >> 1) % EVENTS.length];
    const detail = DETAILS[(i >> 2) % DETAILS.length];
    return `${subject} ${event}, ${detail} ${seed * 10_000 + 100 + i}.`;
  });
}

/** `count` distinct texts of about 1,000 characters: one chunk of a long memory each. */
export function longTexts(count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const sentences = shortTexts(14, i + 1);
    return sentences.join(' ').slice(0, 1_000);
  });
}

function cpuSeconds(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1e6;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Wall and CPU seconds of `work`. */
async function timed(work: () => Promise<void>): Promise<{ wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  await work();
  return { wall: (performance.now() - start) / 1000, cpu: cpuSeconds(cpu) };
}

/** The thread counts measured: 1, 2 and the default N (when it is more than 2), as worker threads. */
function threadCounts(): number[] {
  const n = Math.max(defaultUseThreads(), availableParallelism());
  return [...new Set([1, 2, n])].sort((a, b) => a - b);
}

function throughputRows(
  configs: readonly (number | 'main')[],
  totals: ReadonlyMap<number | 'main', { wall: number; cpu: number; texts: number }>,
): BenchEmbeddingThroughput[] {
  const one = totals.get(1);
  const oneRate = one === undefined ? Number.NaN : one.texts / one.wall;
  return configs.map((threads) => {
    const t = totals.get(threads) ?? { wall: Number.NaN, cpu: Number.NaN, texts: 0 };
    const rate = t.texts / t.wall;
    return {
      threads,
      texts: t.texts,
      embeddingsPerSec: rate,
      wallSeconds: t.wall,
      cpuSeconds: t.cpu,
      coresUsed: t.cpu / t.wall,
      embeddingsPerCpuSec: t.texts / t.cpu,
      ratioToOneThread: rate / oneRate,
    };
  });
}

/** Embeds `texts` in calls of 64 with each configuration in turn, `rounds` times. */
async function throughput(
  embedders: ReadonlyMap<number | 'main', Embedder>,
  texts: readonly string[],
  rounds: number,
): Promise<BenchEmbeddingThroughput[]> {
  const totals = new Map<number | 'main', { wall: number; cpu: number; texts: number }>();
  for (let round = 0; round < rounds; round += 1) {
    for (const [threads, embedder] of embedders) {
      const t = await timed(async () => {
        for (let i = 0; i < texts.length; i += 64) await embedder.embed(texts.slice(i, i + 64));
      });
      const sum = totals.get(threads) ?? { wall: 0, cpu: 0, texts: 0 };
      totals.set(threads, { wall: sum.wall + t.wall, cpu: sum.cpu + t.cpu, texts: sum.texts + texts.length });
    }
  }
  return throughputRows([...embedders.keys()], totals);
}

function threadsOption(threads: number | 'main'): number {
  return threads === 'main' ? 0 : threads;
}

/** `ingest` then `flush` (the background drain) for each configuration, a new file each round. */
async function drainThroughput(
  configs: readonly (number | 'main')[],
  dir: string,
  rounds: number,
): Promise<BenchEmbeddingThroughput[]> {
  const memories = new Map<number | 'main', Memory>();
  for (const threads of configs) {
    const memory = await createMemory({
      path: join(dir, `drain-${threads}.db`),
      embedder: 'use',
      threads: threadsOption(threads),
    });
    // Threads start when batches wait for them: an untimed drain starts them all, models loaded.
    await memory.ingest(shortTexts(64 * Math.max(1, threadsOption(threads)), 999).map((t) => `${t} warm-up`));
    await memory.flush();
    memories.set(threads, memory);
  }
  const totals = new Map<number | 'main', { wall: number; cpu: number; texts: number }>();
  try {
    for (let round = 0; round < rounds; round += 1) {
      const texts = shortTexts(256, round + 1);
      for (const [threads, memory] of memories) {
        const t = await timed(async () => {
          await memory.ingest(texts.map((text) => `${text} (${String(threads)})`));
          await memory.flush();
        });
        const sum = totals.get(threads) ?? { wall: 0, cpu: 0, texts: 0 };
        totals.set(threads, {
          wall: sum.wall + t.wall,
          cpu: sum.cpu + t.cpu,
          texts: sum.texts + texts.length,
        });
      }
    }
  } finally {
    for (const memory of memories.values()) await memory.close();
  }
  return throughputRows(configs, totals);
}

/** One `add` at a time, then 16 concurrent ones, for the caller's thread and the default worker threads. */
async function addLatency(dir: string, rounds: number): Promise<BenchEmbeddingAdd[]> {
  const configs: (number | 'main')[] = ['main', defaultUseThreads()];
  const memories = new Map<number | 'main', Memory>();
  for (const threads of configs) {
    const memory = await createMemory({
      path: join(dir, `add-${threads}.db`),
      embedder: 'use',
      threads: threadsOption(threads),
    });
    await memory.add('warm up the model');
    memories.set(threads, memory);
  }
  const alone = new Map<number | 'main', number[]>();
  const concurrent = new Map<number | 'main', number[]>();
  try {
    for (let round = 0; round < rounds; round += 1) {
      const texts = shortTexts(32, 100 + round);
      for (const [threads, memory] of memories) {
        const singles = alone.get(threads) ?? [];
        for (const text of texts.slice(0, 8)) {
          const start = performance.now();
          await memory.add(`${text} alone`);
          singles.push(performance.now() - start);
        }
        alone.set(threads, singles);
        const start = performance.now();
        await Promise.all(texts.slice(8, 24).map((text) => memory.add(`${text} together`)));
        concurrent.set(threads, [...(concurrent.get(threads) ?? []), performance.now() - start]);
      }
    }
  } finally {
    for (const memory of memories.values()) await memory.close();
  }
  return configs.map((threads) => {
    const aloneP50Ms = median(alone.get(threads) ?? []);
    const concurrent16Ms = median(concurrent.get(threads) ?? []);
    return {
      threads,
      aloneP50Ms,
      concurrent16Ms,
      concurrentRatioToSerial: concurrent16Ms / (16 * aloneP50Ms),
    };
  });
}

/** Runs the embedding scenario (loads the model once per configuration; about a minute on a quiet 2-core machine). */
export async function runEmbeddingScenario(config: EmbeddingScenarioConfig): Promise<BenchEmbeddingReport> {
  const rounds = config.rounds ?? 3;
  const { log } = config;
  const dir = config.dir ?? mkdtempSync(join(tmpdir(), 'engram-bench-embedding-'));
  const loadStart = loadavg();
  const configs: (number | 'main')[] = ['main', ...threadCounts()];
  const embedders = new Map<number | 'main', Embedder>();
  const pools: { close(): Promise<void> }[] = [];
  const main = createUseEmbedder();
  await main.embed(['warm up']);
  embedders.set('main', main);
  for (const threads of threadCounts()) {
    const pool = createUseEmbedderPool({ threads });
    await pool.load();
    pools.push(pool);
    embedders.set(threads, pool);
  }
  try {
    log(`[embedding] short texts, ${configs.join(' / ')} thread(s), ${rounds} round(s)`);
    const short = await throughput(embedders, shortTexts(384), rounds);
    log('[embedding] long texts (about 1,000 characters)');
    const long = await throughput(embedders, longTexts(96), rounds);
    for (const pool of pools) await pool.close();
    pools.length = 0;
    log('[embedding] drain: ingest + flush of 256 short texts');
    const drain = await drainThroughput(configs, dir, rounds);
    log('[embedding] add: alone and 16 concurrent');
    const add = await addLatency(dir, rounds);
    return { cores: availableParallelism(), loadStart, loadEnd: loadavg(), short, long, drain, add };
  } finally {
    for (const pool of pools) await pool.close();
    if (config.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

const f1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : '-');
const f2 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : '-');

/** The scenario's table lines. */
export function formatEmbeddingLines(report: BenchEmbeddingReport): string[] {
  const lines = [
    `embedding (${report.cores} cores; load ${report.loadStart.map(f1).join(' ')} → ${report.loadEnd.map(f1).join(' ')})`,
    '  kind   threads  texts  emb/s  wall s   CPU s  cores  emb/CPU-s  ×1 thread',
  ];
  for (const [kind, rows] of [
    ['short', report.short],
    ['long', report.long],
    ['drain', report.drain],
  ] as const) {
    for (const r of rows) {
      lines.push(
        `  ${kind.padEnd(6)} ${String(r.threads).padStart(7)} ${String(r.texts).padStart(6)} ${f1(r.embeddingsPerSec).padStart(6)} ${f1(r.wallSeconds).padStart(7)} ${f1(r.cpuSeconds).padStart(7)} ${f2(r.coresUsed).padStart(6)} ${f1(r.embeddingsPerCpuSec).padStart(10)} ${f2(r.ratioToOneThread).padStart(10)}`,
      );
    }
  }
  lines.push('  add    threads  alone p50 ms  16 concurrent ms  ÷ 16 serial');
  for (const a of report.add) {
    lines.push(
      `         ${String(a.threads).padStart(7)} ${f1(a.aloneP50Ms).padStart(13)} ${f1(a.concurrent16Ms).padStart(17)} ${f2(a.concurrentRatioToSerial).padStart(12)}`,
    );
  }
  return lines;
}
