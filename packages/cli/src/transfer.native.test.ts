/**
 * `engram export`, `engram import` and `engram maintain --dry-run` as a user runs them: the built CLI as a
 * child process, shell redirections, real SQLite files.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const DAY = 24 * 60 * 60 * 1000;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-transfer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `engram <args>` through a POSIX shell (so `<` and `>` work), offline, with the deterministic embedder. */
function engram(args: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = { NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' };
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && !k.startsWith('ENGRAM_')) env[k] ??= v;
    const child = spawn('/bin/sh', ['-c', `"${process.execPath}" "${CLI}" ${args}`], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A file with `n` old, unimportant notes of agent `old` (written long ago) and two facts of agent `coder`. */
async function seed(name: string, n: number): Promise<string> {
  const path = join(dir, name);
  const long = Date.now() - 400 * DAY;
  const store = createSqliteMemoryStore({ path, embedding: DETERMINISTIC_PROFILE, now: () => long });
  await store.insertMemories(
    Array.from({ length: n }, (_, i) => ({
      agentId: 'old',
      kind: 'semantic' as const,
      content: `an old note number ${i}`,
      importance: 0,
    })),
  );
  await store.insertMemories([
    { agentId: 'coder', kind: 'fact', content: 'The API listens on port 8080', tags: ['topic:api'] },
    { agentId: 'coder', kind: 'fact', content: 'Deploys go through the staging cluster first' },
  ]);
  await store.appendEvents('coder', 'chat', [
    { seq: 1, type: 'message', role: 'user', content: 'which port?' },
  ]);
  await store.writeSkill({
    agentId: 'coder',
    name: 'deploy',
    description: 'ship',
    content: 'run make deploy',
  });
  store.close();
  return path;
}

describe('engram export | engram import', () => {
  it('round-trips a populated file into a fresh one; exporting the copy gives the same lines; importing twice changes nothing', async () => {
    await seed('a.db', 3);
    expect((await engram('drain --db a.db')).code).toBe(0);
    const exported = await engram('export --db a.db --vectors > a.jsonl');
    expect(exported.code).toBe(0);
    expect(exported.stderr).toContain('Exported 9 records.');
    // --keep-ages: an exact copy (by default the decay clocks restart at the import).
    const imported = await engram('import --db b.db --keep-ages --json < a.jsonl');
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({
      imported: { memories: 5, events: 1, cursors: 0, skills: 1 },
      vectorsImported: 5,
    });
    expect((await engram('export --db b.db --vectors > b.jsonl')).code).toBe(0);
    expect(readFileSync(join(dir, 'b.jsonl'), 'utf8')).toBe(readFileSync(join(dir, 'a.jsonl'), 'utf8'));
    const again = await engram('import --db b.db --json < a.jsonl');
    expect(JSON.parse(again.stdout)).toMatchObject({
      imported: { memories: 0, events: 0, skills: 0 },
      unchanged: { memories: 5, events: 1, skills: 1 },
    });
    // The copy answers searches at once.
    const found = await engram('search "which port does the API use" --db b.db --agent coder');
    expect(found.stdout).toContain('The API listens on port 8080');
  });

  it('exports one agent, names the agents the file has when asked for an unknown one, and refuses a truncated stream', async () => {
    await seed('c.db', 2);
    const one = await engram('export --db c.db --agent coder > coder.jsonl');
    expect(one.code).toBe(0);
    const lines = readFileSync(join(dir, 'coder.jsonl'), 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.includes('"agent_id":"old"'))).toEqual([]);
    const unknown = await engram('export --db c.db --agent nobody');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('agents in this file: coder, old');
    const cut = await engram(`export --db c.db | head -n 3 | node "${CLI}" import --db cut.db`);
    expect(cut.code).not.toBe(0);
    expect(cut.stderr).toContain('truncated');
  });
});

describe('engram maintain', () => {
  it('--dry-run prints what would be archived and leaves the file byte for byte unchanged', async () => {
    const path = await seed('d.db', 3);
    const before = readFileSync(path);
    const dry = await engram('maintain --db d.db --dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('would archive 3 of 3 rows scanned');
    expect(dry.stdout).toContain('Dry run: nothing was changed.');
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it('a pass that archives many rows warns on stderr and counts them per agent', async () => {
    await seed('e.db', 150);
    const run = await engram('maintain --db e.db --json');
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('warning: agent old: archived 150 rows in one pass');
    const passes = (
      JSON.parse(run.stdout) as {
        agents: { agent: string; details: { archive: { archived: number } } }[];
      }
    ).agents;
    expect(passes.map((p) => [p.agent, p.details.archive.archived])).toEqual([
      ['coder', 0],
      ['old', 150],
    ]);
    // Archived is not gone: an exact search finds the note again on request.
    const plain = await engram('search "old note number 7" --db e.db --agent old --json');
    expect(JSON.parse(plain.stdout).results).toEqual([]);
    const archived = await engram('search "old note number 7" --db e.db --agent old --include-archived');
    expect(archived.stdout).toContain('an old note number 7');
  });
});
