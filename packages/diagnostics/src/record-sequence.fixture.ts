/**
 * A fixed, varied sequence of retrieval records and the snapshots taken along it, for the golden test of the
 * record path (`record-sequence.test.ts`). It takes the collector factory as an argument and imports nothing
 * of this package, so the same sequence can be fed to another build of the collector to produce the golden
 * file. Test-only: excluded from the build.
 *
 * The sequence covers every purpose, outcome, degradation cause, arm, stage and candidate key; invalid
 * purposes, outcomes, agent ids, causes, arms, samples (negative, NaN, infinite, non-number) and containers
 * (non-array degradations and arms, missing or null latencies and candidates); getters that throw midway;
 * a clock that returns NaN; 100 agents against 64 slots (LRU eviction), hot agents touched between
 * evictions, agents idle past the TTL (expired on touch, by a snapshot's sweep and by `cleanup`), and rings
 * that wrap. Generated from a seeded PRNG: the same sequence on every run.
 */

import {
  CANDIDATE_ARMS,
  RETRIEVAL_ARMS,
  RETRIEVAL_OUTCOMES,
  RETRIEVAL_PURPOSES,
} from '@engram/contracts/enums';
import type { RetrievalExecution } from '@engram/contracts/observers';
import { mulberry32 } from '@engram/test-support/prng';
import type { DiagnosticsCollector, DiagnosticsCollectorConfig } from './collector.js';

// The causes and stages the golden file was made with: the sequence draws from these, so members added to
// the enums later (the rerank stage and its causes) do not change it; they appear in the snapshots with zero
// counts and empty distributions, and `collector.test.ts` records them.
const GOLDEN_CAUSES = [
  'vectorCold',
  'embeddingTimeout',
  'embeddingError',
  'embeddingCircuitOpen',
  'storeUnusable',
  'storeTimeout',
  'storeError',
  'revisionChanged',
  'ftsUnavailable',
  'candidateBudgetExhausted',
  'unknown',
] as const;
const GOLDEN_STAGES = [
  'keyword',
  'queryEmbedding',
  'vector',
  'authoritativeRevalidation',
  'assembly',
  'total',
] as const;

/** The factory under test: `createDiagnosticsCollector` of one build. */
export type CollectorFactory = (config: DiagnosticsCollectorConfig) => DiagnosticsCollector;

const AGENTS = 100;
const RECORDS = 6_000;
const TTL_MS = 600_000;
const START = 1_700_000_000_000;

/** One sample: mostly a plain latency or count, sometimes a value the ring must refuse or the recorder drop. */
function sample(random: () => number, scale: number): unknown {
  const r = random();
  if (r < 0.02) return -1;
  if (r < 0.03) return Number.NaN;
  if (r < 0.04) return Number.POSITIVE_INFINITY;
  if (r < 0.05) return '5';
  if (r < 0.06) return null;
  if (r < 0.08) return 0;
  return Math.round(random() * scale * 1000) / 1000;
}

function pick<T>(random: () => number, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)] as T;
}

function agentIdFor(random: () => number): unknown {
  const r = random();
  if (r < 0.01) return '';
  if (r < 0.015) return 'bad\u0001id';
  if (r < 0.02) return 'x'.repeat(300);
  if (r < 0.025) return 42;
  // Skewed: a few hot agents survive the evictions, the long tail churns through the 64 slots.
  const hot = random() < 0.35;
  const index = hot ? Math.floor(random() * 6) : Math.floor(random() * AGENTS);
  return `agent-${String(index).padStart(3, '0')}`;
}

function execution(random: () => number, now: number): Record<string, unknown> {
  const r = random();
  const purpose = r < 0.01 ? 'bogus' : r < 0.015 ? undefined : pick(random, RETRIEVAL_PURPOSES);
  const o = random();
  const outcome = o < 0.01 ? 'unknownOutcome' : o < 0.5 ? 'completed' : pick(random, RETRIEVAL_OUTCOMES);

  const d = random();
  let degradations: unknown;
  if (d < 0.02) degradations = undefined;
  else if (d < 0.03) degradations = 'vectorCold';
  else if (d < 0.55) degradations = [];
  else {
    const list: unknown[] = [];
    const n = 1 + Math.floor(random() * 4);
    for (let i = 0; i < n; i += 1) list.push(random() < 0.05 ? 'notACause' : pick(random, GOLDEN_CAUSES));
    if (random() < 0.2 && list.length > 0) list.push(list[0]);
    degradations = list;
  }

  const a = random();
  let arms: unknown;
  if (a < 0.1) arms = undefined;
  else if (a < 0.12) arms = 'lexical';
  else if (a < 0.2) arms = [];
  else if (a < 0.23) arms = ['lexical', 'bogusArm', 'lexical'];
  else if (a < 0.5) arms = [pick(random, RETRIEVAL_ARMS)];
  else arms = ['lexical', 'vector', ...(random() < 0.1 ? ['vector'] : [])];

  const l = random();
  let latencies: unknown;
  if (l < 0.03) latencies = undefined;
  else if (l < 0.04) latencies = null;
  else {
    const record: Record<string, unknown> = {};
    for (const stage of GOLDEN_STAGES) {
      if (stage === 'total' ? random() < 0.95 : random() < 0.7) record[stage] = sample(random, 50);
    }
    latencies = record;
  }

  const c = random();
  let candidates: unknown;
  if (c < 0.05) candidates = undefined;
  else if (c < 0.06) candidates = null;
  else {
    const record: Record<string, unknown> = {};
    for (const key of CANDIDATE_ARMS) if (random() < 0.8) record[key] = sample(random, 200);
    candidates = record;
  }

  return {
    purpose,
    agentId: agentIdFor(random),
    startedAt: now,
    latencies,
    candidates,
    outcome,
    degradations,
    arms,
  };
}

/** Makes one of the record's fields a getter that throws, after some of the record has been counted. */
function throwingAt(record: Record<string, unknown>, key: string): Record<string, unknown> {
  const copy = { ...record };
  Object.defineProperty(copy, key, {
    enumerable: true,
    get(): never {
      throw new Error('hostile getter');
    },
  });
  return copy;
}

function hostile(random: () => number, record: Record<string, unknown>): Record<string, unknown> {
  const r = random();
  if (r < 0.25) return throwingAt(record, 'arms');
  if (r < 0.5) return throwingAt(record, 'candidates');
  const latencies = record.latencies;
  if (r < 0.75 && typeof latencies === 'object' && latencies !== null) {
    return { ...record, latencies: throwingAt(latencies as Record<string, unknown>, 'vector') };
  }
  return throwingAt(record, 'latencies');
}

/** A checkpoint of the sequence: what the reading calls returned, as JSON-ready values. */
export interface SequenceCheckpoint {
  readonly after: number;
  readonly merged: unknown;
  readonly agents: readonly string[];
}

/** What the sequence observed: checkpoints, `cleanup` results and the final snapshots. */
export interface SequenceResult {
  readonly checkpoints: readonly SequenceCheckpoint[];
  readonly cleanups: readonly number[];
  /** One hot agent's snapshot at the end. */
  readonly hotAgent: unknown;
  /** `snapshotAll` at the end, taken once the agents not seen in the last records have expired. */
  readonly all: unknown;
  /** `snapshotAll` of a three-slot collector. */
  readonly small: unknown;
}

/** Feeds the sequence to collectors made by `create` and returns every snapshot taken along it. */
export function runRecordSequence(create: CollectorFactory): SequenceResult {
  const random = mulberry32(0x5eed13);
  let now = START;
  let nanClock = false;
  const collector = create({
    agentTtlMs: TTL_MS,
    sampleCapacity: 16,
    now: () => (nanClock ? Number.NaN : now),
  });
  const observer = collector.retrievalObserver;
  const checkpoints: SequenceCheckpoint[] = [];
  const cleanups: number[] = [];
  let keepFrom = now;
  for (let i = 1; i <= RECORDS; i += 1) {
    now += 1 + Math.floor(random() * 50);
    // Now and then a long pause: agents idle past the TTL expire on their next touch or sweep.
    if (i % 1_500 === 750) now += TTL_MS / 2;
    let record = execution(random, now);
    if (random() < 0.01) record = hostile(random, record);
    nanClock = i % 997 === 0;
    observer.onRetrieval(record as unknown as RetrievalExecution);
    nanClock = false;
    if (i % 1_500 === 0) {
      checkpoints.push({ after: i, merged: collector.snapshot(), agents: collector.listAgents() });
    }
    if (i % 2_000 === 1_000) {
      now += TTL_MS - 1_000;
      cleanups.push(collector.cleanup());
    }
    if (i === RECORDS - 25) keepFrom = now;
  }
  const hotAgent = collector.snapshot('agent-001');
  // Only the agents seen in the last 25 records are left for the per-agent snapshot.
  now = keepFrom + TTL_MS;
  const all = collector.snapshotAll();

  // A second collector with three slots and four samples: runs of 50 records per agent, seven agents in turn.
  const small = create({ maxAgents: 3, sampleCapacity: 4, now: () => START });
  for (let i = 0; i < 400; i += 1) {
    const record = execution(random, START);
    record.agentId = `agent-${Math.floor(i / 50) % 7}`;
    small.retrievalObserver.onRetrieval(record as unknown as RetrievalExecution);
  }
  return { checkpoints, cleanups, hotAgent, all, small: small.snapshotAll() };
}
