#!/usr/bin/env node
/**
 * Cold start of a one-shot `engram search` (README, "Cold start"). Build first: `pnpm --filter @engram/cli... build`.
 *
 *   node scripts/cold-start.mjs make <file.db>
 *     a file made with the deterministic embedder: the CLI's `remember`, then 10,000 generated rows with their
 *     vectors (same content on every run), so `engram search 'deploy rollback' --db <file.db>` has work to do.
 *   node scripts/cold-start.mjs first-result <file.db> [runs] [cli.js …]
 *     the time from spawning `node <cli.js> search 'deploy rollback' --db <file.db>` to its first byte on
 *     stdout, median and range over `runs` (default 20) per CLI; several CLIs (e.g. another build's) alternate.
 *
 * The process's whole wall and CPU time is hyperfine's: see the README's command.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'packages/cli/dist/cli.js');
const ROWS = 10_000;
const BATCH = 500;
const WORDS = (
  'deploy rollback pipeline service health check database migration cache queue worker latency config secret ' +
  'token release branch merge review test build cluster node disk memory alert incident backup restore index ' +
  'query schema user session login payment invoice report metric log'
).split(' ');

/** A seeded generator (mulberry32): the same rows on every run. */
function random(seed) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function make(db) {
  if (existsSync(db)) throw new Error(`${db} exists: pass a new file`);
  execFileSync(
    process.execPath,
    [CLI, 'remember', 'the deploy pipeline rolls back on a failed health check', '--db', db],
    { env: { ...process.env, ENGRAM_EMBEDDER: 'deterministic' }, stdio: 'ignore' },
  );
  const dist = (pkg) => pathToFileURL(join(ROOT, 'packages', pkg, 'dist/index.js')).href;
  const { createSqliteMemoryStore } = await import(dist('store-sqlite'));
  const { createDeterministicEmbedder } = await import(dist('embedder-deterministic'));
  const embedder = createDeterministicEmbedder();
  const store = createSqliteMemoryStore({ path: db });
  const next = random(12345);
  for (let from = 0; from < ROWS; from += BATCH) {
    const contents = [];
    for (let i = from; i < from + BATCH; i += 1) {
      const words = Array.from(
        { length: 8 + Math.floor(next() * 12) },
        () => WORDS[Math.floor(next() * WORDS.length)],
      );
      contents.push(`note ${i}: ${words.join(' ')}.`);
    }
    const vectors = await embedder.embed(contents);
    await store.insertMemories(
      contents.map((content, i) => ({ agentId: 'default', kind: 'fact', content, vector: vectors[i] })),
    );
  }
  await store.close();
  process.stdout.write(`${db}: 1 + ${ROWS} rows\n`);
}

function firstByte(cli, db) {
  return new Promise((done, fail) => {
    const start = process.hrtime.bigint();
    let first = null;
    const child = spawn(process.execPath, [cli, 'search', 'deploy rollback', '--db', db], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.on('data', () => {
      first ??= Number(process.hrtime.bigint() - start) / 1e6;
    });
    child.on('error', fail);
    child.on('close', (code) =>
      code === 0 && first !== null ? done(first) : fail(new Error(`search exited ${code}`)),
    );
  });
}

async function firstResult(db, runs, clis) {
  const times = new Map(clis.map((cli) => [cli, []]));
  for (let run = 0; run < runs; run += 1) {
    // Alternate which CLI goes first.
    for (const cli of run % 2 === 0 ? clis : [...clis].reverse())
      times.get(cli).push(await firstByte(cli, db));
  }
  for (const [cli, list] of times) {
    const sorted = [...list].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    process.stdout.write(
      `${cli}: first result median ${median.toFixed(0)} ms (min ${sorted[0].toFixed(0)}, max ${sorted.at(-1).toFixed(0)}, ${runs} runs)\n`,
    );
  }
}

const [mode, db, ...rest] = process.argv.slice(2);
if (mode === 'make' && db !== undefined) await make(resolve(db));
else if (mode === 'first-result' && db !== undefined) {
  const runs = rest[0] === undefined ? 20 : Number(rest[0]);
  await firstResult(resolve(db), runs, rest.length > 1 ? rest.slice(1).map((p) => resolve(p)) : [CLI]);
} else {
  process.stderr.write(
    'usage: node scripts/cold-start.mjs make <file.db> | first-result <file.db> [runs] [cli.js …]\n',
  );
  process.exitCode = 2;
}
