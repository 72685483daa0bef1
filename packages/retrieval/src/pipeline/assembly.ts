import type { ChunkSpan, MemoryBrief, RevalidationCandidate } from '@engram/store';
import { type ConversationTerms, conversationTerms } from '../conversation.js';
import type { RetrievalResult } from '../explanation.js';
import { type FusedResult, type FusionCandidate, fuseCandidates } from '../fusion.js';
import { isMemoryScore, longMemoryGain } from '../long-memory.js';
import { inWindow, queryTimeWindow, type TimeWindow } from '../time.js';
import { refreshValid, revalidateOptions } from './revalidation.js';
import { type CallState, callConversation, checkAbort, type PipelineContext, storeCall } from './state.js';

/** A candidate being joined: filled in place (one object per candidate, no copies). */
interface Joined {
  record: MemoryBrief;
  lexicalRank?: number;
  lexicalScore?: number;
  vectorRank?: number;
  similarity?: number;
  chunk?: ChunkSpan;
  conversation?: ConversationTerms;
  longMemory?: number;
  time?: { from: number; to: number; gain: number };
}

/** The window the call's query names, or null: none named, time scoring off, or a `decision` lookup. */
function callTimeWindow(ctx: PipelineContext, state: CallState): TimeWindow | null {
  if (ctx.settings.time.boost === 0 || state.recorder.purpose === 'decision') return null;
  return queryTimeWindow(state.query, state.call.referenceTime ?? ctx.now());
}

/**
 * The lexical arm's candidates in its final order: a chunked memory gains the evidence of its other chunks
 * (see `long-memory.ts`); with conversation scoring on, each memory with a session and a position gains its
 * neighbour and session terms (see `conversation.ts`); a memory in the window the query names gains its time
 * boost; the arm is re-ranked by the sum (ties keep the store's order), else keeps the store's order and scores.
 */
function lexicalOrder(
  ctx: PipelineContext,
  state: CallState,
): {
  readonly c: (typeof state.lexicalValid)[number];
  score?: number;
  readonly terms?: ConversationTerms;
  readonly long?: number;
  time?: { from: number; to: number; gain: number };
}[] {
  const own = state.lexicalValid;
  // Neighbours still current (a concurrent write may have dropped one since), after the arm's own hits.
  const lexical =
    state.neighbours.length === 0
      ? own
      : [...own, ...state.neighbours.filter((n) => state.checked.get(n.record.id) === n.record)];
  // Each memory's own match: its best chunk plus its whole-memory prior.
  const scoring = ctx.settings.longMemory;
  let long = false;
  let maxWhole = 0;
  let top = 0;
  for (const { hit } of own) {
    if (isMemoryScore(hit.memoryScore) && hit.memoryScore > maxWhole) maxWhole = hit.memoryScore;
    if (hit.score !== undefined && Number.isFinite(hit.score) && hit.score > top) top = hit.score;
  }
  const gains = lexical.map(({ hit }) => {
    const gain = longMemoryGain(hit.memoryScore, maxWhole, top, scoring);
    if (gain > 0) long = true;
    return gain;
  });
  const terms = conversationTerms(
    lexical.map(({ hit, record }, i) => ({ record, score: (hit.score ?? 0) + (gains[i] as number) })),
    callConversation(ctx, state),
  );
  const out: {
    readonly c: (typeof lexical)[number];
    score?: number;
    readonly terms?: ConversationTerms;
    readonly long?: number;
    time?: { from: number; to: number; gain: number };
  }[] = [];
  for (let i = 0; i < lexical.length; i += 1) {
    const c = lexical[i] as (typeof lexical)[number];
    const t = terms[i];
    const gain = gains[i] as number;
    const mine = gain > 0 ? { score: (c.hit.score ?? 0) + gain, long: gain } : {};
    if (t === null || t === undefined) {
      // A neighbour that gained nothing is no candidate.
      if (i < own.length) out.push(c.hit.score === undefined ? { c } : { c, score: c.hit.score, ...mine });
    } else out.push({ c, ...mine, score: (c.hit.score ?? 0) + gain + t.neighbour + t.session, terms: t });
  }
  // A memory in the window the query names gains a share of its score (conversation terms included).
  const window = callTimeWindow(ctx, state);
  let timed = false;
  if (window !== null) {
    for (const o of out) {
      if (o.score === undefined || o.score <= 0 || !inWindow(o.c.record, window)) continue;
      const gain = o.score * ctx.settings.time.boost;
      o.score += gain;
      o.time = { from: window.from, to: window.to, gain };
      timed = true;
    }
  }
  if (!timed && !long && !terms.some((t) => t !== null)) return out;
  const index = new Map(out.map((o, i) => [o, i]));
  return out.sort(
    (a, b) => (b.score ?? 0) - (a.score ?? 0) || (index.get(a) as number) - (index.get(b) as number),
  );
}

/** Joins the arms' valid candidates by id, with each arm's 1-based rank and evidence. */
export function collectCandidates(ctx: PipelineContext, state: CallState): FusionCandidate<MemoryBrief>[] {
  const candidates = new Map<string, Joined>();
  const lexical = lexicalOrder(ctx, state);
  for (let i = 0; i < lexical.length; i += 1) {
    const { c: valid, score, terms, long, time } = lexical[i] as (typeof lexical)[number];
    const { hit, record } = valid;
    const c: Joined = { record, lexicalRank: i + 1 };
    if (score !== undefined) c.lexicalScore = score;
    if (long !== undefined) c.longMemory = long;
    if (terms !== undefined) c.conversation = terms;
    if (time !== undefined) c.time = time;
    if (hit.chunk !== undefined) c.chunk = hit.chunk;
    candidates.set(record.id, c);
  }
  const vector = state.vectorValid;
  for (let i = 0; i < vector.length; i += 1) {
    const { hit, record } = vector[i] as (typeof vector)[number];
    let c = candidates.get(record.id);
    if (c === undefined) {
      c = { record };
      candidates.set(record.id, c);
    }
    c.vectorRank = i + 1;
    if (hit.similarity !== undefined) c.similarity = hit.similarity;
    // The lexical arm's chunk (where the words are) wins over the vector arm's.
    if (c.chunk === undefined && hit.chunk !== undefined) c.chunk = hit.chunk;
  }
  return [...candidates.values()];
}

/**
 * The results with their full rows: those not read in full at revalidation (briefs) are read now, at the
 * revision they were ranked at. Null when one of them changed since (a concurrent write): it is then dropped
 * like any candidate no longer current, and the caller ranks again.
 */
async function withFullRows(
  ctx: PipelineContext,
  state: CallState,
  fused: readonly FusedResult<MemoryBrief>[],
): Promise<RetrievalResult[] | null> {
  const missing: RevalidationCandidate[] = [];
  for (const r of fused) {
    if (!state.records.has(r.record.id)) missing.push({ id: r.record.id, revision: r.record.revision });
  }
  if (missing.length > 0) {
    const rows = await storeCall(() =>
      ctx.store.revalidate(state.agentId, missing, revalidateOptions(state)),
    );
    for (const row of rows) state.records.set(row.id, row);
  }
  const out: RetrievalResult[] = new Array(fused.length);
  let changed = false;
  for (let i = 0; i < fused.length; i += 1) {
    const r = fused[i] as FusedResult<MemoryBrief>;
    const record = state.records.get(r.record.id);
    if (record === undefined || record.revision !== r.record.revision) {
      state.checked.set(r.record.id, null);
      changed = true;
    } else out[i] = { record, score: r.score, explanation: r.explanation };
  }
  return changed ? null : out;
}

/** How many fused results are assembled: the call's limit, or the rerank stage's candidates when more. */
function assemblyLimit(ctx: PipelineContext, state: CallState): number {
  const rerank = ctx.settings.rerank;
  if (rerank === null || !reranks(state)) return state.call.limit;
  return Math.max(state.call.limit, rerank.candidates);
}

/** Whether the call is reranked (when a reranker is configured): every purpose but `decision`. */
export function reranks(state: CallState): boolean {
  return state.recorder.purpose !== 'decision';
}

/**
 * Stage `assembly`: fusion, explanation (of the returned results only), the limit and the full rows of the
 * results; the call is then `completed`.
 */
export async function assemblyStage(ctx: PipelineContext, state: CallState): Promise<void> {
  const assemblyStart = ctx.mono();
  for (;;) {
    const fused = fuseCandidates(
      collectCandidates(ctx, state),
      ctx.settings.fusion,
      ctx.now(),
      state.vectorWeight,
      state.vectorConfidence,
      assemblyLimit(ctx, state),
    );
    const results = await withFullRows(ctx, state, fused);
    if (results !== null) {
      state.results = results;
      break;
    }
    state.recorder.degradations.add('revisionChanged');
    refreshValid(state);
    checkAbort(state);
  }
  // With a rerank stage, the results are cut to the limit after it.
  state.recorder.selected = Math.min(state.results.length, state.call.limit);
  state.recorder.stage('assembly', ctx.mono() - assemblyStart);
  state.recorder.outcome = 'completed';
}
