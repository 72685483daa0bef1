/**
 * Backups as a user restores them: `engram import --agent` and `--keep-ages`, `engram ingest --agent` against a
 * line naming another agent, and the line limit of both, through the built CLI on real SQLite files.
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LINE_BYTES } from './line-reader.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const IN_2017 = Date.UTC(2017, 5, 1);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-backups-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `engram <args>` through a POSIX shell (so `<`, `>` and pipes work), offline. */
function engram(args: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = { NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' };
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && !k.startsWith('ENGRAM_')) env[k] ??= v;
    const child = spawn('/bin/sh', ['-c', args.replaceAll('engram ', `"${process.execPath}" "${CLI}" `)], {
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

/** A file holding `n` unimportant notes of `agent`, written (and last used) in 2017. */
async function seed2017(name: string, agent: string, n: number): Promise<string> {
  const path = join(dir, name);
  const store = createSqliteMemoryStore({ path, embedding: DETERMINISTIC_PROFILE, now: () => IN_2017 });
  await store.insertMemories(
    Array.from({ length: n }, (_, i) => ({
      agentId: agent,
      kind: 'semantic' as const,
      content: `a note from 2017 number ${i}`,
      importance: 0,
    })),
  );
  await store.appendEvents(agent, 'chat', [{ seq: 1, type: 'message', role: 'user', content: 'hello' }]);
  store.close();
  return path;
}

describe('engram import: a restore is not aged out', () => {
  it('memories last used in 2017 start their decay clock at the import; --keep-ages keeps their ages', async () => {
    await seed2017('old.db', 'alice', 30);
    expect((await engram('engram export --db old.db > old.jsonl')).code).toBe(0);

    const restored = await engram('engram import --db restored.db < old.jsonl');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain('Decay clocks start at this import');
    const dry = await engram('engram maintain --db restored.db --dry-run');
    expect(dry.stdout).toContain('would archive 0 of 30 rows scanned');

    const kept = await engram('engram import --db kept.db --keep-ages < old.jsonl');
    expect(kept.code).toBe(0);
    expect(kept.stdout).toContain('Original ages kept (--keep-ages)');
    const keptDry = await engram('engram maintain --db kept.db --dry-run');
    expect(keptDry.stdout).toContain('would archive 30 of 30 rows scanned');

    // Importing the file again changes nothing: the stored clocks stay.
    const again = await engram('engram import --db restored.db --json < old.jsonl');
    expect(JSON.parse(again.stdout)).toMatchObject({
      imported: { memories: 0, events: 0 },
      unchanged: { memories: 30, events: 1 },
      conflicts: { memories: 0 },
      ages: 'restarted',
    });
  });
});

describe('agents stay apart', () => {
  it('engram import --agent imports every record of a file into one agent and says so', async () => {
    await seed2017('alice.db', 'alice', 3);
    expect((await engram('engram export --db alice.db --agent alice > alice.jsonl')).code).toBe(0);
    const run = await engram('engram import --db bob.db --agent bob < alice.jsonl');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Every record was imported into agent bob (--agent).');
    const listed = await engram('engram export --db bob.db');
    const rows = listed.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { row?: { agent_id?: string } })
      .filter((r) => r.row !== undefined);
    expect(rows.length).toBe(4);
    expect(new Set(rows.map((r) => r.row?.agent_id))).toEqual(new Set(['bob']));
    const found = await engram('engram search "note from 2017 number 1" --db bob.db --agent bob');
    expect(found.stdout).toContain('a note from 2017 number 1');
  });

  it('engram ingest --agent refuses a line naming another agent and writes nothing', async () => {
    const file = join(dir, 'mixed.jsonl');
    writeFileSync(
      file,
      [
        JSON.stringify({ sessionId: 's1', seq: 1, type: 'message', role: 'user', content: 'mine' }),
        JSON.stringify({
          agentId: 'victim',
          sessionId: 's1',
          seq: 2,
          type: 'message',
          role: 'user',
          content: 'planted',
        }),
      ].join('\n'),
    );
    const refused = await engram('engram ingest mixed.jsonl --db ingest.db --agent coder');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('events file line 2');
    expect(refused.stderr).toContain('ENGRAM_CLI_AGENT_MISMATCH');
    expect(refused.stderr).not.toContain('planted');
    // Nothing was written: the database was never created.
    expect(() => statSync(join(dir, 'ingest.db'))).toThrow();
    // Without --agent, the lines name their agents (a file of several agents).
    const open = await engram('engram ingest mixed.jsonl --db ingest.db --json');
    expect(open.code).toBe(0);
    expect(
      (JSON.parse(open.stdout) as { sessions: { agent: string }[] }).sessions.map((s) => s.agent),
    ).toEqual(['default', 'victim']);
  });
});

describe('bounded input', () => {
  const noStack = (text: string) => expect(text).not.toMatch(/\n\s+at /);

  it('engram import refuses a line over the limit with a typed error, no stack trace, and a non-zero exit', async () => {
    await seed2017('small.db', 'alice', 2);
    expect((await engram('engram export --db small.db > small.jsonl')).code).toBe(0);
    const header = readFileSync(join(dir, 'small.jsonl'), 'utf8').split('\n')[0];
    writeFileSync(join(dir, 'header.jsonl'), `${header}\n`);
    // The header, then one line longer than the limit, streamed through a pipe.
    const run = await engram(
      `{ cat header.jsonl; head -c ${MAX_LINE_BYTES + 1024} /dev/zero | tr '\\0' a; } | engram import --db long.db`,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the export line 2 is longer than 16 MiB');
    expect(run.stderr).toContain('ENGRAM_CLI_LINE_TOO_LONG');
    noStack(run.stderr);
  });

  it('engram ingest refuses an events file with a line over the limit, writing nothing', async () => {
    const file = join(dir, 'long-events.jsonl');
    const ok = JSON.stringify({ sessionId: 's1', seq: 1, type: 'message', role: 'user', content: 'x' });
    writeFileSync(file, `${ok}\n${'b'.repeat(MAX_LINE_BYTES + 1)}\n`);
    const run = await engram('engram ingest long-events.jsonl --db long-events.db');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('events file line 2 is longer than 16 MiB');
    noStack(run.stderr);
    expect(() => statSync(join(dir, 'long-events.db'))).toThrow();
  });
});
