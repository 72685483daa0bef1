/**
 * `engram demo`: ingests the bundled sample, remembers a few facts, drains embeddings with a progress bar,
 * runs example searches with their explanations, runs a maintenance pass, prints a diagnostics summary and
 * serves the health page. Idempotent: a second run adds nothing.
 */
import { redactConnectionUrl } from '@engram/contracts';
import { type EventInput, embedderChoiceFromEnv, openEngine } from '@engram/memory/compose';
import type { Command } from './args-spec.js';
import { EXIT, formatPass, NO_MODEL_NOTE } from './commands.js';
import { loadEncryptionKey } from './encryption-key.js';
import {
  cliInvocation,
  formatDiagnostics,
  formatExecution,
  formatResults,
  padTo,
  shellQuote,
} from './format.js';
import type { CliIo } from './io.js';
import { createProgress } from './progress.js';
import { SAMPLE_FACTS, SAMPLE_NEXT_SEARCH, SAMPLE_SEARCHES, SAMPLE_SESSIONS } from './sample/sample-data.js';
import { serveHealthPage } from './serve.js';
import { printable } from './terminal-text.js';

const DAY = 24 * 60 * 60 * 1000;
const MINUTE = 60 * 1000;

/** Options of {@link runDemo} beyond the command line. */
export interface DemoOptions {
  /** Wall clock for the sample's timestamps (default `Date.now`). */
  readonly now?: () => number;
}

function heading(io: CliIo, n: number, title: string): void {
  io.stdout.write(printable(`\n${n}. ${title}\n`, 'lines'));
}

function line(io: CliIo, text: string): void {
  io.stdout.write(printable(`${text}\n`, 'lines'));
}

/** Runs the demo; resolves with the exit code (after the health server stops, unless `--no-serve`). */
export async function runDemo(
  io: CliIo,
  command: Extract<Command, { name: 'demo' }>,
  options: DemoOptions = {},
): Promise<number> {
  const now = options.now ?? Date.now;
  // The model loads while the sample is ingested (the searches of step 4 wait for it, if need be).
  const key = await loadEncryptionKey(command.keyFile, io.env);
  const engram = await openEngine({
    path: command.db,
    env: io.env,
    warm: true,
    ...(key === undefined ? {} : { encryptionKey: key }),
  });
  try {
    const width = io.stdout.isTTY === true && typeof io.stdout.columns === 'number' ? io.stdout.columns : 110;
    line(io, 'Engram demo: embedded, observable long-term memory for AI agents');
    // A PostgreSQL URL may carry a password: it is never printed.
    line(io, `  database  ${redactConnectionUrl(engram.path)}`);
    line(io, `  embedder  ${engram.embedderLabel}`);
    if (engram.embedderChoice === 'deterministic' && embedderChoiceFromEnv(io.env) === null) {
      // A demo file from before USE-lite became the default keeps its embedder: say how to see the new one.
      line(io, '            (this file keeps the embedder it was made with; a new --db gets USE-lite)');
    }
    line(
      io,
      `  model     ${engram.modelLabel ?? 'none (extraction and the heavy maintenance phase are skipped)'}`,
    );

    // 1. The archive: sessions of two agents, appended and ingested by cursor (idempotent by seq).
    const agents = [...new Set(SAMPLE_SESSIONS.map((s) => s.agentId))];
    heading(
      io,
      1,
      `Ingest the sample: ${agents.length} agents, ${SAMPLE_SESSIONS.length} sessions (messages, tool calls, tool results)`,
    );
    const start = now();
    const totals = { appended: 0, skipped: 0, memories: 0 };
    const fresh: { agentId: string; sessionId: string; count: number }[] = [];
    const nameWidth = Math.max(...SAMPLE_SESSIONS.map((s) => s.agentId.length + s.sessionId.length + 3));
    for (const session of SAMPLE_SESSIONS) {
      const base = start - session.daysAgo * DAY;
      const events: EventInput[] = session.events.map((e) => ({ ...e, createdAt: base + e.seq * MINUTE }));
      const r = await engram.ingestor.appendAndIngest(session.agentId, session.sessionId, events);
      totals.appended += r.appended;
      totals.skipped += r.skipped;
      totals.memories += r.ingest.memories;
      if (r.appended > 0)
        fresh.push({ agentId: session.agentId, sessionId: session.sessionId, count: events.length });
      line(
        io,
        `  ${padTo(`${session.agentId} / ${session.sessionId}`, nameWidth)} ${r.appended} events appended, ${r.skipped} already stored → ${r.ingest.memories} memories`,
      );
    }
    line(
      io,
      totals.appended === 0
        ? `  Nothing new: all ${totals.skipped} events were already stored (ingestion is idempotent by seq and cursor).`
        : `  ${totals.appended} events appended, ${totals.memories} event memories written, tagged tool:/file:/type:/hash:/seq: from metadata alone.`,
    );

    // Extraction of the new sessions: real with a model, recorded as skipped without one.
    for (const session of fresh) {
      const events = await engram.store.readEvents(session.agentId, session.sessionId, 1, session.count);
      const result = await engram.extract(events);
      if (result !== null && engram.modelLabel !== null) {
        const d = result.report.decisions;
        line(
          io,
          `  extraction ${session.agentId} / ${session.sessionId}: ${result.report.outcome}, ${result.report.candidates} candidates (ADD ${d.ADD}, UPDATE ${d.UPDATE}, SUPERSEDE ${d.SUPERSEDE}, NOOP ${d.NOOP}, CHALLENGE ${d.CHALLENGE})`,
        );
      }
    }

    // 2. The core layer: facts through the agent-facing tool (exact duplicates dropped by hash).
    heading(io, 2, 'Remember facts with the memory_remember tool');
    for (const fact of SAMPLE_FACTS) {
      const result = await engram.tools.execute(
        'memory_remember',
        { content: fact.content, topic: fact.topic },
        { agentId: fact.agentId },
      );
      line(io, `  ${padTo(fact.agentId, 9)} ${result.ok ? '' : 'failed: '}${result.text}`);
    }

    // 3. Embeddings: the drain moves pending rows to ready.
    heading(io, 3, 'Embed pending memories (the embedding drain)');
    const progress = createProgress(io.stderr, 'embedding');
    const drained = await engram
      .drain({ onProgress: (d, t) => progress.update(d, t) })
      .finally(() => progress.finish());
    line(
      io,
      drained.rows === 0
        ? '  Nothing pending: every memory already has its vector.'
        : `  ${drained.rows} rows in ${drained.batches} batch${drained.batches === 1 ? '' : 'es'}: ready ${drained.ready}, error ${drained.error}, ftsOnly ${drained.ftsOnly}, stale ${drained.stale} · backlog ${drained.backlog ?? '—'}`,
    );

    // 4. Retrieval: lexical (FTS5 words, trigram, short-CJK LIKE) and vector arms fused by RRF.
    heading(io, 4, 'Example searches (hybrid: FTS5 + sqlite-vec, fused; each result explains itself)');
    for (const example of SAMPLE_SEARCHES) {
      const response = await engram.retriever.search(example.agentId, example.query, { limit: 3 });
      line(io, `\n  ▸ ${example.agentId}: "${example.query}" — ${example.shows}`);
      line(io, `    ${formatExecution(response.execution)}`);
      line(io, formatResults(response.results, { explain: true, width }));
    }

    // 5. Maintenance: the cheap phase always; the heavy phase only with a model.
    heading(io, 5, 'Maintenance pass');
    for (const agent of agents) {
      const result = await engram.maintain(agent);
      line(io, `  ${formatPass(agent, result, engram.modelLabel !== null)}`);
    }
    if (engram.modelLabel === null) line(io, `  Heavy phase skipped: ${NO_MODEL_NOTE}.`);
    const late = await engram.drain();
    if (late.rows > 0)
      line(io, `  Embedded ${late.rows} rows the pass wrote (ready ${late.ready}, error ${late.error}).`);

    // 6. Diagnostics: what the collector saw in this process.
    heading(io, 6, 'Diagnostics (this process)');
    line(io, formatDiagnostics(engram.collector.snapshot()).replace(/^(?=.)/gm, '  '));
    const health = await engram.health(null);
    const t = health.store.totals;
    line(
      io,
      `\n  Store totals: ${t.memories} memories (${t.events} events, ${t.facts} facts, ${t.skills} skills)`,
    );

    // A follow-up the user can paste into the same shell (the demo's file is not the CLI's default --db).
    const next = [
      cliInvocation(io),
      'search',
      shellQuote(SAMPLE_NEXT_SEARCH.query),
      '--agent',
      SAMPLE_NEXT_SEARCH.agentId,
      '--explain',
      '--db',
      shellQuote(command.db),
    ].join(' ');
    if (!command.serve) {
      line(io, `\nDone (--no-serve). Next, search the sample yourself:\n  ${next}`);
      return EXIT.ok;
    }
    const { server, fellBackFrom } = await serveHealthPage(engram, command.port);
    if (fellBackFrom !== null) line(io, `  Port ${fellBackFrom} is taken; using ${server.port} instead.`);
    heading(io, 7, 'Health page');
    line(io, `  ${server.url}`);
    line(io, `  (JSON: ${server.url}api/health) Press Ctrl+C to stop.`);
    line(io, `\nMeanwhile, in another terminal, search the sample yourself:\n  ${next}`);
    await io.stopSignal;
    await server.close();
    return EXIT.ok;
  } finally {
    await engram.close();
  }
}
