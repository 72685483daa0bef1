/**
 * `engram export` and `engram import` (the store's streaming export format as JSON Lines on stdout and
 * stdin), and the notes `engram maintain` prints beside each pass: what a dry run would archive, the rows a
 * pass wrote and embedded, invalid model answers, and warnings when a pass archives many rows.
 */
import { existsSync } from 'node:fs';
import { redactConnectionUrl } from '@engram/contracts';
import type { ImportChoices } from '@engram/memory';
import {
  BUILT_IN_PROFILES,
  type EmbedderChoice,
  type ExportRecord,
  exportForUser,
  formatExportLine,
  type ImportSummary,
  type MaintenancePassResult,
  parseExportLine,
  probeStore,
} from '@engram/memory/compose';
import type { Command } from './args-spec.js';
import { EXIT, out, outJson, withEngram } from './command-support.js';
import { EngramCliError } from './errors.js';
import type { CliIo, TextSink } from './io.js';
import { readLines } from './line-reader.js';
import { printable } from './terminal-text.js';

/** A pass that archives at least this many rows says so on stderr. */
export const ARCHIVE_WARNING_ROWS = 100;
/** A dry run lists at most this many rows it would archive (then counts the rest). */
const PLAN_LINES = 20;
/** Export and import report progress every this many records. */
const PROGRESS_EVERY = 5000;

/** The lines printed under a pass and the warnings for stderr. */
export function maintainNotes(
  agentId: string,
  result: MaintenancePassResult,
): { readonly lines: readonly string[]; readonly warnings: readonly string[] } {
  const details = result.details;
  if (result.report === null || details === undefined || details === null) return { lines: [], warnings: [] };
  const lines: string[] = [];
  const warnings: string[] = [];
  const { archived, scanned, complete } = details.archive;
  if (details.dryRun) {
    lines.push(`would archive ${archived} of ${scanned} rows scanned:`);
    for (const p of details.plan.slice(0, PLAN_LINES)) {
      lines.push(`  ${p.id}  ${p.kind}  age ${p.ageDays} d  importance ${p.importance}`);
    }
    if (details.plan.length > PLAN_LINES) lines.push(`  … and ${details.plan.length - PLAN_LINES} more`);
  }
  if (!complete) {
    lines.push(`the decay scan stopped after ${scanned} rows; the next pass continues where it stopped`);
  }
  if (details.written.rows > 0) {
    lines.push(
      `wrote ${details.written.rows} rows (merges, reflections, persona): embedded ${details.written.embedded}, pending ${details.written.pending}`,
    );
  }
  for (const i of details.invalidOutputs) {
    lines.push(
      `invalid model answer: ${i.schema} at ${i.path === '' ? 'the top level' : i.path} (${i.issue})`,
    );
  }
  const verb = details.dryRun ? 'would archive' : 'archived';
  if (archived >= ARCHIVE_WARNING_ROWS) {
    warnings.push(
      `agent ${agentId}: ${verb} ${archived} rows in one pass${details.dryRun ? '' : ' (they stay findable with includeArchived; engram maintain --dry-run previews a pass)'}`,
    );
  }
  if (!complete && archived > 0) {
    warnings.push(
      `agent ${agentId}: the pass stopped its scan before the end; the next pass may archive more rows`,
    );
  }
  return { lines, warnings };
}

/** Writes one chunk, waiting for the stream to drain when its buffer is full (constant memory). */
async function write(sink: TextSink | NodeJS.WritableStream, text: string): Promise<void> {
  const ok = sink.write(text);
  const stream = sink as Partial<NodeJS.WritableStream>;
  if (ok === false && typeof stream.once === 'function') {
    await new Promise<void>((resolve) => stream.once?.('drain', () => resolve()));
  }
}

/** `engram export`: the records as JSON Lines on stdout, progress and the summary on stderr. */
export async function exportCommand(io: CliIo, c: Extract<Command, { name: 'export' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      if (c.agent !== null) {
        const agents = await engram.listAgents();
        if (!agents.includes(c.agent)) {
          const known = agents.length === 0 ? 'none' : agents.join(', ');
          io.stderr.write(
            printable(
              `engram export: agent ${c.agent} has no records; agents in this file: ${known}\n`,
              'lines',
            ),
          );
          return EXIT.failure;
        }
      }
      const sink = io.stdoutStream ?? io.stdout;
      let records = 0;
      let end: Extract<ExportRecord, { type: 'end' }> | null = null;
      const all = engram.store.exportRecords({
        ...(c.agent === null ? {} : { agentId: c.agent }),
        vectors: c.vectors,
      });
      // With --user or --session, what that scope sees, as the facade's `export({ userId, sessionId })` gives it.
      const scoped = c.user === null && c.session === null ? all : exportForUser(all, c.user, c.session);
      for await (const record of scoped) {
        await write(sink, `${formatExportLine(record)}\n`);
        records += 1;
        if (record.type === 'end') end = record;
        if (records % PROGRESS_EVERY === 0) io.stderr.write(`exported ${records} records\n`);
      }
      const summary = {
        records,
        counts: end?.counts ?? null,
        skipped: end?.skipped ?? 0,
        vectors: c.vectors,
        user: c.user,
      };
      if (c.json) io.stderr.write(`${JSON.stringify(summary)}\n`);
      else {
        const skipped = end?.skipped ?? 0;
        io.stderr.write(
          skipped === 0
            ? `Exported ${records} records.\n`
            : `Exported ${records} records; left out ${skipped} damaged row${skipped === 1 ? '' : 's'} an import would refuse (see engram health).\n`,
        );
      }
      return EXIT.ok;
    },
    { access: 'read' },
  );
}

/** The built-in embedder that made a profile, if any (so a new file adopts it and keeps the vectors). */
function choiceFor(header: ExportRecord | undefined): EmbedderChoice | undefined {
  if (header === undefined || header.type !== 'header' || header.embedder === null) return undefined;
  const { id, dimensions } = header.embedder;
  const same = (p: { id: string; dimensions: number }) => p.id === id && p.dimensions === dimensions;
  if (same(BUILT_IN_PROFILES.deterministic)) return 'deterministic';
  if (same(BUILT_IN_PROFILES.use)) return 'use';
  return undefined;
}

function formatSummary(db: string, s: ImportSummary, choices: ImportChoices): string {
  const parts = (Object.keys(s.imported) as (keyof ImportSummary['imported'])[]).map(
    (k) => `${k} ${s.imported[k]} (unchanged ${s.unchanged[k]}, conflicts ${s.conflicts[k]})`,
  );
  return `Imported into ${redactConnectionUrl(db)}: ${parts.join(', ')}; vectors kept for ${s.vectorsImported} memories.\n${describeChoices(choices)}.`;
}

/** The summary's words for `--agent` and `--keep-ages`. */
export function describeChoices(choices: ImportChoices): string {
  const ages =
    choices.keepAges === true
      ? 'Original ages kept (--keep-ages): the next maintenance pass may archive old memories'
      : 'Decay clocks start at this import, so maintenance ages the memories from now (--keep-ages keeps their original ages)';
  return choices.agentId === undefined
    ? ages
    : `Every record was imported into agent ${choices.agentId} (--agent). ${ages}`;
}

/** `engram import`: reads an export from stdin, line by line, into the database (created when missing). */
export async function importCommand(io: CliIo, c: Extract<Command, { name: 'import' }>): Promise<number> {
  const input = io.stdin;
  if (input === undefined || (input as { isTTY?: boolean }).isTTY === true) {
    throw new EngramCliError(
      'ENGRAM_CLI_INVALID_ARGUMENTS',
      'engram import reads an export from stdin: engram import --db file.db < memories.jsonl',
    );
  }
  // Each line within the line limit: a longer one is refused before it is held whole.
  const lines = readLines(input as AsyncIterable<Uint8Array | string>, 'the export')[Symbol.asyncIterator]();
  const next = async (): Promise<ExportRecord | undefined> => {
    for (;;) {
      const step = await lines.next();
      if (step.done === true) return undefined;
      if (step.value.text.trim() === '') continue;
      return parseExportLine(step.value.text, step.value.number);
    }
  };
  const header = await next();
  if (header === undefined) {
    throw new EngramCliError(
      'ENGRAM_CLI_INVALID_ARGUMENTS',
      'engram import: stdin is empty (no export to read)',
    );
  }
  let read = 0;
  async function* records(): AsyncGenerator<ExportRecord> {
    if (header !== undefined) yield header;
    for (let r = await next(); r !== undefined; r = await next()) yield r;
  }
  const choices: ImportChoices = {
    ...(c.agent === null ? {} : { agentId: c.agent }),
    ...(c.keepAges ? { keepAges: true } : {}),
  };
  // A new database adopts the export's embedder (when built in), so its vectors are kept; an existing one keeps
  // its own (a file that exists, a PostgreSQL database that holds Engram's schema).
  const held = await holdsDatabase(c.db);
  const embedder = held ? undefined : choiceFor(header);
  return withEngram(
    io,
    c,
    async (engram) => {
      const store = engram.store;
      // Loaded with the command (not with `maintain`'s notes, which share this module).
      const { importClock, prepareImport } = await import('@engram/memory');
      const summary = await store.importRecords(prepareImport(records(), choices), {
        ...importClock(choices, Date.now()),
        onProgress: (n) => {
          if (Math.floor(n / PROGRESS_EVERY) > Math.floor(read / PROGRESS_EVERY)) {
            io.stderr.write(`imported ${n} records\n`);
          }
          read = n;
        },
      });
      if (c.json)
        outJson(io, {
          ...summary,
          agent: c.agent,
          ages: c.keepAges ? 'kept' : 'restarted',
        });
      else out(io, formatSummary(c.db, summary, choices));
      return EXIT.ok;
    },
    { access: 'write', creates: true, writes: true, ...(embedder === undefined ? {} : { embedder }) },
  );
}

/** True when `db` already holds a database: an existing file, or a PostgreSQL database with Engram's schema. */
async function holdsDatabase(db: string): Promise<boolean> {
  const { kind, fresh } = await probeStore(db);
  return kind === 'sqlite' ? existsSync(db) : !fresh;
}
