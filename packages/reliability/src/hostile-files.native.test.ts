/**
 * Hostile files through the built `engram` CLI (fast-check, seeded), as child processes: a store path that
 * holds something other than a sound Engram store.
 *
 * - Foreign files (random bytes, text, a SQLite header over garbage, another application's database, an Engram
 *   file of a newer or damaged schema version): `health`, `search`, `get` and `remember` each end in a typed
 *   error (`… (ENGRAM_…)`, exit 1), never an internal error, and the file stays byte-identical.
 * - Damaged Engram files (1–400 seeded random bit flips past the header page): every command ends in success
 *   or a typed error, never an internal error; a refused `remember` leaves the file byte-identical; when the
 *   integrity check finds the damage, `remember` is refused and `health` exits 1.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { openDatabase } from '@engram/store-sqlite/raw';
import { type ChildRun, runNode } from '@engram/test-support';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteSeed } from './harness.js';
import { damage, damageFile, foreignFile, writeForeignFile } from './hostile-file-arbitraries.js';

/** The built CLI of this repository (the CLI sits above this package's layer): `pnpm build` first. */
const CLI = fileURLToPath(new URL('../../cli/dist/cli.js', import.meta.url));
const SEED = suiteSeed(0xf11e_5eed);
const RUNS = { foreign: 12, damaged: 10 };
/** A typed failure line: the command, a message, the error code in parentheses. */
const TYPED = /^engram [a-z]+: [^\n]+ \(ENGRAM_[A-Z_]+\)\n$/;

let dir: string;
let template: Buffer;
let memoryId: string;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error('the engram CLI is not built: run pnpm build first');
  dir = mkdtempSync(join(tmpdir(), 'engram-hostile-files-'));
  console.log(`[reliability:hostile-files] suite seed ${SEED} (replay: ENGRAM_RELIABILITY_SEED=${SEED})`);
  // A populated Engram file, closed (checkpointed into the main file), the template of every damaged copy.
  const path = join(dir, 'template.db');
  const store = createSqliteMemoryStore({ path, embedding: createDeterministicEmbedder().profile });
  for (let i = 0; i < 300; i += 1) {
    const record = await store.insertMemory({
      agentId: 'default',
      kind: 'fact',
      content: `fact ${i}: the release of service ${i} listens on port ${8000 + i}. ${'Padding words. '.repeat(i % 40)}`,
      tags: [`topic:t${i % 7}`],
    });
    if (i === 150) memoryId = record.id;
  }
  store.close();
  template = readFileSync(path);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function cli(args: readonly string[]): Promise<ChildRun> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_')) env[key] = value;
  }
  return runNode(CLI, args, { cwd: dir, env: { ...env, NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' } });
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Success, or one typed line on stderr with exit 1: never usage errors, stack traces or internal errors. */
function expectTypedOrSuccess(run: ChildRun, what: string): 'ok' | string {
  if (run.code === 0) return 'ok';
  expect(run.code, what).toBe(1);
  expect(run.stderr, what).toMatch(TYPED);
  expect(run.stderr, what).not.toMatch(/unexpected error|ENGRAM_STORE_UNKNOWN|internal error|\n\s+at /);
  return /\((ENGRAM_[A-Z_]+)\)\n$/.exec(run.stderr)?.[1] ?? 'ENGRAM_?';
}

function tally(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

const commands = (path: string): string[][] => [
  ['health', '--db', path],
  ['search', 'release port', '--db', path],
  ['get', memoryId, '--db', path],
  ['remember', 'A new fact for a hostile file.', '--db', path],
];

describe('foreign files', () => {
  it('every command refuses them with a typed error and leaves them byte-identical', async () => {
    const codes = new Map<string, number>();
    const kinds = new Map<string, number>();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(foreignFile, async (file) => {
        n += 1;
        const path = join(dir, `foreign-${n}.db`);
        writeForeignFile(path, file, template);
        tally(kinds, file.kind);
        const before = sha256(path);
        for (const args of commands(path)) {
          const run = await cli(args);
          const what = `${file.kind}: ${args[0]}`;
          const code = expectTypedOrSuccess(run, what);
          expect(code, what).not.toBe('ok');
          tally(codes, code);
          expect(sha256(path), what).toBe(before);
        }
      }),
      { seed: SEED, numRuns: RUNS.foreign },
    );
    const byKind = [...kinds.entries()].map(([k, c]) => `${k} ${c}`).join(', ');
    const byCode = [...codes.entries()].map(([k, c]) => `${k} ${c}`).join(', ');
    console.log(
      `[reliability:hostile-files] foreign: ${n} files (${byKind}) × 4 commands, all refused with a typed error (${byCode}), every file byte-identical`,
    );
  }, 600_000);
});

describe('damaged files', () => {
  it('every command ends in success or a typed error; a detected damage refuses writes and fails health', async () => {
    const outcomes = new Map<string, number>();
    let n = 0;
    let detected = 0;
    await fc.assert(
      fc.asyncProperty(damage, async (d) => {
        n += 1;
        const path = join(dir, `damaged-${n}.db`);
        writeFileSync(path, damageFile(template, d));
        const raw = openDatabase(path, { loadVectorExtension: false });
        let found: boolean;
        try {
          found = JSON.stringify(raw.prepare('PRAGMA quick_check(1)').all()) !== '[{"quick_check":"ok"}]';
        } catch {
          found = true;
        } finally {
          raw.close();
        }
        if (found) detected += 1;
        for (const args of commands(path)) {
          const before = sha256(path);
          const run = await cli(args);
          const what = `${d.flips} flips (seed ${d.seed}): ${args[0]}`;
          const outcome = expectTypedOrSuccess(run, what);
          tally(outcomes, `${args[0]} ${outcome}`);
          if (args[0] === 'remember' && outcome !== 'ok') expect(sha256(path), what).toBe(before);
          if (found && args[0] === 'remember') expect(outcome, what).not.toBe('ok');
          if (found && args[0] === 'health') expect(run.code, what).toBe(1);
        }
      }),
      { seed: SEED, numRuns: RUNS.damaged },
    );
    const byOutcome = [...outcomes.entries()].map(([k, c]) => `${k} ${c}`).join(', ');
    console.log(
      `[reliability:hostile-files] damaged: ${n} files (1-400 bit flips), ${detected} detected by quick_check; outcomes: ${byOutcome}; no internal error`,
    );
  }, 600_000);
});
