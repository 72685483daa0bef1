/** Which scenarios a `--size` runs, and how many agents Orama can index within the heap the process has. */
import type { BenchScenarioName } from './report.js';

/** One scenario of a run: its agents, rows per agent and vector width. */
export interface BenchPlan {
  readonly name: BenchScenarioName;
  readonly agents: number;
  readonly rowsPerAgent: number;
  readonly dimensions: number;
}

/**
 * The scenarios of `--size <size>`: one agent with min(size, 10,000) rows; one agent with `size` rows (from
 * 100,000); 100 agents × min(size / 10, 10,000) rows at 128-d and at 1536-d (so `--size 100000` runs the
 * 100 × 10k = 1M-row file at both widths, and the default `--size 10000` 100 × 1k); one agent with `size` rows
 * at 384-d and at 1536-d.
 */
export function benchPlans(size: number): BenchPlan[] {
  const perAgent = Math.max(1, Math.min(Math.floor(size / 10), 10_000));
  const plans: BenchPlan[] = [
    { name: 'oneAgent10k', agents: 1, rowsPerAgent: Math.min(size, 10_000), dimensions: 128 },
  ];
  if (size >= 100_000) plans.push({ name: 'oneAgent100k', agents: 1, rowsPerAgent: size, dimensions: 128 });
  plans.push(
    { name: 'hundredAgents', agents: 100, rowsPerAgent: perAgent, dimensions: 128 },
    { name: 'oneAgent384d', agents: 1, rowsPerAgent: size, dimensions: 384 },
    { name: 'oneAgent1536d', agents: 1, rowsPerAgent: size, dimensions: 1536 },
    { name: 'hundredAgents1536d', agents: 100, rowsPerAgent: perAgent, dimensions: 1536 },
  );
  return plans;
}

/** Agents Orama indexes at most (one in-memory database per agent). */
export const ORAMA_MAX_AGENTS = 20;

/**
 * Orama's heap per indexed row at `dimensions`, from the benchmark's own `heapBytesPerRow`: about 4.5 KB at
 * 128-d (one agent, 100k rows) and 22.7 KB at 1536-d (100 agents × 1k); the documents keep their vectors as
 * JavaScript arrays of doubles, so it grows with the width.
 */
export function oramaHeapBytesPerRow(dimensions: number): number {
  return 3_000 + 13 * dimensions;
}

/**
 * How many agents Orama may index: at most `ORAMA_MAX_AGENTS`, and only as many as fit in half the heap still
 * free (`heapFreeBytes`: the heap limit less what is in use), so a large scenario in a process with a small
 * heap measures fewer agents instead of running out of memory. At least one.
 */
export function oramaAgentsWithin(heapFreeBytes: number, rowsPerAgent: number, dimensions: number): number {
  const perAgent = rowsPerAgent * oramaHeapBytesPerRow(dimensions);
  return Math.max(1, Math.min(ORAMA_MAX_AGENTS, Math.floor(heapFreeBytes / 2 / perAgent)));
}

/**
 * `count` of `items` spread evenly over them, in order: the items at `floor(i · n / count)` for i from 0 (every
 * (n / count)-th; all of them when `count ≥ n`). Orama's agents are chosen this way, not as the first `count`:
 * agents are written in order, so the first ones are the oldest in the page cache when the queries start (in the
 * 1M-row 1536-d scenario the only ones read from disk), and a sample of them alone is no fair picture of the rest.
 */
export function spreadEvenly<T>(items: readonly T[], count: number): T[] {
  const n = items.length;
  if (count >= n) return [...items];
  const picked: T[] = [];
  for (let i = 0; i < Math.max(0, count); i += 1) picked.push(items[Math.floor((i * n) / count)] as T);
  return picked;
}
