import {
  checkTimestamp,
  estimateTokens,
  formatArchivePointer,
  type RetrievalExecution,
  tokenUnits,
} from '@engram/contracts';
import type { ChunkSpan, MemoryRecord } from '@engram/store';
import { EngramRetrievalError } from './errors.js';
import { agentIdProblem } from './pipeline/validate.js';
import type { InjectionStore } from './ports.js';
import type { Retriever } from './retriever.js';
import { formatMemoryWindow, resultText } from './tools/window.js';

/** Header line of the core block. */
export const CORE_BLOCK_HEADER = '# Core memory (facts)';
/** Header line of the recall block. */
export const RECALL_BLOCK_HEADER = '# Relevant memories';
/** A fact line shows at most this many characters of the fact. */
export const MAX_FACT_LINE_CHARS = 500;
/** A recall line shows at most this many characters of the memory. */
export const MAX_RECALL_LINE_CHARS = 400;
/** Most facts read for the core block. */
export const MAX_CORE_FACTS = 5000;

/** Options of {@link renderCoreBlock}. */
export interface CoreBlockOptions {
  /** Token budget of the whole block, header included. */
  readonly budgetTokens: number;
}

/** Input of {@link buildInjection}. */
export interface InjectionInput {
  /** Reads the agent's active facts. */
  readonly store: InjectionStore;
  /** Retrieves the recall block (`injection` purpose); without it the recall block is empty. */
  readonly retriever?: Pick<Retriever, 'injection'>;
  readonly agentId: string;
  /** The current user turn; without it the recall block is empty. */
  readonly query?: string;
  /** Total token budget of both blocks (default 2,000). */
  readonly budgetTokens?: number;
  /** Share of the budget the core block may use at most (default: 60% of `budgetTokens`). */
  readonly coreBudgetTokens?: number;
  /** Most recalled memories (default 8). */
  readonly recallLimit?: number;
  readonly signal?: AbortSignal;
}

/** The two context blocks and their estimated tokens. */
export interface Injection {
  /** Stable facts block: byte-identical until one of the agent's facts changes ('' without facts). */
  readonly core: string;
  /** Query-dependent block ('' without a query, retriever, budget or results). */
  readonly recall: string;
  readonly tokens: { readonly core: number; readonly recall: number; readonly total: number };
  /** The recall retrieval's execution, when one ran. */
  readonly execution?: RetrievalExecution;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/gu, ' ').trim();
  if (flat.length <= max) return flat;
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, max).join('')}…`;
}

function byCreatedThenId(a: MemoryRecord, b: MemoryRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The `memory_get` pointer of an archived record (`session/<sessionId>#<from>-<to>`), or null. */
export function memoryPointer(record: Pick<MemoryRecord, 'sessionId' | 'seqFrom' | 'seqTo'>): string | null {
  if (record.sessionId === null || record.seqFrom === null) return null;
  return formatArchivePointer({
    sessionId: record.sessionId,
    from: record.seqFrom,
    to: record.seqTo ?? record.seqFrom,
  });
}

/**
 * Renders the core block from an agent's facts, deterministically: the facts that fit the budget are chosen
 * by importance (then newer first, then id) and listed oldest first (`createdAt`, then id), one line each, so
 * the text depends on the facts alone — never on a query or the time — and stays byte-identical until a fact
 * changes. Non-active rows and other kinds are ignored. Empty when there is no fact.
 */
export function renderCoreBlock(facts: readonly MemoryRecord[], options: CoreBlockOptions): string {
  return selectCoreFacts(facts, options.budgetTokens).text;
}

function selectCoreFacts(
  facts: readonly MemoryRecord[],
  budgetTokens: number,
): { text: string; ids: Set<string> } {
  const none = { text: '', ids: new Set<string>() };
  const active = facts.filter((f) => f.kind === 'fact' && f.lifecycle === 'active');
  if (active.length === 0) return none;
  const byPriority = [...active].sort(
    (a, b) =>
      b.importance - a.importance || b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const header = `${CORE_BLOCK_HEADER}\n`;
  // Reserve room for the "omitted" line so adding it can never break the budget.
  const omittedReserve = tokenUnits(`- (${active.length} more facts not shown)\n`);
  let units = tokenUnits(header);
  const chosen: { record: MemoryRecord; line: string }[] = [];
  for (const record of byPriority) {
    const line = `- ${oneLine(record.content, MAX_FACT_LINE_CHARS)}\n`;
    const lineUnits = tokenUnits(line);
    const reserve = chosen.length + 1 < active.length ? omittedReserve : 0;
    if (units + lineUnits + reserve > budgetTokens) continue;
    units += lineUnits;
    chosen.push({ record, line });
  }
  if (chosen.length === 0) return none;
  chosen.sort((a, b) => byCreatedThenId(a.record, b.record));
  const omitted = active.length - chosen.length;
  const omittedLine = omitted > 0 ? `- (${omitted} more fact${omitted === 1 ? '' : 's'} not shown)\n` : '';
  const text = `${header}${chosen.map((c) => c.line).join('')}${omittedLine}`;
  return { text, ids: new Set(chosen.map((c) => c.record.id)) };
}

/**
 * A stored instant as ISO 8601; total: a value no `Date` holds (a row written before the timestamp rule, or by
 * another tool) reads `invalid date` instead of throwing a RangeError.
 */
export function isoInstant(ms: number): string {
  return checkTimestamp(ms) === null ? new Date(ms).toISOString() : 'invalid date';
}

/** A stored instant's day (`YYYY-MM-DD`), or `invalid date` (see {@link isoInstant}). */
export function isoDay(ms: number): string {
  return checkTimestamp(ms) === null ? new Date(ms).toISOString().slice(0, 10) : 'invalid date';
}

/** One recall line: a long memory shows its matching window (and points at it), bounded like any line. */
function renderRecallLine(record: MemoryRecord, chunk?: ChunkSpan): string {
  const date = isoDay(record.createdAt);
  const pointer =
    memoryPointer(record) ?? (chunk === undefined ? null : formatMemoryWindow(record.id, chunk));
  const suffix = pointer === null ? '' : ` (memory_get ${pointer})`;
  const text = resultText(record, chunk);
  return `- [${record.kind} ${date}] ${oneLine(text, MAX_RECALL_LINE_CHARS)}${suffix}\n`;
}

async function listActiveFacts(store: InjectionStore, agentId: string): Promise<MemoryRecord[]> {
  const facts: MemoryRecord[] = [];
  let afterId: string | undefined;
  while (facts.length < MAX_CORE_FACTS) {
    const page = await store.listMemories(agentId, {
      kinds: ['fact'],
      lifecycles: ['active'],
      limit: 1000,
      ...(afterId === undefined ? {} : { afterId }),
    });
    facts.push(...page);
    const last = page.at(-1);
    if (page.length < 1000 || last === undefined) break;
    afterId = last.id;
  }
  return facts.slice(0, MAX_CORE_FACTS);
}

/**
 * Builds the context to inject before a model call: the stable core block (the agent's active facts, see
 * {@link renderCoreBlock}) and a bounded recall block (memories retrieved for `query` with the `injection`
 * purpose, facts already in the core block left out), together within `budgetTokens` (estimated with
 * {@link estimateTokens}). A store failure while listing facts rejects (the caller decides); a degraded or
 * failed recall only leaves the recall block empty.
 */
export async function buildInjection(input: InjectionInput): Promise<Injection> {
  const problem = agentIdProblem(input.agentId);
  if (problem !== null) {
    throw new EngramRetrievalError('ENGRAM_RETRIEVAL_INVALID_INPUT', `agentId is invalid (${problem}).`);
  }
  const budget = input.budgetTokens ?? 2000;
  const coreBudget = Math.min(budget, input.coreBudgetTokens ?? Math.floor(budget * 0.6));
  const recallLimit = input.recallLimit ?? 8;
  for (const [name, value] of [
    ['budgetTokens', budget],
    ['coreBudgetTokens', coreBudget],
    ['recallLimit', recallLimit],
  ] as const) {
    if (!Number.isInteger(value) || value < 0) {
      throw new EngramRetrievalError(
        'ENGRAM_RETRIEVAL_INVALID_INPUT',
        `${name} must be a non-negative integer.`,
      );
    }
  }
  const facts = await listActiveFacts(input.store, input.agentId);
  const { text: core, ids: coreIds } = selectCoreFacts(facts, coreBudget);
  const coreTokens = estimateTokens(core);

  let recall = '';
  let execution: RetrievalExecution | undefined;
  const query = input.query ?? '';
  const recallBudget = budget - coreTokens;
  const header = `${RECALL_BLOCK_HEADER}\n`;
  if (
    input.retriever !== undefined &&
    query.trim() !== '' &&
    recallLimit > 0 &&
    recallBudget > tokenUnits(header)
  ) {
    const response = await input.retriever.injection(input.agentId, query, {
      limit: Math.min(recallLimit + coreIds.size, 100),
      ...(input.signal === undefined ? {} : { signal: input.signal }),
    });
    execution = response.execution;
    let units = tokenUnits(header);
    const lines: string[] = [];
    for (const result of response.results) {
      if (lines.length >= recallLimit) break;
      if (coreIds.has(result.record.id)) continue;
      const line = renderRecallLine(result.record, result.explanation.chunk);
      const lineUnits = tokenUnits(line);
      if (units + lineUnits > recallBudget) continue;
      units += lineUnits;
      lines.push(line);
    }
    if (lines.length > 0) recall = `${header}${lines.join('')}`;
  }
  const recallTokens = estimateTokens(recall);
  return {
    core,
    recall,
    tokens: { core: coreTokens, recall: recallTokens, total: coreTokens + recallTokens },
    ...(execution === undefined ? {} : { execution }),
  };
}
