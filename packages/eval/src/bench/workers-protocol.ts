/**
 * What the many-workers scenario (`workers.ts`) and its worker processes (`workers-worker.ts`) share: the
 * messages between them, and the agents and row texts of the workload. Importing this runs nothing (the worker
 * module starts listening for its parent when loaded, so only a forked child imports it).
 */
import { rowText } from './workload.js';

/** What the parent sends first. */
export interface WorkerStart {
  readonly type: 'start';
  /** The SQLite file or the PostgreSQL URL. */
  readonly path: string;
  readonly worker: number;
  readonly ops: number;
  readonly agents: number;
  /** Rows each agent was seeded with (the searches target them). */
  readonly seedRows: number;
  readonly rowsPerWrite: number;
}

/** One maintenance lease this worker held: from its claim to its release (monotonic ns, one clock per machine). */
export interface HeldLease {
  readonly agentId: string;
  readonly start: string;
  readonly end: string;
}

/** What a worker answers when it is done. */
export interface WorkerResult {
  readonly type: 'done';
  readonly worker: number;
  readonly ops: number;
  readonly writeMs: readonly number[];
  readonly searchMs: readonly number[];
  readonly drains: number;
  /** Acknowledged writes: each row's tag, agent and id. */
  readonly written: readonly (readonly [tag: string, agentId: string, id: string])[];
  /** The tag of every row text this worker's embedder was given, once per time it was given. */
  readonly embedded: readonly string[];
  readonly maintenance: {
    readonly ran: number;
    readonly skipped: number;
    readonly leases: readonly HeldLease[];
  };
  /** Store errors retried (busy, conflict), by code. */
  readonly conflicts: Readonly<Record<string, number>>;
  /** Drain commits that found the row settled or changed by another writer (`stale` transitions). */
  readonly staleCommits: number;
  /** CPU time of the process (user + system, every thread) from `go` to its last drain's end, in ms. */
  readonly cpuMs: number;
  /**
   * Wall time of the operations that write (writes, drains, maintenance attempts), in ms: at most the time this
   * worker held or waited for SQLite's one write lock.
   */
  readonly writingMs: number;
}

/** What a worker answers when it failed: the error code only. */
export interface WorkerFailure {
  readonly type: 'failed';
  readonly worker: number;
  readonly code: string;
}

/** The tag that marks a written row's text: `w<worker>n<k>`. */
export const ROW_TAG: RegExp = /\b(w\d+n\d+)\b/;

/** The text of the k-th row written by a worker (the workload's row text, then the row's tag). */
export function workerRowText(worker: number, k: number): string {
  return `${rowText(1_000_000 + worker * 100_000 + k)} w${worker}n${k}`;
}

/** The agent id of agent `a`. */
export const workerAgent = (a: number): string => `agent-${a}`;
