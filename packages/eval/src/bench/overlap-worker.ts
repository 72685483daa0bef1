/**
 * The worker side of `overlap.ts`: a read-only connection with the store's memory map, answering k-NN requests
 * for `(vector, agent)` with the rows and the statement's own time.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { DEFAULT_MMAP_SIZE } from '@engram/store-sqlite';
import { openDatabase } from '@engram/store-sqlite/raw';

const { path, k } = workerData as { readonly path: string; readonly k: number };
const db = openDatabase(path, { readonly: true });
db.exec(`PRAGMA mmap_size = ${DEFAULT_MMAP_SIZE}`);
const knn = db.prepare(
  `SELECT rowid, distance FROM raw_vec WHERE embedding MATCH ? AND k = ${k} AND agent_id = ?`,
);
knn.raw(true);
parentPort?.on(
  'message',
  (m: { readonly id: number; readonly vector: Float32Array; readonly agent: string }) => {
    const t = performance.now();
    const rows = knn.all(m.vector, m.agent);
    parentPort?.postMessage({ id: m.id, rows: rows.length, ms: performance.now() - t });
  },
);
parentPort?.postMessage({ ready: true });
