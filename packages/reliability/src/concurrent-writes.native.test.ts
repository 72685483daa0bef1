/**
 * Concurrent writes of the same thing (the concurrency suite, continued): an exact duplicate is never stored
 * twice however the writes interleave — 20 identical `memory_remember` calls in flight together over one MCP
 * session, four processes remembering the same 200 facts, four shell-style loops of `engram remember` — and two
 * embedding drains running at once report, together, exactly the rows that changed state.
 *
 * The MCP and CLI cases run the built `engram` CLI of this repository (`pnpm build` first), as a user would.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contentHash } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONSISTENT,
  consistencyProblems,
  factsFor,
  inspectDatabase,
  type LineChild,
  spawnChild,
  suiteSeed,
  WRITES_AGENT,
  waitForLine,
} from './harness.js';

/** The built CLI (the app sits above this package's layer, so it is found by path, not by a dependency). */
const CLI = fileURLToPath(new URL('../../cli/dist/cli.js', import.meta.url));
const SEED = suiteSeed(0xd0_5eed);
const embedder = createDeterministicEmbedder();

let dir: string;
const started: LineChild[] = [];

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error('the engram CLI is not built: run pnpm build first');
  dir = mkdtempSync(join(tmpdir(), 'engram-concurrent-writes-'));
  console.log(`[reliability:concurrent-writes] suite seed ${SEED} (replay: ENGRAM_RELIABILITY_SEED=${SEED})`);
});

afterAll(() => {
  for (const child of started) {
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
  }
  rmSync(dir, { recursive: true, force: true });
});

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_')) env[key] = value;
  }
  return { ...env, NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' };
}

/** The agent's active rows of a kind, read through the public API. */
async function activeRows(path: string, agentId: string, kind: 'fact' | 'semantic') {
  const store = createSqliteMemoryStore({ path, embedding: embedder.profile });
  try {
    return await store.listMemories(agentId, { kinds: [kind], lifecycles: ['active'], limit: 10_000 });
  } finally {
    store.close();
  }
}

/** Starts children that report `ready`, then releases them together and collects their `done` lines. */
async function together(children: LineChild[]): Promise<Record<string, number>[]> {
  started.push(...children);
  await Promise.all(children.map((c) => waitForLine(c, (l) => l.t === 'ready')));
  for (const c of children) c.send('go');
  const exits = await Promise.all(children.map((c) => c.exited));
  return children.map((c, i) => {
    expect(
      c.lines.filter((l) => l.t === 'E'),
      `child ${i}; stderr: ${exits[i]?.stderr}`,
    ).toEqual([]);
    expect(exits[i]?.code, `child ${i}; stderr: ${exits[i]?.stderr}`).toBe(0);
    return (c.lines.find((l) => l.t === 'done')?.counts ?? {}) as Record<string, number>;
  });
}

function sum(counts: readonly Record<string, number>[], key: string): number {
  return counts.reduce((total, c) => total + (c[key] ?? 0), 0);
}

describe('an exact duplicate is never stored twice, under any concurrency', () => {
  it('20 identical memory_remember calls sent together over one MCP session store one row', async () => {
    const db = join(dir, 'mcp.db');
    const child = spawn(process.execPath, [CLI, 'mcp', '--db', db, '--agent', 'default'], {
      cwd: dir,
      env: childEnv(),
    });
    child.stderr.resume();
    const responses = new Map<unknown, Record<string, unknown>>();
    let buffer = '';
    let wake: (() => void) | null = null;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
        const message = JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>;
        buffer = buffer.slice(nl + 1);
        responses.set(message.id, message);
      }
      wake?.();
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const until = async (n: number): Promise<void> => {
      while (responses.size < n) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    };
    const send = (message: Record<string, unknown>): boolean =>
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    send({
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'race', version: '0' } },
    });
    await until(1);
    send({ method: 'notifications/initialized' });
    const content = 'The release checklist lives in the ops wiki under Runbooks';
    // All 20 requests in one write: the server has every one of them before it answers the first.
    child.stdin.write(
      Array.from(
        { length: 20 },
        (_, i) =>
          `${JSON.stringify({
            jsonrpc: '2.0',
            id: i + 1,
            method: 'tools/call',
            params: { name: 'memory_remember', arguments: { content } },
          })}\n`,
      ).join(''),
    );
    await until(21);
    child.stdin.end();
    expect(await exited).toBe(0);
    const texts = Array.from({ length: 20 }, (_, i) => {
      const result = responses.get(i + 1)?.result as { content: { text: string }[]; isError?: boolean };
      expect(result.isError ?? false).toBe(false);
      return result.content.map((c) => c.text).join('\n');
    });
    const rows = await activeRows(db, 'default', 'fact');
    expect(rows.map((r) => r.content)).toEqual([content]);
    const id = rows[0]?.id;
    expect(texts.filter((t) => t === `Remembered as fact ${id}.`)).toHaveLength(1);
    expect(
      texts.filter((t) => t === `Already remembered as fact ${id}; nothing stored (exact duplicate).`),
    ).toHaveLength(19);
    console.log(
      '[reliability:concurrent-writes] mcp: 20 identical memory_remember calls in flight, 1 row stored, 19 answered as exact duplicates',
    );
  }, 120_000);

  it('four processes remembering the same 200 facts leave exactly 200 active rows', async () => {
    const path = join(dir, 'four-processes.db');
    createSqliteMemoryStore({ path, embedding: embedder.profile }).close();
    const facts = factsFor(SEED, 200);
    const counts = await together(
      Array.from({ length: 4 }, (_, i) =>
        spawnChild('concurrent-writes-child', ['remember', path, String(SEED), `p${i + 1}`, '200']),
      ),
    );
    const rows = await activeRows(path, WRITES_AGENT, 'fact');
    expect(rows).toHaveLength(200);
    expect(new Set(rows.map((r) => r.contentHash))).toEqual(new Set(facts.map((f) => contentHash(f))));
    // Each fact was reported stored exactly once, and as an exact duplicate to the three other processes.
    expect({ remembered: sum(counts, 'remembered'), duplicate: sum(counts, 'duplicate') }).toEqual({
      remembered: 200,
      duplicate: 600,
    });
    expect(sum(counts, 'other')).toBe(0);
    expect(consistencyProblems(inspectDatabase(path))).toEqual(CONSISTENT);
    console.log(
      `[reliability:concurrent-writes] four processes × 200 facts: 200 active rows for 200 hashes; per process stored ${counts.map((c) => c.remembered).join(' / ')}`,
    );
  }, 300_000);

  it('four concurrent loops of `engram remember` leave one row per distinct text', async () => {
    const db = join(dir, 'cli-loops.db');
    const env = childEnv();
    const first = await runNode(CLI, ['remember', 'The loop file exists', '--db', db], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    const texts = factsFor(SEED ^ 0x5a5a, 12);
    // Four loops over the same texts in step: each text is remembered by four processes started together.
    const answers: string[] = [];
    for (const text of texts) {
      const runs = await Promise.all(
        Array.from({ length: 4 }, () => runNode(CLI, ['remember', text, '--db', db], { cwd: dir, env })),
      );
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(0);
        answers.push(run.stdout.trim());
      }
    }
    const rows = await activeRows(db, 'default', 'fact');
    expect(rows.map((r) => r.content).sort()).toEqual(['The loop file exists', ...texts].sort());
    expect(answers.filter((a) => a.startsWith('Remembered as fact '))).toHaveLength(texts.length);
    expect(answers.filter((a) => a.startsWith('Already remembered as fact '))).toHaveLength(3 * texts.length);
    console.log(
      `[reliability:concurrent-writes] cli: 4 loops × ${texts.length} engram remember runs in step, ${rows.length} rows for ${texts.length + 1} distinct texts`,
    );
  }, 600_000);
});

describe('concurrent drains', () => {
  it('two drains over 2,400 pending rows report, together, exactly the rows that became ready', async () => {
    const path = join(dir, 'drains.db');
    const store = createSqliteMemoryStore({ path, embedding: embedder.profile });
    try {
      const contents = factsFor(SEED ^ 0xd4a1, 2_400);
      for (let i = 0; i < contents.length; i += 400) {
        await store.insertMemories(
          contents.slice(i, i + 400).map((content) => ({ agentId: WRITES_AGENT, kind: 'semantic', content })),
        );
      }
      expect((await store.countEmbeddingBacklog()).total).toBe(2_400);
    } finally {
      store.close();
    }
    const counts = await together(
      Array.from({ length: 2 }, (_, i) =>
        spawnChild('concurrent-writes-child', ['drain', path, `d${i + 1}`]),
      ),
    );
    const rows = await activeRows(path, WRITES_AGENT, 'semantic');
    expect(rows.filter((r) => r.embeddingState === 'ready')).toHaveLength(2_400);
    expect(sum(counts, 'ready')).toBe(2_400);
    expect(sum(counts, 'error') + sum(counts, 'ftsOnly')).toBe(0);
    // Every item a drain read was committed by it or found done by the other one.
    expect(sum(counts, 'ready') + sum(counts, 'stale')).toBe(sum(counts, 'rows'));
    expect(consistencyProblems(inspectDatabase(path))).toEqual(CONSISTENT);
    console.log(
      `[reliability:concurrent-writes] two drains over 2,400 pending rows: ready ${counts.map((c) => c.ready).join(' + ')} = 2,400, ${sum(counts, 'stale')} items found already done by the other drain`,
    );
  }, 300_000);
});
