/** The subcommands over any database file: remember, search, get, ingest, drain, maintain, health, serve, mcp. */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { MaintenancePassResult } from '@engram/maintenance';
import { isPostgresUrl, readPostgresBinding } from '@engram/store-postgres';
import type { Command } from './args-spec.js';
import { type Engram, openEngram } from './composition.js';
import { loadEncryptionKey } from './encryption-key.js';
import { EngramDemoError, engramErrorCode } from './errors.js';
import { parseLocatedEvents } from './events-file.js';
import {
  formatEvents,
  formatExecution,
  formatHealth,
  formatMemory,
  formatResults,
  pointerOf,
} from './format.js';
import type { CliIo } from './io.js';
import { createMemoryMcpServer, runMcpOverStdio } from './mcp.js';
import { createProgress } from './progress.js';
import { serveHealthPage } from './serve.js';
import { printable } from './terminal-text.js';

/** Exit codes: success, runtime failure, invalid arguments. */
export const EXIT: { readonly ok: 0; readonly failure: 1; readonly usage: 2 } = {
  ok: 0,
  failure: 1,
  usage: 2,
};

/** Events appended per store call when ingesting a file. */
const APPEND_CHUNK = 1000;

/** Text shown when the heavy phase is skipped for want of a model. */
export const NO_MODEL_NOTE =
  'no model configured: set ENGRAM_OPENAI_CHAT_MODEL and ENGRAM_OPENAI_BASE_URL (or ENGRAM_OPENAI_API_KEY) to run challenge, merge, reflection and persona';

/** Prints text for people: every control character but line feeds and tabs becomes `?`. */
function out(io: CliIo, text: string): void {
  const safe = printable(text, 'lines');
  io.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
}

/** Prints JSON for programs, as `JSON.stringify` escapes it. */
function outJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function width(io: CliIo): number {
  return io.stdout.isTTY === true && typeof io.stdout.columns === 'number' ? io.stdout.columns : 110;
}

/**
 * Opens the database for one command. Commands that only read (search, get, drain, maintain, health, serve)
 * refuse a missing file instead of creating an empty one behind a mistyped `--db`. The embedder's model loads
 * on the first search, tool call or drain (never for get, health or serve); `warm` starts loading it at once,
 * for a command that will embed later (the MCP server, while its client connects).
 */
async function withEngram<T>(
  io: CliIo,
  target: { readonly db: string; readonly keyFile?: string },
  run: (engram: Engram) => Promise<T>,
  options: { readonly create?: boolean; readonly warm?: boolean } = {},
): Promise<T> {
  const { db } = target;
  if (isPostgresUrl(db)) {
    // A database server: "missing" is a database without Engram's schema (named without its URL, which may
    // carry a password).
    if (options.create !== true && (await readPostgresBinding(db)) === 'new') {
      throw new EngramDemoError(
        'ENGRAM_DEMO_NOT_FOUND',
        'no Engram data in that PostgreSQL database (create some with engram remember, engram ingest or engram demo)',
      );
    }
  } else if (options.create !== true && !existsSync(db)) {
    throw new EngramDemoError(
      'ENGRAM_DEMO_NOT_FOUND',
      `no database at ${db} (create one with engram remember, engram ingest or engram demo)`,
    );
  }
  const key = await loadEncryptionKey(target.keyFile, io.env);
  const engram = await openEngram({
    dbPath: db,
    env: io.env,
    warm: options.warm === true,
    ...(key === undefined ? {} : { encryptionKey: key }),
  });
  try {
    return await run(engram);
  } finally {
    await engram.close();
  }
}

/** One line summarising a maintenance pass. */
export function formatPass(agentId: string, result: MaintenancePassResult, hasModel: boolean): string {
  if (result.report === null) return `${agentId}: skipped (a pass for this agent is already running)`;
  const r = result.report;
  const cheap = `cheap ${r.cheap.outcome} (repaired ${r.cheap.repaired}, archived ${r.cheap.archived}, pruned ${r.cheap.pruned})`;
  let heavy: string;
  if (r.heavy.outcome === 'skipped' && !hasModel) heavy = 'heavy skipped (no model configured)';
  else if (r.heavy.outcome === 'gated') heavy = 'heavy gated (cool-down; --force runs it now)';
  else {
    const denials = Object.entries(r.heavy.denials)
      .filter(([, n]) => n > 0)
      .map(([step, n]) => `${step} ${n}`)
      .join(', ');
    const steps = Object.entries(r.heavy.steps)
      .map(([step, outcome]) => `${step} ${outcome}`)
      .join(', ');
    heavy = `heavy ${r.heavy.outcome} (${steps}; model calls ${r.heavy.modelCalls}, input tokens ${r.heavy.inputTokens}${denials === '' ? '' : `; budget denials ${denials}`})`;
  }
  return `${agentId}: ${cheap} · ${heavy}`;
}

async function remember(io: CliIo, c: Extract<Command, { name: 'remember' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      const result = await engram.tools.execute(
        'memory_remember',
        { content: c.content, ...(c.topic === null ? {} : { topic: c.topic }) },
        { agentId: c.agent },
      );
      if (!result.ok) throw new EngramDemoError('ENGRAM_DEMO_TOOL_FAILED', result.text);
      out(io, result.text);
      return EXIT.ok;
    },
    { create: true },
  );
}

async function search(io: CliIo, c: Extract<Command, { name: 'search' }>): Promise<number> {
  return withEngram(io, c, async (engram) => {
    const response = await engram.retriever.search(c.agent, c.query, {
      limit: c.limit,
      ...(c.tags.length === 0 ? {} : { tags: c.tags }),
    });
    const { execution, results } = response;
    if (execution.outcome === 'emptyQuery') {
      io.stderr.write(
        `engram search: the query has no searchable terms\nRun 'engram search --help' for usage.\n`,
      );
      return EXIT.usage;
    }
    if (execution.outcome !== 'completed') {
      const cause = execution.degradations[0];
      throw new EngramDemoError(
        'ENGRAM_DEMO_STORE_FAILED',
        `the search ended ${execution.outcome}${cause === undefined ? '' : ` (${cause})`}`,
      );
    }
    if (c.json) {
      outJson(io, {
        agent: c.agent,
        execution,
        results: results.map((r) => ({
          id: r.record.id,
          kind: r.record.kind,
          content: r.record.content,
          tags: r.record.tags,
          pointer: pointerOf(r.record),
          createdAt: r.record.createdAt,
          score: r.score,
          explanation: r.explanation,
        })),
      });
    } else {
      out(
        io,
        `${results.length} result${results.length === 1 ? '' : 's'} for agent ${c.agent} · ${formatExecution(execution)}`,
      );
      out(io, formatResults(results, { explain: c.explain, width: width(io) }));
    }
    return EXIT.ok;
  });
}

async function get(io: CliIo, c: Extract<Command, { name: 'get' }>): Promise<number> {
  return withEngram(io, c, async (engram) => {
    if (c.target.kind === 'id') {
      const record = await engram.store.getMemory(c.agent, c.target.id);
      if (record === null) {
        throw new EngramDemoError('ENGRAM_DEMO_NOT_FOUND', `no memory with that id for agent ${c.agent}`);
      }
      if (c.json) outJson(io, record);
      else out(io, formatMemory(record));
      return EXIT.ok;
    }
    const { sessionId, from, to } = c.target;
    const events = await engram.store.readEvents(c.agent, sessionId, from, to);
    if (events.length === 0) {
      throw new EngramDemoError(
        'ENGRAM_DEMO_NOT_FOUND',
        `no archived events at that pointer for agent ${c.agent}`,
      );
    }
    if (c.json) outJson(io, events);
    else out(io, formatEvents(events));
    return EXIT.ok;
  });
}

/**
 * The store names a refused event by its index in the appended batch (`events[3].content …`); the user wrote
 * a file, so name its line instead (`events file line 7: content …`). Other errors pass through.
 */
function atFileLine(error: unknown, lines: readonly number[], offset: number): unknown {
  if (engramErrorCode(error) !== 'ENGRAM_STORE_INVALID_INPUT' || !(error instanceof Error)) return error;
  const match = /^(?:invalid input: )?events\[(\d+)\]\.?(.*)$/.exec(error.message.split('\n')[0] ?? '');
  const line = match === null ? undefined : lines[offset + Number(match[1])];
  if (match === null || line === undefined) return error;
  return new EngramDemoError('ENGRAM_DEMO_INVALID_EVENTS', `events file line ${line}: ${match[2]}`, {
    cause: error,
  });
}

async function ingest(io: CliIo, c: Extract<Command, { name: 'ingest' }>): Promise<number> {
  let text: string;
  try {
    text = await readFile(c.file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    throw new EngramDemoError(
      'ENGRAM_DEMO_FILE_UNREADABLE',
      `cannot read the events file${typeof code === 'string' ? ` (${code})` : ''}`,
      { cause: error },
    );
  }
  const sessions = parseLocatedEvents(text, { agentId: c.agent, sessionId: c.session });
  return withEngram(
    io,
    c,
    async (engram) => {
      const totals = { appended: 0, skipped: 0, memories: 0 };
      for (const session of sessions) {
        let appended = 0;
        let skipped = 0;
        let memories = 0;
        for (let i = 0; i < session.events.length; i += APPEND_CHUNK) {
          const chunk = session.events.slice(i, i + APPEND_CHUNK);
          const r = await engram.ingestor
            .appendAndIngest(session.agentId, session.sessionId, chunk)
            .catch((error: unknown) => {
              throw atFileLine(error, session.lines, i);
            });
          appended += r.appended;
          skipped += r.skipped;
          memories += r.ingest.memories;
          let more = r.ingest.more;
          while (more) {
            const next = await engram.ingestor.ingest(session.agentId, session.sessionId);
            memories += next.memories;
            more = next.more && next.events > 0;
          }
        }
        totals.appended += appended;
        totals.skipped += skipped;
        totals.memories += memories;
        out(
          io,
          `${session.agentId} / ${session.sessionId}: ${appended} events appended, ${skipped} already stored, ${memories} memories`,
        );
      }
      out(
        io,
        `Ingested ${sessions.length} session${sessions.length === 1 ? '' : 's'}: ${totals.appended} events appended, ${totals.skipped} already stored, ${totals.memories} memories added.`,
      );
      if (totals.memories > 0) out(io, "Run 'engram drain' to embed them (keyword search works already).");
      return EXIT.ok;
    },
    { create: true },
  );
}

async function drain(io: CliIo, c: Extract<Command, { name: 'drain' }>): Promise<number> {
  return withEngram(io, c, async (engram) => {
    const progress = createProgress(io.stderr, 'embedding');
    const summary = await engram
      .drain({
        ...(c.agent === null ? {} : { agentId: c.agent }),
        onProgress: (d, t) => progress.update(d, t),
      })
      .finally(() => progress.finish());
    out(
      io,
      `Drained ${summary.rows} rows in ${summary.batches} batch${summary.batches === 1 ? '' : 'es'} with ${engram.embedderLabel}: ready ${summary.ready}, error ${summary.error}, ftsOnly ${summary.ftsOnly}, stale ${summary.stale} · backlog ${summary.backlog ?? '—'} · ${summary.outcome}`,
    );
    return summary.outcome === 'completed' ? EXIT.ok : EXIT.failure;
  });
}

async function maintain(io: CliIo, c: Extract<Command, { name: 'maintain' }>): Promise<number> {
  return withEngram(io, c, async (engram) => {
    const agents = c.agent === null ? await engram.listAgents() : [c.agent];
    if (agents.length === 0) {
      out(io, 'No agents in this database yet; nothing to maintain.');
      return EXIT.ok;
    }
    let failed = false;
    for (const agent of agents) {
      const result = await engram.maintain(agent, { force: c.force });
      if (
        result.report !== null &&
        (result.report.cheap.outcome === 'failed' || result.report.heavy.outcome === 'failed')
      ) {
        failed = true;
      }
      out(io, formatPass(agent, result, engram.modelLabel !== null));
    }
    if (engram.modelLabel === null) out(io, `Heavy phase skipped: ${NO_MODEL_NOTE}.`);
    return failed ? EXIT.failure : EXIT.ok;
  });
}

async function health(io: CliIo, c: Extract<Command, { name: 'health' }>): Promise<number> {
  return withEngram(io, c, async (engram) => {
    const dto = await engram.health(c.agent);
    if (c.json) outJson(io, dto);
    else out(io, formatHealth(dto, c.agent === null ? 'all agents' : `agent ${c.agent}`));
    return EXIT.ok;
  });
}

async function serve(io: CliIo, c: Extract<Command, { name: 'serve' }>): Promise<number> {
  return withEngram(io, c, async (engram) => {
    const { server, fellBackFrom } = await serveHealthPage(engram, c.port);
    if (fellBackFrom !== null) out(io, `Port ${fellBackFrom} is taken; using ${server.port} instead.`);
    out(io, `Health page: ${server.url}`);
    out(io, `Health JSON: ${server.url}api/health`);
    io.stderr.write('Press Ctrl+C to stop.\n');
    await io.stopSignal;
    await server.close();
    return EXIT.ok;
  });
}

async function mcp(io: CliIo, c: Extract<Command, { name: 'mcp' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      const server = createMemoryMcpServer(engram.tools, c.agent);
      io.stderr.write(
        printable(
          `engram mcp: serving the memory tools of agent ${c.agent} over stdio (${engram.embedderLabel})\n`,
          'lines',
        ),
      );
      await runMcpOverStdio(server, io.stopSignal, {
        ...(io.stdin === undefined ? {} : { stdin: io.stdin }),
        ...(io.stdoutStream === undefined ? {} : { stdout: io.stdoutStream }),
      });
      return EXIT.ok;
    },
    { create: true, warm: true },
  );
}

/** Runs one parsed subcommand other than `demo`; resolves with the exit code. */
export function runCommand(io: CliIo, command: Exclude<Command, { name: 'demo' }>): Promise<number> {
  switch (command.name) {
    case 'remember':
      return remember(io, command);
    case 'search':
      return search(io, command);
    case 'get':
      return get(io, command);
    case 'ingest':
      return ingest(io, command);
    case 'drain':
      return drain(io, command);
    case 'maintain':
      return maintain(io, command);
    case 'health':
      return health(io, command);
    case 'serve':
      return serve(io, command);
    case 'mcp':
      return mcp(io, command);
  }
}
