// Benchmark: `pnpm --filter @engram/embedder-use bench [-- --backend cpu|wasm] [--seconds N]` (after a build).
// Prints the model load time and embeddings per second (wall clock and per CPU second) for batches of 1 and 32.
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createUseEmbedder } from './index.js';

const { values } = parseArgs({
  options: { backend: { type: 'string', default: 'wasm' }, seconds: { type: 'string', default: '10' } },
});
const backend = values.backend === 'cpu' ? 'cpu' : 'wasm';
const seconds = Math.max(1, Number(values.seconds));

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
/** 96 distinct sentences of 12–16 words, a typical memory length. */
const corpus = Array.from({ length: 96 }, (_, i) => {
  const subject = SUBJECTS[i % SUBJECTS.length];
  const event = EVENTS[i % EVENTS.length];
  const detail = DETAILS[(i >> 1) % DETAILS.length];
  return `${subject} ${event}, ${detail} ${100 + i}.`;
});

function cpuMs(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

const embedder = createUseEmbedder({ backend, maxBatchSize: 32 });
let wall = performance.now();
let cpu = process.cpuUsage();
await embedder.load();
console.log(
  `backend ${backend}: model load ${(performance.now() - wall).toFixed(0)} ms wall, ${cpuMs(cpu).toFixed(0)} ms CPU`,
);
wall = performance.now();
await embedder.embed(['warm up']);
console.log(`first embedding ${(performance.now() - wall).toFixed(0)} ms`);

for (const batchSize of [1, 32]) {
  let count = 0;
  wall = performance.now();
  cpu = process.cpuUsage();
  while (performance.now() - wall < seconds * 1000) {
    for (let i = 0; i < corpus.length; i += batchSize) {
      count += (await embedder.embed(corpus.slice(i, i + batchSize))).length;
    }
  }
  const elapsed = (performance.now() - wall) / 1000;
  const cpuSeconds = cpuMs(cpu) / 1000;
  console.log(
    `batch ${String(batchSize).padStart(2)}: ${(count / elapsed).toFixed(1)} embeddings/s wall, ` +
      `${(count / cpuSeconds).toFixed(1)} per CPU second (${count} embeddings)`,
  );
}
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} (other processes share the CPU)`,
);
