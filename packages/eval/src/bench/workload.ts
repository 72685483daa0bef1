/**
 * The benchmark's synthetic workload: deterministic rows and queries with a known target, regenerable row by
 * row (a row's text depends only on its global index), so a million rows never sit in memory at once.
 *
 * Text is made of pseudo-words drawn with a Zipf-like law from a fixed vocabulary (a few very common words,
 * a long tail of rare ones), like real prose. A query takes two of its target row's rarest words and one
 * random word of the row, in shuffled order: both lexical and vector search can find the target, and other
 * rows sharing those words compete with it.
 */

/** Seed of the workload (fixed: the same rows and queries on every run and machine). */
export const WORKLOAD_SEED = 0xbe4c_2025;
/** Size of the pseudo-word vocabulary. */
export const VOCABULARY_SIZE = 6000;

/** A 32-bit PRNG (mulberry32) returning floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function mix(a: number, b: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 0x27d4eb2f, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  return h >>> 0;
}

const ONSETS = [
  'b',
  'k',
  'd',
  'f',
  'g',
  'h',
  'l',
  'm',
  'n',
  'p',
  'r',
  's',
  't',
  'v',
  'z',
  'br',
  'st',
  'tr',
  'pl',
  'gr',
];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou', 'ea'];
const CODAS = ['', '', 'n', 'r', 's', 'l', 'x', 'th'];

let vocabulary: readonly string[] | undefined;
let cumulative: Float64Array | undefined;

/** The fixed vocabulary, most common word first. */
export function benchVocabulary(): readonly string[] {
  if (vocabulary !== undefined) return vocabulary;
  const random = mulberry32(WORKLOAD_SEED);
  const words: string[] = [];
  const seen = new Set<string>();
  while (words.length < VOCABULARY_SIZE) {
    const syllables = 2 + Math.floor(random() * 2);
    let word = '';
    for (let s = 0; s < syllables; s += 1) {
      word += ONSETS[Math.floor(random() * ONSETS.length)];
      word += VOWELS[Math.floor(random() * VOWELS.length)];
    }
    word += CODAS[Math.floor(random() * CODAS.length)];
    if (!seen.has(word)) {
      seen.add(word);
      words.push(word);
    }
  }
  vocabulary = Object.freeze(words);
  const weights = new Float64Array(VOCABULARY_SIZE);
  let total = 0;
  for (let r = 0; r < VOCABULARY_SIZE; r += 1) {
    total += 1 / (r + 2);
    weights[r] = total;
  }
  for (let r = 0; r < VOCABULARY_SIZE; r += 1) weights[r] = (weights[r] as number) / total;
  cumulative = weights;
  return vocabulary;
}

function zipfRank(u: number): number {
  benchVocabulary();
  const c = cumulative as Float64Array;
  let lo = 0;
  let hi = c.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((c[mid] as number) < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The word ranks of row `index` (its text is those words joined by spaces). */
export function rowRanks(index: number): number[] {
  const random = mulberry32(mix(WORKLOAD_SEED, index));
  const length = 10 + Math.floor(random() * 8);
  const ranks: number[] = [];
  for (let i = 0; i < length; i += 1) ranks.push(zipfRank(random()));
  return ranks;
}

/** The text of row `index`. */
export function rowText(index: number): string {
  const words = benchVocabulary();
  return `${rowRanks(index)
    .map((r) => words[r])
    .join(' ')}.`;
}

/** A benchmark query: its text and the global index of the row it targets. */
export interface BenchQuery {
  readonly text: string;
  readonly target: number;
}

/**
 * `count` queries over the rows `[first, first + rows)`, each targeting a row drawn uniformly (seeded by
 * `salt`): two of the target's rarest distinct words and one random word of it, shuffled.
 */
export function benchQueries(first: number, rows: number, count: number, salt: number): BenchQuery[] {
  const words = benchVocabulary();
  const random = mulberry32(mix(WORKLOAD_SEED ^ 0x51ed, salt));
  const queries: BenchQuery[] = [];
  for (let q = 0; q < count; q += 1) {
    const target = first + Math.floor(random() * rows);
    const distinct = [...new Set(rowRanks(target))].sort((a, b) => b - a);
    const chosen = distinct.slice(0, 2);
    const rest = distinct.slice(2);
    if (rest.length > 0) chosen.push(rest[Math.floor(random() * rest.length)] as number);
    for (let i = chosen.length - 1; i > 0; i -= 1) {
      const j = Math.floor(random() * (i + 1));
      [chosen[i], chosen[j]] = [chosen[j] as number, chosen[i] as number];
    }
    queries.push({ text: chosen.map((r) => words[r]).join(' '), target });
  }
  return queries;
}

/** A scenario's queries: the timed ones, and one warm-up query per queried agent. */
export interface ScenarioQueries {
  /** The timed queries, agent by agent (agent 0's first), `ceil(count / agents)` per agent until `count`. */
  readonly timed: readonly BenchQuery[];
  /**
   * One untimed query per agent that has timed queries, in agent order: its first read of that agent's data
   * since ingest, run before any timed query so that no engine's timed figures include that first touch.
   * Drawn like a timed query (another seed), never the text of one of the agent's timed queries.
   */
  readonly warmUps: readonly BenchQuery[];
}

/** Seed of the warm-up queries' draws (the timed queries' salts are the agent numbers from 1). */
const WARM_UP_SEED = 0x5741_524d;
/** Attempts at a warm-up query whose text no timed query of its agent has (the draws rarely collide). */
const WARM_UP_DRAWS = 64;

/**
 * The queries of a scenario of `agents` × `rowsPerAgent` rows (agent `a` holds the rows
 * `[a · rowsPerAgent, (a + 1) · rowsPerAgent)`): `count` timed queries spread over the agents, and one warm-up
 * query per queried agent (see `ScenarioQueries`).
 */
export function scenarioQueries(agents: number, rowsPerAgent: number, count: number): ScenarioQueries {
  const timed: BenchQuery[] = [];
  const warmUps: BenchQuery[] = [];
  const perAgent = Math.ceil(count / agents);
  for (let a = 0; a < agents && timed.length < count; a += 1) {
    const first = a * rowsPerAgent;
    const own = benchQueries(first, rowsPerAgent, Math.min(perAgent, count - timed.length), a + 1);
    timed.push(...own);
    const texts = new Set(own.map((q) => q.text));
    let warmUp: BenchQuery | undefined;
    for (let draw = 0; draw < WARM_UP_DRAWS && warmUp === undefined; draw += 1) {
      const candidate = benchQueries(first, rowsPerAgent, 1, mix(WARM_UP_SEED ^ a, draw))[0] as BenchQuery;
      if (!texts.has(candidate.text)) warmUp = candidate;
    }
    // A row's whole text (10 words or more) is never a timed query's (3 words at most).
    warmUps.push(warmUp ?? { text: rowText(first).replace(/\.$/, ''), target: first });
  }
  return { timed, warmUps };
}

/** Nearest-rank percentile (`sorted[ceil(p·n) − 1]`) of unsorted samples; NaN for no samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[index] as number;
}

/**
 * Widens a 128-d unit vector to `dimensions` (a multiple of 128) without changing any cosine similarity:
 * block k of the result is the orthonormal Walsh–Hadamard transform of the input with fixed pseudo-random
 * signs (a different sign pattern per block), scaled by 1/√blocks. Each block preserves dot products, so the
 * wide vectors rank exactly as the 128-d ones, while every coordinate mixes all inputs (as in a real embedding,
 * no coordinate is a copy of another). It lets the benchmark measure 384-d and 1536-d search at real sizes
 * with the deterministic embedder.
 */
export function widenVector(vector: Float32Array, dimensions: number): Float32Array {
  const n = vector.length;
  if (n !== 128 || dimensions % n !== 0 || dimensions < n) {
    throw new Error('widenVector takes a 128-d vector and a multiple of 128');
  }
  if (dimensions === n) return vector;
  const blocks = dimensions / n;
  const out = new Float32Array(dimensions);
  const work = new Float64Array(n);
  const scale = 1 / Math.sqrt(n * blocks);
  for (let k = 0; k < blocks; k += 1) {
    const random = mulberry32(mix(WORKLOAD_SEED ^ 0x3a7d, k));
    for (let i = 0; i < n; i += 1) work[i] = random() < 0.5 ? -(vector[i] as number) : (vector[i] as number);
    for (let h = 1; h < n; h *= 2) {
      for (let i = 0; i < n; i += h * 2) {
        for (let j = i; j < i + h; j += 1) {
          const a = work[j] as number;
          const b = work[j + h] as number;
          work[j] = a + b;
          work[j + h] = a - b;
        }
      }
    }
    for (let i = 0; i < n; i += 1) out[k * n + i] = (work[i] as number) * scale;
  }
  return out;
}
