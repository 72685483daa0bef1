/**
 * One worker process of the many-workers scenario (`workers.ts`, which forks this module): it opens the shared
 * database through the composition root (`openEngine` of `@engram/memory/compose`, the deterministic embedder
 * behind a counting wrapper), says `ready`, waits for `go`, runs its fixed mix of operations — writes left
 * pending, hybrid searches, its own embedding drain, maintenance pass attempts — then a last drain, and answers
 * with its timings and what it counted: the rows it wrote, the rows its embedder was given, the maintenance
 * leases it held (from the moment a claim succeeded to the moment it was given back) and the store conflicts
 * it retried. Never content in what it reports: row tags (`w1n17`), ids, counts and error codes.
 */
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import type { EmbedderPort, Engine } from '@engram/memory/compose';
import { openEngine } from '@engram/memory/compose';
import {
  type HeldLease,
  ROW_TAG,
  type WorkerFailure,
  type WorkerResult,
  type WorkerStart,
  workerAgent,
  workerRowText,
} from './workers-protocol.js';
import { benchQueries } from './workload.js';

const RETRYABLE = new Set(['ENGRAM_STORE_BUSY', 'ENGRAM_STORE_CONFLICT', 'ENGRAM_STORE_REVISION_CONFLICT']);
const MAX_RETRIES = 20;

const nowNs = (): string => process.hrtime.bigint().toString();

function codeOf(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code)) return code;
  }
  return 'UNKNOWN';
}

/** The deterministic embedder, recording the tag of every written row's text it is given. */
function countingEmbedder(embedded: string[]): EmbedderPort {
  const inner = createDeterministicEmbedder();
  return {
    profile: inner.profile,
    embed(texts, options) {
      for (const text of texts) {
        const tag = ROW_TAG.exec(text)?.[1];
        if (tag !== undefined) embedded.push(tag);
      }
      return inner.embed(texts, options);
    },
  };
}

type LeaseMethods = Pick<NonNullable<Engine['store']>, 'claimMaintenance' | 'releaseMaintenance'>;

/**
 * Records each maintenance lease the engine's store takes: from the first claim that succeeded (renewals of a
 * held lease are not new leases) to the release, both taken inside the hold, so two recorded leases of one agent
 * that overlap in time overlapped in the store too.
 */
function recordLeases(engine: Engine, leases: HeldLease[]): void {
  const store = engine.store as LeaseMethods;
  const claim = store.claimMaintenance?.bind(engine.store);
  const release = store.releaseMaintenance?.bind(engine.store);
  if (claim === undefined || release === undefined) return;
  const held = new Map<string, string>();
  store.claimMaintenance = async (agentId, options) => {
    const answer = await claim(agentId, options);
    if (answer.claimed && !held.has(agentId)) held.set(agentId, nowNs());
    if (!answer.claimed) held.delete(agentId);
    return answer;
  };
  store.releaseMaintenance = async (agentId, options) => {
    const start = held.get(agentId);
    if (start !== undefined) {
      leases.push({ agentId, start, end: nowNs() });
      held.delete(agentId);
    }
    await release(agentId, options);
  };
}

async function run(start: WorkerStart, go: Promise<void>): Promise<WorkerResult> {
  const embedded: string[] = [];
  const engine = await openEngine({ path: start.path, embedder: countingEmbedder(embedded) });
  const leases: HeldLease[] = [];
  recordLeases(engine, leases);
  const conflicts: Record<string, number> = {};
  const retrying = async <T>(op: () => Promise<T>): Promise<T> => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await op();
      } catch (error) {
        const code = codeOf(error);
        if (!RETRYABLE.has(code) || attempt >= MAX_RETRIES) throw error;
        conflicts[code] = (conflicts[code] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 1 + attempt * 2));
      }
    }
  };
  const queries = benchQueries(0, start.agents * start.seedRows, start.ops, start.worker + 1);
  const writeMs: number[] = [];
  const searchMs: number[] = [];
  const written: [string, string, string][] = [];
  let drains = 0;
  let staleCommits = 0;
  let ran = 0;
  let skipped = 0;
  let k = 0;
  let cpuStart = process.cpuUsage();
  let cpuMs = 0;
  let writingMs = 0;
  const drain = async (): Promise<void> => {
    const t = performance.now();
    const summary = await retrying(() => engine.drain());
    writingMs += performance.now() - t;
    staleCommits += summary.stale;
    drains += 1;
  };
  try {
    // The embedder and the background parts (the drain's module) load before the phase starts: the parent
    // times the phase only. Nothing is pending yet (the seed rows are embedded), so this drain embeds nothing.
    await engine.warmUp();
    await engine.drain();
    process.send?.({ type: 'ready' });
    await go;
    cpuStart = process.cpuUsage();
    for (let i = 0; i < start.ops; i += 1) {
      const slot = i % 10;
      const agentId = workerAgent((i + start.worker) % start.agents);
      if (slot === 8) {
        await drain();
      } else if (slot === 9) {
        // A maintenance pass attempt: it runs, or another worker holds the agent's lease.
        const maintained = workerAgent((Math.floor(i / 10) + start.worker) % start.agents);
        const t = performance.now();
        const result = await retrying(() => engine.maintain(maintained));
        writingMs += performance.now() - t;
        if (result.skipped === null) ran += 1;
        else skipped += 1;
      } else if (slot % 2 === 0) {
        const rows = Array.from({ length: start.rowsPerWrite }, () => {
          const text = workerRowText(start.worker, k);
          k += 1;
          return { agentId, kind: 'fact' as const, content: text, importance: 0.5 };
        });
        const t = performance.now();
        const stored = await retrying(() => engine.store.insertMemories(rows));
        writeMs.push(performance.now() - t);
        writingMs += performance.now() - t;
        for (const r of stored) {
          const tag = ROW_TAG.exec(r.content)?.[1];
          if (tag !== undefined) written.push([tag, r.agentId, r.id]);
        }
      } else {
        const q = queries[i % queries.length];
        const target = q === undefined ? 0 : Math.floor(q.target / start.seedRows);
        const t = performance.now();
        await retrying(() =>
          engine.retriever.search(workerAgent(target), q?.text ?? 'release checklist', { limit: 5 }),
        );
        searchMs.push(performance.now() - t);
      }
    }
    // The worker's last drain: every row it wrote is embedded (by it or by another worker) before it ends.
    await drain();
    const used = process.cpuUsage(cpuStart);
    cpuMs = (used.user + used.system) / 1000;
  } finally {
    await engine.close();
  }
  return {
    type: 'done',
    worker: start.worker,
    ops: start.ops,
    writeMs,
    searchMs,
    drains,
    written,
    embedded,
    maintenance: { ran, skipped, leases },
    conflicts,
    staleCommits,
    cpuMs,
    writingMs,
  };
}

if (process.send !== undefined) {
  let release: () => void = () => undefined;
  const go = new Promise<void>((r) => {
    release = r;
  });
  let worker = -1;
  process.on('message', (message: WorkerStart | { readonly type: 'go' }) => {
    if (message.type === 'go') {
      release();
      return;
    }
    worker = message.worker;
    run(message, go).then(
      (result) => {
        process.send?.(result, () => process.disconnect());
      },
      (error: unknown) => {
        const failure: WorkerFailure = { type: 'failed', worker, code: codeOf(error) };
        process.send?.(failure, () => process.disconnect());
      },
    );
  });
}
