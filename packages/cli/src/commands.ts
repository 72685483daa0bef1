/**
 * The subcommands over any database file: remember, search, get, ingest, drain, maintain, export, import,
 * health, serve, mcp (list, update, forget and history are in `commands-scope.ts`).
 */
import { type FileHandle, open } from 'node:fs/promises';
import type { Engine as Engram, HealthDto, MaintenancePassResult } from '@engram/memory/compose';
import type { Command } from './args-spec.js';
import {
  EXIT,
  INTEGRITY_DAMAGED_ROWS,
  INTEGRITY_FAILED,
  out,
  outJson,
  scopeLabel,
  storeScope,
  toolScope,
  visibleTo,
  width,
  withEngram,
} from './command-support.js';
import { cliErrorCode, EngramCliError } from './errors.js';
import type { LocatedSessionEvents } from './events-file.js';
import {
  formatEvents,
  formatExecution,
  formatHealth,
  formatIntegrity,
  formatMemory,
  formatResults,
  pointerOf,
} from './format.js';
import type { CliIo } from './io.js';
import { createProgress } from './progress.js';
import { printable } from './terminal-text.js';

/** Most agent ids listed when a command without --agent finds nothing. */
const MAX_LISTED_AGENTS = 20;
/** Events appended per store call when ingesting a file. */
const APPEND_CHUNK = 1000;

/**
 * The maintenance lease's length in seconds as the CLI names it (`@engram/maintenance`'s
 * `DEFAULT_MAINTENANCE_LEASE_MS`, not imported here so a one-shot command does not load that package).
 */
export const LEASE_SECONDS = 30;

/** Text shown when the heavy phase is skipped for want of a model. */
export const NO_MODEL_NOTE =
  'no model configured: set ENGRAM_OPENAI_CHAT_MODEL and ENGRAM_OPENAI_BASE_URL (or ENGRAM_OPENAI_API_KEY) to run challenge, merge, reflection and persona';

/** One line summarising a maintenance pass. */
export function formatPass(agentId: string, result: MaintenancePassResult, hasModel: boolean): string {
  if (result.report === null) {
    return result.skipped === 'claimed'
      ? `${agentId}: skipped (another process holds this agent's maintenance lease: a pass that is running, or one that stopped within the last ${LEASE_SECONDS} s; --force takes it over)`
      : `${agentId}: skipped (a pass for this agent is already running)`;
  }
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
        toolScope(c),
      );
      if (!result.ok) throw new EngramCliError('ENGRAM_CLI_TOOL_FAILED', result.text);
      if (c.json)
        outJson(io, { agent: c.agent, user: c.user, ...result.data, ok: result.ok, text: result.text });
      else out(io, result.text);
      return EXIT.ok;
    },
    { access: 'write', creates: true, writes: true },
  );
}

async function search(io: CliIo, c: Extract<Command, { name: 'search' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      const response = await engram.retriever.search(c.agent, c.query, {
        limit: c.limit,
        ...(c.tags.length === 0 ? {} : { tags: c.tags }),
        ...(c.includeArchived === true ? { includeArchived: true } : {}),
        ...(c.user === null && c.session === null
          ? {}
          : {
              filter: {
                ...(c.user === null ? {} : { forUser: c.user }),
                ...(c.session === null ? {} : { sessionId: c.session }),
              },
            }),
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
        throw new EngramCliError(
          'ENGRAM_CLI_STORE_FAILED',
          `the search ended ${execution.outcome}${cause === undefined ? '' : ` (${cause})`}`,
        );
      }
      if (results.length === 0) await listOtherAgents(io, engram, c);
      if (c.json) {
        outJson(io, {
          agent: c.agent,
          user: c.user,
          ...(c.session === null ? {} : { session: c.session }),
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
          `${results.length} result${results.length === 1 ? '' : 's'} for ${scopeLabel(c)} · ${formatExecution(execution)}`,
        );
        out(io, formatResults(results, { explain: c.explain, width: width(io) }));
      }
      return EXIT.ok;
    },
    { access: 'read' },
  );
}

/**
 * When a command run without `--agent` finds nothing, the user may have meant another agent: says on stderr
 * (stdout stays the answer) which agents the file has, when it has others.
 */
async function listOtherAgents(
  io: CliIo,
  engram: Engram,
  c: { readonly agent: string; readonly agentDefaulted?: true },
): Promise<void> {
  if (c.agentDefaulted !== true) return;
  const agents = await engram.listAgents();
  // Nothing to point at when the default agent is the only one (or there is none).
  if (!agents.some((agent) => agent !== c.agent)) return;
  const shown = agents.slice(0, MAX_LISTED_AGENTS).join(', ');
  const more = agents.length > MAX_LISTED_AGENTS ? ` and ${agents.length - MAX_LISTED_AGENTS} more` : '';
  io.stderr.write(
    printable(
      `Nothing found for agent ${c.agent} (the default; no --agent given). Agents in this database: ${shown}${more}. Pick one with --agent <id>.\n`,
      'lines',
    ),
  );
}

async function get(io: CliIo, c: Extract<Command, { name: 'get' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      if (c.target.kind === 'id') {
        const record = await engram.store.getMemory(c.agent, c.target.id, storeScope(c.user));
        if (record === null) {
          await listOtherAgents(io, engram, c);
          throw new EngramCliError('ENGRAM_CLI_NOT_FOUND', `no memory with that id for ${scopeLabel(c)}`);
        }
        if (c.json) outJson(io, record);
        else out(io, formatMemory(record));
        return EXIT.ok;
      }
      const { sessionId, from, to } = c.target;
      // A user's view of the archive: the agent's own events and that user's, never another user's.
      const events = (await engram.store.readEvents(c.agent, sessionId, from, to)).filter((e) =>
        visibleTo(e.userId, c.user),
      );
      if (events.length === 0) {
        await listOtherAgents(io, engram, c);
        throw new EngramCliError(
          'ENGRAM_CLI_NOT_FOUND',
          `no archived events at that pointer for ${scopeLabel(c)}`,
        );
      }
      if (c.json) outJson(io, events);
      else out(io, formatEvents(events));
      return EXIT.ok;
    },
    { access: 'read' },
  );
}

/**
 * The store names a refused event by its index in the appended batch (`events[3].content …`); the user wrote
 * a file, so name its line instead (`events file line 7: content …`). Other errors pass through.
 */
function atFileLine(error: unknown, lines: readonly number[], offset: number): unknown {
  if (cliErrorCode(error) !== 'ENGRAM_STORE_INVALID_INPUT' || !(error instanceof Error)) return error;
  const match = /^(?:invalid input: )?events\[(\d+)\]\.?(.*)$/.exec(error.message.split('\n')[0] ?? '');
  const line = match === null ? undefined : lines[offset + Number(match[1])];
  if (match === null || line === undefined) return error;
  return new EngramCliError('ENGRAM_CLI_INVALID_EVENTS', `events file line ${line}: ${match[2]}`, {
    cause: error,
  });
}

/** The events file, streamed line by line (each line within the line limit) and parsed before anything is written. */
async function readEventsFile(c: Extract<Command, { name: 'ingest' }>): Promise<LocatedSessionEvents[]> {
  const unreadable = (error: unknown): EngramCliError => {
    const code = (error as { code?: unknown }).code;
    return new EngramCliError(
      'ENGRAM_CLI_FILE_UNREADABLE',
      `cannot read the events file${typeof code === 'string' ? ` (${code})` : ''}`,
      { cause: error },
    );
  };
  const [{ EventsFileParser }, { readLines }] = await Promise.all([
    import('./events-file.js'),
    import('./line-reader.js'),
  ]);
  // With --agent, every line is that agent's: a line naming another is refused.
  const parser = new EventsFileParser({
    agentId: c.agent,
    sessionId: c.session,
    agentFixed: c.agentDefaulted !== true,
  });
  let handle: FileHandle;
  try {
    handle = await open(c.file, 'r');
  } catch (error) {
    throw unreadable(error);
  }
  try {
    for await (const line of readLines(handle.createReadStream({ autoClose: false }), 'events file')) {
      parser.add(line.text, line.number);
    }
  } catch (error) {
    throw cliErrorCode(error) === undefined ? unreadable(error) : error;
  } finally {
    await handle.close();
  }
  return parser.sessions();
}

async function ingest(io: CliIo, c: Extract<Command, { name: 'ingest' }>): Promise<number> {
  const sessions = await readEventsFile(c);
  return withEngram(
    io,
    c,
    async (engram) => {
      const totals = { appended: 0, skipped: 0, memories: 0 };
      const perSession: {
        agent: string;
        session: string;
        appended: number;
        skipped: number;
        memories: number;
      }[] = [];
      for (const session of sessions) {
        let appended = 0;
        let skipped = 0;
        let memories = 0;
        for (let i = 0; i < session.events.length; i += APPEND_CHUNK) {
          const slice = session.events.slice(i, i + APPEND_CHUNK);
          // With --user, every event is that user's (and so is each memory made from one).
          const chunk = c.user === null ? slice : slice.map((e) => ({ ...e, userId: c.user }));
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
        perSession.push({ agent: session.agentId, session: session.sessionId, appended, skipped, memories });
        if (!c.json) {
          out(
            io,
            `${session.agentId} / ${session.sessionId}: ${appended} events appended, ${skipped} already stored, ${memories} memories`,
          );
        }
      }
      if (c.json) {
        outJson(io, {
          user: c.user,
          sessions: perSession,
          totals: { sessions: sessions.length, ...totals },
        });
        return EXIT.ok;
      }
      out(
        io,
        `Ingested ${sessions.length} session${sessions.length === 1 ? '' : 's'}: ${totals.appended} events appended, ${totals.skipped} already stored, ${totals.memories} memories added.`,
      );
      if (totals.memories > 0) out(io, "Run 'engram drain' to embed them (keyword search works already).");
      return EXIT.ok;
    },
    { access: 'write', creates: true, writes: true },
  );
}

async function drain(io: CliIo, c: Extract<Command, { name: 'drain' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      const progress = createProgress(io.stderr, 'embedding');
      const summary = await engram
        .drain({
          ...(c.agent === null ? {} : { agentId: c.agent }),
          onProgress: (d, t) => progress.update(d, t),
        })
        .finally(() => progress.finish());
      if (c.json) outJson(io, { embedder: engram.embedderLabel, ...summary });
      else
        out(
          io,
          `Drained ${summary.rows} rows in ${summary.batches} batch${summary.batches === 1 ? '' : 'es'} with ${engram.embedderLabel}: ready ${summary.ready}, error ${summary.error}, ftsOnly ${summary.ftsOnly}, stale ${summary.stale} · backlog ${summary.backlog ?? '—'} · ${summary.outcome}`,
        );
      return summary.outcome === 'completed' ? EXIT.ok : EXIT.failure;
    },
    { access: 'write', writes: true },
  );
}

async function maintain(io: CliIo, c: Extract<Command, { name: 'maintain' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      const agents = c.agent === null ? await engram.listAgents() : [c.agent];
      if (agents.length === 0) {
        if (c.json) outJson(io, { model: engram.modelLabel, user: c.user, dryRun: c.dryRun, agents: [] });
        else out(io, 'No agents in this database yet; nothing to maintain.');
        return EXIT.ok;
      }
      let failed = false;
      const passes: unknown[] = [];
      for (const agent of agents) {
        // With --user, a pass over that user's memories only (the facade's `maintain({ userId })`).
        const result = await engram.runner.run(agent, {
          force: c.force,
          dryRun: c.dryRun,
          ...(c.user === null ? {} : { userId: c.user }),
        });
        if (
          result.report !== null &&
          (result.report.cheap.outcome === 'failed' || result.report.heavy.outcome === 'failed')
        ) {
          failed = true;
        }
        const notes = (await import('./transfer-commands.js')).maintainNotes(agent, result);
        for (const warning of notes.warnings) io.stderr.write(printable(`warning: ${warning}\n`, 'lines'));
        if (c.json) {
          passes.push({
            agent,
            skipped: result.skipped,
            report: result.report,
            details: result.details ?? null,
          });
          continue;
        }
        out(io, formatPass(agent, result, engram.modelLabel !== null));
        if (result.details?.tookOverLease === true) {
          out(io, "  took over this agent's maintenance lease from another holder (--force)");
        }
        for (const line of notes.lines) out(io, `  ${line}`);
      }
      if (c.json) outJson(io, { model: engram.modelLabel, user: c.user, dryRun: c.dryRun, agents: passes });
      else if (c.dryRun) out(io, 'Dry run: nothing was changed.');
      else if (engram.modelLabel === null) out(io, `Heavy phase skipped: ${NO_MODEL_NOTE}.`);
      return failed ? EXIT.failure : EXIT.ok;
    },
    // A dry run changes nothing: it opens the file read-only.
    c.dryRun ? { access: 'read' } : { access: 'write', writes: true },
  );
}

/**
 * `engram health`: runs the file's integrity check (`PRAGMA quick_check`), then prints the counts and the
 * check. Exits 1 when the check failed — also when the damage keeps the counts from being read at all.
 */
async function health(io: CliIo, c: Extract<Command, { name: 'health' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      const integrity = await engram.store.checkIntegrity();
      const failed = integrity.state === 'failed';
      let dto: HealthDto;
      try {
        dto = await engram.health(c.agent);
      } catch (error) {
        if (!failed) throw error;
        // The damage keeps the counts from being read: the failed check is the report.
        if (c.json) outJson(io, { integrity });
        else out(io, formatIntegrity(integrity));
        throw new EngramCliError(
          'ENGRAM_CLI_STORE_FAILED',
          engram.store.integrityAllowsWrites ? INTEGRITY_DAMAGED_ROWS : INTEGRITY_FAILED,
          { cause: error },
        );
      }
      if (c.json) outJson(io, dto);
      else out(io, formatHealth(dto, c.agent === null ? 'all agents' : `agent ${c.agent}`));
      if (failed) {
        throw new EngramCliError(
          'ENGRAM_CLI_STORE_FAILED',
          engram.store.integrityAllowsWrites ? INTEGRITY_DAMAGED_ROWS : INTEGRITY_FAILED,
        );
      }
      return EXIT.ok;
    },
    { access: 'read' },
  );
}

export { EXIT } from './command-support.js';

/**
 * Runs one parsed subcommand other than `demo`; resolves with the exit code. The modules of `ingest`, `export`,
 * `import`, `maintain`'s notes, `serve` and `mcp` load with their command: a one-shot search does not load them.
 */
export async function runCommand(io: CliIo, command: Exclude<Command, { name: 'demo' }>): Promise<number> {
  switch (command.name) {
    case 'remember':
      return remember(io, command);
    case 'search':
      return search(io, command);
    case 'get':
      return get(io, command);
    case 'list':
      return (await import('./commands-scope.js')).list(io, command);
    case 'update':
      return (await import('./commands-scope.js')).update(io, command);
    case 'forget':
      return (await import('./commands-scope.js')).forget(io, command);
    case 'history':
      return (await import('./commands-scope.js')).history(io, command);
    case 'ingest':
      return ingest(io, command);
    case 'drain':
      return drain(io, command);
    case 'maintain':
      return maintain(io, command);
    case 'export':
      return (await import('./transfer-commands.js')).exportCommand(io, command);
    case 'import':
      return (await import('./transfer-commands.js')).importCommand(io, command);
    case 'health':
      return health(io, command);
    case 'serve':
      return (await import('./commands-serve.js')).serve(io, command);
    case 'inspect':
      return (await import('./commands-inspect.js')).inspect(io, command);
    case 'mcp':
      return (await import('./commands-serve.js')).mcp(io, command);
  }
}
