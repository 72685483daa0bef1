// Measures the recall of the HNSW index against exact search on the test server:
// `node dist/testing/recall.js <url> [rows] [dims] [agents]` prints recall@10 overall and for the smallest agent.
// The database is emptied first (a scratch database only).
import { resetTestPostgres } from '@engram/test-support';
import { createPostgresMemoryStore } from '../store.js';

const [url, rowsArg, dimsArg, agentsArg] = process.argv.slice(2);
if (url === undefined) throw new Error('usage: recall <url> [rows] [dims] [agents]');
const rows = Number(rowsArg ?? '5000');
const dims = Number(dimsArg ?? '128');
const agents = Number(agentsArg ?? '10');

function unit(seed: number): Float32Array {
  const v = new Float32Array(dims);
  let x = seed * 7919 + 1;
  for (let i = 0; i < dims; i += 1) {
    x = (x * 48271) % 2147483647;
    v[i] = x / 2147483647 - 0.5;
  }
  const n = Math.hypot(...v);
  return v.map((y) => y / n);
}

await resetTestPostgres(url);
const profile = { id: 'recall', dimensions: dims };
const store = await createPostgresMemoryStore({ connectionString: url, embedding: profile });
const exact = await createPostgresMemoryStore({ connectionString: url, vectorSearch: { exact: true } });
// Agent a gets a share proportional to a+1: the smallest agent holds about 2% of the rows at 10 agents.
const weights = Array.from({ length: agents }, (_, a) => a + 1);
const total = weights.reduce((s, w) => s + w, 0);
const batch = [];
let made = 0;
for (let a = 0; a < agents; a += 1) {
  const n = Math.round((rows * (weights[a] ?? 1)) / total);
  for (let i = 0; i < n; i += 1) {
    batch.push({
      agentId: `agent-${a}`,
      kind: 'fact' as const,
      content: `row ${a} ${i}`,
      vector: unit(made),
    });
    made += 1;
    if (batch.length === 500) await store.insertMemories(batch.splice(0));
  }
}
if (batch.length > 0) await store.insertMemories(batch);
const measure = async (agentId: string, queries: number): Promise<number> => {
  let hit = 0;
  for (let q = 0; q < queries; q += 1) {
    const query = { agentId, vector: unit(1_000_000 + q), k: 10 };
    const approx = new Set((await store.searchVector(query)).map((h) => h.id));
    const truth = await exact.searchVector(query);
    for (const h of truth) if (approx.has(h.id)) hit += 1;
  }
  return hit / (queries * 10);
};
const largest = await measure(`agent-${agents - 1}`, 50);
const smallest = await measure('agent-0', 50);
process.stdout.write(
  `rows ${made}, dims ${dims}, agents ${agents}: recall@10 largest agent ${largest.toFixed(3)}, smallest agent ${smallest.toFixed(3)}\n`,
);
await store.close();
await exact.close();
