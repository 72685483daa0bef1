/**
 * Hostile input through the built `engram` CLI and its MCP server (fast-check, seeded), as child processes on
 * real database files:
 *
 * - timestamps outside the range of a JavaScript Date in an events file are refused naming the file line,
 *   and nothing is written; edge values inside the range are stored and every memory renders;
 * - terminal control sequences (OSC 52 clipboard writes, titles, colours, cursor moves, C1 forms) stored
 *   through `remember` and `ingest` never reach a human-readable output raw (search, get, ingest, drain,
 *   maintain, health, MCP text results), while `--json` gives the exact stored text back;
 * - malformed JSON-RPC lines each get exactly one error response with the right code and the server keeps
 *   serving.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteSeed } from './harness.js';
import {
  badTimestampToken,
  controlPayload,
  edgeTimestamp,
  hasTerminalControl,
  type MalformedMessage,
  malformedMessage,
} from './hostile-cli-arbitraries.js';

/**
 * The built CLI of this repository (the app sits above this package's layer, so it is found by path, not by a
 * dependency): `pnpm build` first.
 */
const CLI = fileURLToPath(new URL('../../cli/dist/cli.js', import.meta.url));
const SEED = suiteSeed(0x7e_4a11);
const RUNS = { badTimestamps: 24, edgeTimestamps: 12, controlPayloads: 8, jsonRpc: 600 };
/**
 * Each case runs the CLI as a process up to about 70 times, and each run loads the package graph: well under a
 * second on an idle machine, several on a busy one (the native tier runs packages side by side on two cores).
 * The budget is for a hang, not for speed.
 */
const BUDGET_MS = 600_000;

let dir: string;

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error('the engram CLI is not built: run pnpm build first');
  dir = mkdtempSync(join(tmpdir(), 'engram-hostile-cli-'));
  console.log(`[reliability:hostile-cli] suite seed ${SEED} (replay: ENGRAM_RELIABILITY_SEED=${SEED})`);
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_')) env[key] = value;
  }
  return { ...env, NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' };
}

function cli(args: readonly string[]): Promise<Run> {
  return runNode(CLI, args, { cwd: dir, env: childEnv() });
}

function eventLine(seq: number, content: string, createdAt?: string): string {
  const base = JSON.stringify({ sessionId: 's1', seq, type: 'message', role: 'user', content });
  return createdAt === undefined ? base : `${base.slice(0, -1)},"createdAt":${createdAt}}`;
}

describe('out-of-range timestamps', () => {
  it(
    'are refused at the file line, write nothing, and edge values render',
    async () => {
      let refused = 0;
      let rendered = 0;
      await fc.assert(
        fc.asyncProperty(
          badTimestampToken,
          fc.integer({ min: 0, max: 6 }),
          fc.integer({ min: 0, max: 2 }),
          async (token, before, blanks) => {
            const lines = [
              ...Array.from({ length: before }, (_, i) => eventLine(i + 1, `fine ${i}`)),
              ...Array.from({ length: blanks }, () => ''),
              eventLine(before + 1, 'the bad one', token),
            ];
            const file = join(dir, `bad-${refused}.jsonl`);
            const db = join(dir, `bad-${refused}.db`);
            writeFileSync(file, `${lines.join('\n')}\n`);
            const run = await cli(['ingest', file, '--db', db]);
            expect(run.code).toBe(1);
            expect(run.stderr).toBe(
              `engram ingest: events file line ${lines.length}: "createdAt" must be epoch milliseconds (an integer from 0 to 8640000000000000) (ENGRAM_CLI_INVALID_EVENTS)\n`,
            );
            expect(existsSync(db)).toBe(false);
            refused += 1;
          },
        ),
        { seed: SEED, numRuns: RUNS.badTimestamps },
      );
      const db = join(dir, 'edges.db');
      const stamps = fc.sample(edgeTimestamp, { seed: SEED, numRuns: RUNS.edgeTimestamps });
      const file = join(dir, 'edges.jsonl');
      writeFileSync(
        file,
        `${stamps.map((ms, i) => eventLine(i + 1, `edge word${i} at ${ms}`, String(ms))).join('\n')}\n`,
      );
      expect((await cli(['ingest', file, '--db', db])).code).toBe(0);
      for (const [i] of stamps.entries()) {
        const found = await cli(['search', `word${i}`, '--json', '--db', db]);
        expect(found.code).toBe(0);
        for (const result of (JSON.parse(found.stdout) as { results: { id: string }[] }).results) {
          const got = await cli(['get', result.id, '--db', db]);
          expect(got.code).toBe(0);
          expect(got.stdout).toMatch(/^created {5}[+-]?\d{4,6}-\d\d-\d\dT/m);
          rendered += 1;
        }
      }
      console.log(
        `[reliability:hostile-cli] timestamps: ${refused} events files refused at the right line with nothing written, ${stamps.length} edge values stored, ${rendered} memories rendered`,
      );
      expect(rendered).toBeGreaterThanOrEqual(stamps.length);
    },
    BUDGET_MS,
  );
});

describe('control sequences in output', () => {
  it(
    'never reach a human-readable output raw; --json gives the exact text back',
    async () => {
      const db = join(dir, 'controls.db');
      const payloads = fc.sample(controlPayload, { seed: SEED, numRuns: RUNS.controlPayloads });
      const outputs: Run[] = [];
      const human = async (args: readonly string[]): Promise<Run> => {
        const run = await cli(args);
        expect(run.code).toBe(0);
        outputs.push(run);
        return run;
      };
      const file = join(dir, 'controls.jsonl');
      writeFileSync(file, `${payloads.map((p, i) => eventLine(i + 1, `ingested${i} ${p}`)).join('\n')}\n`);
      await human(['ingest', file, '--db', db]);
      for (const [i, payload] of payloads.entries()) {
        await human(['remember', `remembered${i} ${payload}`, '--db', db]);
      }
      await human(['drain', '--db', db]);
      let exact = 0;
      for (const [i, payload] of payloads.entries()) {
        await human(['search', `remembered${i}`, '--explain', '--db', db]);
        await human(['search', `ingested${i}`, '--db', db]);
        const json = await cli(['search', `remembered${i}`, '--json', '--db', db]);
        const hit = (JSON.parse(json.stdout) as { results: { id: string; content: string }[] }).results.find(
          (r) => r.content === `remembered${i} ${payload}`,
        );
        expect(hit).toBeDefined();
        exact += 1;
        await human(['get', hit?.id ?? '', '--db', db]);
        await human(['get', `session/s1#${i + 1}-${i + 1}`, '--db', db]);
        const events = await cli(['get', `session/s1#${i + 1}-${i + 1}`, '--json', '--db', db]);
        expect((JSON.parse(events.stdout) as { content: string }[])[0]?.content).toBe(
          `ingested${i} ${payload}`,
        );
        exact += 1;
      }
      await human(['maintain', '--db', db]);
      await human(['health', '--db', db]);
      for (const run of outputs) {
        expect(hasTerminalControl(run.stdout)).toBe(false);
        expect(hasTerminalControl(run.stderr)).toBe(false);
      }
      const mcpTexts = await mcpSearchTexts(
        db,
        payloads.map((_, i) => `remembered${i}`),
      );
      for (const text of mcpTexts) expect(hasTerminalControl(text)).toBe(false);
      console.log(
        `[reliability:hostile-cli] control sequences: ${payloads.length} payloads stored twice, ${outputs.length} human-readable outputs and ${mcpTexts.length} MCP text results without a control character, ${exact} --json round trips exact`,
      );
    },
    BUDGET_MS,
  );
});

/** One `engram mcp` child: send lines, read response lines. */
function mcpChild(db: string): {
  send(line: string): void;
  next(): Promise<Record<string, unknown>>;
  end(): Promise<number | null>;
} {
  const child = spawn(process.execPath, [CLI, 'mcp', '--db', db, '--agent', 'default'], {
    cwd: dir,
    env: childEnv(),
  });
  child.stderr.resume();
  const lines: string[] = [];
  let buffer = '';
  let wake: (() => void) | null = null;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
    wake?.();
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return {
    send: (line) => child.stdin.write(`${line}\n`),
    async next() {
      while (lines.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = null;
      }
      return JSON.parse(lines.shift() as string) as Record<string, unknown>;
    },
    end() {
      child.stdin.end();
      return exited;
    },
  };
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '0' } },
});

async function mcpSearchTexts(db: string, queries: readonly string[]): Promise<string[]> {
  const mcp = mcpChild(db);
  mcp.send(INITIALIZE);
  await mcp.next();
  mcp.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  const texts: string[] = [];
  for (const [i, query] of queries.entries()) {
    mcp.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: i + 1,
        method: 'tools/call',
        params: { name: 'memory_search', arguments: { query } },
      }),
    );
    const response = await mcp.next();
    const content = (response.result as { content: { text: string }[] }).content;
    texts.push(...content.map((c) => c.text));
  }
  expect(await mcp.end()).toBe(0);
  return texts;
}

describe('malformed JSON-RPC', () => {
  it(
    'gets one error response with the right code per line, and the server keeps serving',
    async () => {
      const mcp = mcpChild(join(dir, 'mcp.db'));
      const byKind = new Map<string, number>();
      const check = async (message: MalformedMessage): Promise<void> => {
        mcp.send(message.line);
        const response = await mcp.next();
        expect(response.jsonrpc).toBe('2.0');
        expect(response.id).toEqual(message.id);
        const error = response.error as { code: number; message: string };
        expect(error.code).toBe(message.code);
        expect(error.message).not.toContain('\n');
        byKind.set(message.kind, (byKind.get(message.kind) ?? 0) + 1);
      };
      // Before initialize, tools are refused.
      mcp.send('{"jsonrpc":"2.0","id":-1,"method":"tools/list"}');
      expect(((await mcp.next()).error as { code: number }).code).toBe(-32002);
      mcp.send(INITIALIZE);
      expect((await mcp.next()).id).toBe(0);
      mcp.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
      let id = 1;
      let pings = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 1_000_000 }).chain((n) => malformedMessage(n)),
          async (message) => {
            await check(message);
            id += 1;
            if (id % 50 === 0) {
              mcp.send(JSON.stringify({ jsonrpc: '2.0', id: `ping-${id}`, method: 'ping' }));
              expect(await mcp.next()).toEqual({ jsonrpc: '2.0', id: `ping-${id}`, result: {} });
              pings += 1;
            }
          },
        ),
        { seed: SEED, numRuns: RUNS.jsonRpc },
      );
      expect(await mcp.end()).toBe(0);
      const kinds = [...byKind.entries()].map(([k, n]) => `${k} ${n}`).join(', ');
      console.log(
        `[reliability:hostile-cli] json-rpc: ${id - 1} malformed messages answered with the right code (${kinds}), ${pings} pings answered in between, clean exit`,
      );
    },
    BUDGET_MS,
  );
});
