/**
 * Output formatting of the CLI: result lists with explanations, execution lines, the health table, the
 * diagnostics summary and the progress bar. Pure functions from data to text; a missing sample is an em dash.
 */

import type { DiagnosticsSnapshot, DistributionSummary, HealthDto } from '@engram/contracts';
import { checkTimestamp } from '@engram/contracts';
import type {
  EventRecord,
  MemoryRecord,
  RetrievalExecution,
  RetrievalExplanation,
  RetrievalResult,
} from '@engram/memory/compose';

/** The em dash shown for a missing sample (never `0 ms`). */
export const MISSING = '—';

/**
 * Characters a terminal draws two columns wide (East Asian Wide and Fullwidth ranges). A display property,
 * not a script: it is not the contracts CJK class, which decides tokenisation and search.
 */
// check-shape: not the CJK rule — East Asian Width decides terminal columns, not tokenisation.
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/u;

/** Terminal columns of a text: CJK and full-width characters take two, combining marks none. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) {
    if (/\p{M}/u.test(ch)) continue;
    width += WIDE.test(ch) || (ch.codePointAt(0) ?? 0) >= 0x1f300 ? 2 : 1;
  }
  return width;
}

/** Collapses whitespace and cuts the text to `max` columns, ending with `…` when cut. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/gu, ' ').trim();
  if (displayWidth(flat) <= max) return flat;
  let out = '';
  let width = 0;
  for (const ch of flat) {
    const w = displayWidth(ch);
    if (width + w > max - 1) break;
    out += ch;
    width += w;
  }
  return `${out}…`;
}

/** Pads to `width` columns (left-aligned, or right-aligned for numbers). */
export function padTo(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'left' ? text + fill : fill + text;
}

/**
 * Renders rows as an aligned table with a header and a rule. Columns align as `align` says; without it, a
 * column of numbers (and em dashes) aligns right.
 */
export function renderTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  options: { readonly indent?: string; readonly align?: readonly ('left' | 'right')[] } = {},
): string {
  const indent = options.indent ?? '  ';
  const widths = headers.map((h, i) =>
    Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ''))),
  );
  const isNumber = (cell: string): boolean => /^[-−]?[\d.,]+( ?[a-z%]+)?$/.test(cell);
  const numeric = headers.map((_, i) =>
    options.align?.[i] !== undefined
      ? options.align[i] === 'right'
      : rows.some((r) => isNumber(r[i] ?? '')) &&
        rows.every((r) => isNumber(r[i] ?? '') || (r[i] ?? '') === MISSING || r[i] === ''),
  );
  const line = (cells: readonly string[]): string =>
    `${indent}${cells
      .map((c, i) => padTo(c, widths[i] ?? 0, numeric[i] === true && cells !== headers ? 'right' : 'left'))
      .join('  ')}`.trimEnd();
  return [line(headers), `${indent}${widths.map((w) => '─'.repeat(w)).join('  ')}`, ...rows.map(line)].join(
    '\n',
  );
}

/** Milliseconds for people: `0.42 ms`, `12.3 ms`, `1.20 s`; null is the em dash. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return MISSING;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** A count with thousands separators (`12,345`); null is the em dash. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return MISSING;
  return Math.round(n).toLocaleString('en-US');
}

function num(value: number, digits: number): string {
  return value.toFixed(digits);
}

/** One line explaining a result: arms with ranks and scores, the fusion terms and the final score. */
export function formatExplanation(e: RetrievalExplanation): string {
  const parts: string[] = [];
  if (e.lexicalRank !== undefined) {
    parts.push(
      `lexical #${e.lexicalRank}${e.lexicalScore === undefined ? '' : ` (score ${num(e.lexicalScore, 2)})`}`,
    );
  }
  if (e.vectorRank !== undefined) {
    parts.push(
      `vector #${e.vectorRank}${e.similarity === undefined ? '' : ` (similarity ${num(e.similarity, 2)})`}`,
    );
  }
  if (parts.length === 0) parts.push(`arms: ${e.arms.join('+') || 'none'}`);
  parts.push(`rrf ${num(e.rrf, 5)}`, `importance ${num(e.importance, 2)}`, `recency ${num(e.recency, 2)}`);
  return `${parts.join(' · ')} → ${num(e.final, 5)}`;
}

/** The archive pointer of an event memory (`session/<id>#<from>-<to>`), or null. */
export function pointerOf(record: Pick<MemoryRecord, 'sessionId' | 'seqFrom' | 'seqTo'>): string | null {
  if (record.sessionId === null || record.seqFrom === null) return null;
  const to = record.seqTo ?? record.seqFrom;
  return `session/${record.sessionId}#${record.seqFrom}${to === record.seqFrom ? '' : `-${to}`}`;
}

/** The tags worth showing next to a result (tool, file, topic), at most four. */
function shownTags(record: MemoryRecord): readonly string[] {
  return record.tags.filter((t) => /^(tool|file|topic):/.test(t)).slice(0, 4);
}

/**
 * Ranked results: a line with rank, score, kind and content; a line with the archive pointer and tags; and,
 * with `explain`, a line saying which arms found the result, at which ranks and scores.
 */
export function formatResults(
  results: readonly RetrievalResult[],
  options: { readonly explain: boolean; readonly width?: number },
): string {
  if (results.length === 0) return '    (no results)';
  const width = Math.max(40, options.width ?? 100);
  const lines: string[] = [];
  for (const [i, r] of results.entries()) {
    const head = `  ${padTo(`${i + 1}.`, 3, 'right')} ${num(r.score, 5)}  ${padTo(r.record.kind, 6)} `;
    lines.push(`${head}${oneLine(r.record.content, Math.max(20, width - displayWidth(head)))}`);
    const pointer = pointerOf(r.record);
    const meta = [...(pointer === null ? [] : [pointer]), ...shownTags(r.record)];
    if (meta.length > 0) lines.push(`      ${oneLine(meta.join(' · '), Math.max(20, width - 6))}`);
    if (options.explain) lines.push(`      ${formatExplanation(r.explanation)}`);
  }
  return lines.join('\n');
}

/** One line about a retrieval call: outcome, arms, degradations, candidates and total latency. */
export function formatExecution(execution: RetrievalExecution): string {
  const arms =
    execution.arms === undefined || execution.arms.length === 0 ? 'no arm' : execution.arms.join('+');
  const degraded =
    execution.degradations.length === 0 ? '' : ` · degraded: ${execution.degradations.join(', ')}`;
  const c = execution.candidates;
  return `${execution.outcome} · ${arms} · candidates lexical ${c.fts}, vector ${c.vector}, selected ${c.selected} · ${formatMs(execution.latencies.total)}${degraded}`;
}

/**
 * Epoch milliseconds as an ISO 8601 instant; total: a value no `Date` can hold (a row written before the
 * timestamp rule, or by another tool) prints a typed placeholder such as `(invalid timestamp: outOfRange)`
 * instead of throwing a RangeError.
 */
export function formatTimestamp(ms: unknown): string {
  const problem = checkTimestamp(ms);
  return problem === null ? new Date(ms as number).toISOString() : `(invalid timestamp: ${problem})`;
}

/** A memory record for `engram get`. */
export function formatMemory(record: MemoryRecord): string {
  const rows: [string, string][] = [
    ['id', record.id],
    ['agent', record.agentId],
    ...(record.userId === null ? [] : [['user', record.userId] as [string, string]]),
    ['kind', record.kind],
    ['lifecycle', record.lifecycle],
    ['embedding', record.embeddingState],
    ['importance', num(record.importance, 2)],
    ['revision', String(record.revision)],
    ['created', formatTimestamp(record.createdAt)],
    ['updated', formatTimestamp(record.updatedAt)],
    [
      'tags',
      record.tags.length === 0 ? MISSING : record.tags.filter((t) => !t.startsWith('hash:')).join(' '),
    ],
  ];
  const pointer = pointerOf(record);
  if (pointer !== null) rows.push(['pointer', pointer]);
  const keyWidth = Math.max(...rows.map(([k]) => k.length));
  return [...rows.map(([k, v]) => `${padTo(k, keyWidth)}  ${v}`), '', record.content].join('\n');
}

/** Archived events for `engram get <pointer>`. */
export function formatEvents(events: readonly EventRecord[]): string {
  return events
    .map((e) => {
      const head = `#${e.seq} ${e.role} ${e.type}${e.toolName === null ? '' : ` ${e.toolName}`}`;
      const meta = Object.keys(e.metadata).length === 0 ? '' : `\n    metadata ${JSON.stringify(e.metadata)}`;
      const body = e.content === '' ? '' : `\n${e.content.replace(/^/gm, '    ')}`;
      return `${head}${meta}${body}`;
    })
    .join('\n');
}

function dist(d: DistributionSummary): [string, string, string] {
  return [formatMs(d.p50), formatMs(d.p95), formatMs(d.max)];
}

/** The per-purpose retrieval table (operations, p50/p95/max of the total latency, outcomes). */
export function formatRetrievalTable(snapshot: DiagnosticsSnapshot): string {
  const rows = Object.entries(snapshot.agent.retrieval).map(([purpose, p]) => {
    const outcomes = Object.entries(p.outcomes)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    const degradations = Object.entries(p.degradations)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    return [
      purpose,
      formatCount(p.operations),
      ...dist(p.latency.total),
      outcomes || MISSING,
      degradations || MISSING,
    ];
  });
  return renderTable(['purpose', 'calls', 'p50', 'p95', 'max', 'outcomes', 'degradations'], rows, {
    align: ['left', 'right', 'right', 'right', 'right', 'left', 'left'],
  });
}

function gauge(value: number | null): string {
  return value === null ? MISSING : formatCount(value);
}

/** The diagnostics summary: retrieval per purpose, drain, maintenance, extraction and the process-wide gauges. */
export function formatDiagnostics(snapshot: DiagnosticsSnapshot): string {
  const a = snapshot.agent;
  const p = snapshot.process;
  const e = a.embedding;
  const m = a.maintenance;
  const lines = [
    'Retrieval (total latency per purpose)',
    formatRetrievalTable(snapshot),
    '',
    `Embedding drain   ${plural(e.batches, 'batch', 'batches')}, ${plural(e.rows, 'row', 'rows')} · ready ${e.transitions.ready}, error ${e.transitions.error}, ftsOnly ${e.transitions.ftsOnly}, stale ${e.transitions.stale} · batch p50 ${formatMs(e.duration.p50)}, p95 ${formatMs(e.duration.p95)}`,
    `Maintenance       ${plural(m.passes, 'pass', 'passes')} · archived ${m.cheap.archived}, repaired ${m.cheap.repaired}, pruned ${m.cheap.pruned} · heavy ${outcomeList(m.heavy.outcomes)} · model calls ${m.heavy.modelCalls}, budget denials ${sumValues(m.heavy.denials)}`,
    `Extraction        ${plural(a.extraction.chunks, 'chunk', 'chunks')} · ${outcomeList(a.extraction.outcomes)}`,
    '',
    'Process-wide gauges',
    `  embedding backlog      ${gauge(p.embeddingBacklog.total)} rows (${gauge(p.embeddingBacklog.activeAgents)} agents)`,
    `  extraction queue       depth ${gauge(p.extractionQueue.depth)}, oldest ${formatMs(p.extractionQueue.oldestAgeMs)}`,
    `  vector stores          open ${gauge(p.vectorStores.openStores)} (high-water ${gauge(p.vectorStores.openStoresHighWater)})`,
    `  provider (embedding)   queued ${gauge(p.providers.embedding.queued)}, active ${gauge(p.providers.embedding.active)}, admitted ${p.providers.embedding.admissions.admitted}`,
    `  provider (model)       queued ${gauge(p.providers.model.queued)}, active ${gauge(p.providers.model.active)}, admitted ${p.providers.model.admissions.admitted}`,
    `  store statements       ${formatCount(sumValues(p.store.statements))} (${
      Object.entries(p.store.statements)
        .filter(([, n]) => n > 0)
        .map(([k, n]) => `${k} ${formatCount(n)}`)
        .join(', ') || MISSING
    })`,
  ];
  return lines.join('\n');
}

/** `1 batch`, `3 batches`. */
export function plural(n: number, one: string, many: string): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

function sumValues(record: Readonly<Record<string, number>>): number {
  let total = 0;
  for (const value of Object.values(record)) total += value;
  return total;
}

function outcomeList(record: Readonly<Record<string, number>>): string {
  const parts = Object.entries(record)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/** The store part of the health DTO: totals, then counts by kind, lifecycle and embedding state side by side. */
export function formatStoreHealth(dto: HealthDto): string {
  const s = dto.store;
  const columns = [
    Object.entries(s.byKind),
    Object.entries(s.byLifecycle),
    Object.entries(s.byEmbeddingState),
  ];
  const height = Math.max(...columns.map((c) => c.length));
  const rows: string[][] = [];
  for (let i = 0; i < height; i += 1) {
    const row: string[] = [];
    for (const column of columns) {
      const entry = column[i];
      row.push(entry?.[0] ?? '', entry === undefined ? '' : formatCount(entry[1]));
    }
    rows.push(row);
  }
  return [
    `  memories ${formatCount(s.totals.memories)} · events ${formatCount(s.totals.events)} · facts ${formatCount(s.totals.facts)} · skills ${formatCount(s.totals.skills)}`,
    formatIntegrity(s.integrity),
    '',
    renderTable(['kind', 'rows', 'lifecycle', 'rows', 'embedding', 'rows'], rows),
  ].join('\n');
}

/** The integrity line: `  integrity ok (checked 2026-…Z)`, `FAILED …`, or `not checked`. */
export function formatIntegrity(
  integrity:
    | {
        readonly state: string;
        readonly checkedAt: number | null;
        readonly badRows?: number | undefined;
        readonly damagedVectorChunks?: number | undefined;
      }
    | undefined,
): string {
  const when =
    integrity?.checkedAt === null || integrity?.checkedAt === undefined
      ? ''
      : ` (checked ${new Date(integrity.checkedAt).toISOString()})`;
  if (integrity === undefined || integrity.state === 'notChecked') return '  integrity not checked';
  if (integrity.state === 'ok') return `  integrity ok${when}`;
  const rows = integrity.badRows ?? 0;
  const chunks = integrity.damagedVectorChunks ?? 0;
  if (rows === 0 && chunks === 0) return `  integrity FAILED${when}: writes are refused`;
  const what = [
    ...(rows > 0 ? [`${rows} row${rows === 1 ? '' : 's'} no reader can use`] : []),
    ...(chunks > 0 ? [`${chunks} damaged vector chunk${chunks === 1 ? '' : 's'}`] : []),
  ].join(', ');
  return `  integrity FAILED${when}: ${what}; writes stay allowed (forget or restore those rows; a write repairs the chunks)`;
}

/** The live processes using the store, one row each (a random id, never a pid), when the DTO lists them. */
export function formatProcesses(dto: HealthDto): string | null {
  const list = dto.processes?.list;
  if (list === undefined) return null;
  const rows = list.map((p) => {
    const search = p.runtime.agent.retrieval.search;
    let searches = 0;
    let degradations = 0;
    for (const purpose of Object.values(p.runtime.agent.retrieval)) {
      searches += purpose.operations;
      degradations += sumValues(purpose.degradations);
    }
    return [
      `${p.id.slice(0, 8)}${p.self ? ' (this)' : ''}`,
      formatTimestamp(p.startedAt),
      formatTimestamp(p.beatAt),
      formatCount(searches),
      formatMs(search.latency.total.p95),
      formatCount(degradations),
      formatCount(p.runtime.process.extractionQueue.depth),
    ];
  });
  const skipped = dto.processes?.skipped ?? 0;
  return [
    `Processes (${plural(list.length, 'live process', 'live processes')} using the file)`,
    renderTable(['process', 'started', 'last beat', 'searches', 'search p95', 'degraded', 'queue'], rows),
    ...(skipped === 0 ? [] : [`  ${plural(skipped, 'published row', 'published rows')} could not be read`]),
  ].join('\n');
}

/** The whole `engram health` table. */
export function formatHealth(dto: HealthDto, scope: string): string {
  // With the processes listed and no agent asked for, the runtime figures are their totals.
  const live = dto.processes?.list.length;
  const whose =
    live === undefined || dto.runtime.agentId !== null
      ? 'this process only'
      : `totals of ${live} live process${live === 1 ? '' : 'es'} using the file`;
  const processes = formatProcesses(dto);
  return [
    `Store (${scope})`,
    formatStoreHealth(dto),
    '',
    `Runtime diagnostics (${whose})`,
    formatDiagnostics(dto.runtime),
    ...(processes === null ? [] : ['', processes]),
  ].join('\n');
}

/** A progress bar line: `[██████░░░░]  60%  120/200 label`. */
export function renderProgressBar(done: number, total: number, width = 28, label = ''): string {
  const ratio = total <= 0 ? 1 : Math.min(1, Math.max(0, done / total));
  const filled = Math.round(ratio * width);
  const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${percent}  ${done}/${total}${label === '' ? '' : ` ${label}`}`;
}

/** Quotes one argument for a POSIX shell when it needs it (`'…'`, with `'` written as `'\''`). */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** Where the running CLI came from, to print a follow-up command the user can paste into the same shell. */
export interface InvocationContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The script the process runs (`process.argv[1]`). */
  readonly entry?: string;
}

/**
 * The command prefix that runs `engram` from the user's shell: `pnpm -s engram` or `npm run -s engram --` when
 * the demo was started by the root package script (`pnpm demo`, `npm run demo`; nothing is on PATH then),
 * `engram` when the process runs the installed bin, `node <script>` otherwise.
 */
export function cliInvocation(context: InvocationContext): string {
  if (context.env.npm_lifecycle_event === 'demo') {
    return (context.env.npm_config_user_agent ?? '').startsWith('pnpm/')
      ? 'pnpm -s engram'
      : 'npm run -s engram --';
  }
  const entry = context.entry;
  if (entry === undefined || /(^|[\\/])engram(\.cmd)?$/.test(entry)) return 'engram';
  return `node ${shellQuote(entry)}`;
}
