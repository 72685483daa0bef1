/**
 * The vector worker's thread: its own read-only connection to the store's file (sqlite-vec loaded, the same
 * memory map, the same cipher and key when encrypted) answering k-NN requests with `runVectorPlan`, the code
 * the store's own connection runs. Each request is one read transaction begun when it arrives, so it sees
 * every commit made before the search began. Started and stopped by `vector-dispatch.ts`; see there.
 */

import { parentPort, workerData } from 'node:worker_threads';
import type { StatementKind } from '@engram/contracts';
import type { ChunkSpan, VectorHit } from '@engram/store/port-kit';
import { openDatabase } from '../native.js';
import { StoreContext } from './context.js';
import { runVectorPlan, type VectorPlan } from './search-vector.js';
import type { VectorIndexSetting } from './vector-quant.js';

/** What the thread is started with (posted once; the key is zero-filled as soon as the driver has it). */
export interface VectorWorkerData {
  readonly path: string;
  readonly busyTimeoutMs: number;
  readonly mmapSize: number;
  readonly vectorExtensionPath: string | undefined;
  readonly key: Uint8Array | undefined;
  /**
   * Set to 1 once the connection is open (2: it failed): read by the store's thread without the event loop,
   * which a busy caller may not give back between searches.
   */
  readonly state: SharedArrayBuffer;
}

/** A request: a plan and the vector index setting the store searches with. */
export interface VectorWorkerRequest {
  readonly id: number;
  readonly plan: VectorPlan;
  readonly index: VectorIndexSetting;
}

/**
 * A reply: the hits by column (ids, distances in a transferred buffer, the chunk spans when any hit has one)
 * and the statements run, or a failure (no detail: it never leaves the store). Columns clone in a fraction of
 * the time an object per hit takes; the store's thread builds the hits (`similarity` is `1 − distance` there,
 * as here).
 */
export type VectorWorkerReply =
  | {
      readonly id: number;
      readonly ok: true;
      readonly ids: string[];
      readonly distances: Float64Array;
      readonly chunks: (ChunkSpan | undefined)[] | null;
      readonly kinds: StatementKind[];
    }
  | { readonly id: number; readonly ok: false };

/** A reply's columns from the hits. */
function columns(hits: readonly VectorHit[]): {
  ids: string[];
  distances: Float64Array;
  chunks: (ChunkSpan | undefined)[] | null;
} {
  const ids: string[] = new Array(hits.length);
  const distances = new Float64Array(hits.length);
  let chunks: (ChunkSpan | undefined)[] | null = null;
  for (let i = 0; i < hits.length; i += 1) {
    const hit = hits[i] as VectorHit;
    ids[i] = hit.id;
    distances[i] = hit.distance;
    if (hit.chunk !== undefined) {
      chunks ??= new Array<ChunkSpan | undefined>(hits.length);
      chunks[i] = hit.chunk;
    }
  }
  return { ids, distances, chunks };
}

function start(): void {
  const port = parentPort;
  if (port === null) return;
  const data = workerData as VectorWorkerData;
  const key = data.key === undefined ? undefined : Buffer.from(data.key);
  data.key?.fill(0);
  let kinds: StatementKind[] = [];
  let ctx: StoreContext;
  try {
    const db = openDatabase(data.path, {
      busyTimeoutMs: data.busyTimeoutMs,
      readonly: true,
      ...(data.vectorExtensionPath === undefined ? {} : { vectorExtensionPath: data.vectorExtensionPath }),
      ...(key === undefined ? {} : { encryption: { key, cipher: 'sqlcipher' as const } }),
    });
    if (data.mmapSize > 0) db.exec(`PRAGMA mmap_size = ${data.mmapSize}`);
    ctx = new StoreContext({
      db,
      observer: { onStatement: (kind) => kinds.push(kind) },
      now: Date.now,
      idFactory: () => '',
      limits: { maxContentLength: 1 },
      vectorKey: '',
      encrypted: key !== undefined,
      access: 'read',
      busyTimeoutMs: data.busyTimeoutMs,
      mmapSize: data.mmapSize,
    });
  } catch {
    Atomics.store(new Int32Array(data.state), 0, 2);
    port.postMessage({ failed: true });
    port.close();
    return;
  } finally {
    key?.fill(0);
  }
  const begin = ctx.db.prepare('BEGIN');
  const commit = ctx.db.prepare('COMMIT');
  port.on(
    'message',
    (m: VectorWorkerRequest | { readonly close: true } | { readonly hold: SharedArrayBuffer }) => {
      if ('close' in m) {
        ctx.close();
        port.close();
        return;
      }
      if ('hold' in m) {
        // The tests' hung thread: answers nothing until the flag is set (a bounded wait in a loop, so that
        // `terminate()` still ends the thread).
        const flag = new Int32Array(m.hold);
        while (Atomics.load(flag, 0) === 0) Atomics.wait(flag, 0, 0, 20);
        return;
      }
      kinds = [];
      let reply: VectorWorkerReply;
      try {
        ctx.vectorIndex = m.index;
        begin.run();
        let hits: VectorHit[];
        try {
          hits = runVectorPlan(ctx, m.plan);
        } finally {
          commit.run();
        }
        reply = { id: m.id, ok: true, ...columns(hits), kinds };
      } catch {
        port.postMessage({ id: m.id, ok: false } satisfies VectorWorkerReply);
        return;
      }
      port.postMessage(reply, [reply.distances.buffer as ArrayBuffer]);
    },
  );
  Atomics.store(new Int32Array(data.state), 0, 1);
  port.postMessage({ ready: true });
}

start();
