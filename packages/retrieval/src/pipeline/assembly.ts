import type { ChunkSpan, MemoryBrief, RevalidationCandidate } from '@engram/store';
import type { RetrievalResult } from '../explanation.js';
import { type FusedResult, type FusionCandidate, fuseCandidates } from '../fusion.js';
import { refreshValid, revalidateOptions } from './revalidation.js';
import { type CallState, checkAbort, type PipelineContext, storeCall } from './state.js';

/** A candidate being joined: filled in place (one object per candidate, no copies). */
interface Joined {
  record: MemoryBrief;
  lexicalRank?: number;
  lexicalScore?: number;
  vectorRank?: number;
  similarity?: number;
  chunk?: ChunkSpan;
}

/** Joins the arms' valid candidates by id, with each arm's 1-based rank and evidence. */
export function collectCandidates(state: CallState): FusionCandidate<MemoryBrief>[] {
  const candidates = new Map<string, Joined>();
  const lexical = state.lexicalValid;
  for (let i = 0; i < lexical.length; i += 1) {
    const { hit, record } = lexical[i] as (typeof lexical)[number];
    const c: Joined = { record, lexicalRank: i + 1 };
    if (hit.score !== undefined) c.lexicalScore = hit.score;
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

/**
 * Stage `assembly`: fusion, explanation (of the returned results only), the limit and the full rows of the
 * results; the call is then `completed`.
 */
export async function assemblyStage(ctx: PipelineContext, state: CallState): Promise<void> {
  const assemblyStart = ctx.mono();
  for (;;) {
    const fused = fuseCandidates(
      collectCandidates(state),
      ctx.settings.fusion,
      ctx.now(),
      state.vectorWeight,
      state.vectorConfidence,
      state.call.limit,
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
  state.recorder.selected = state.results.length;
  state.recorder.stage('assembly', ctx.mono() - assemblyStart);
  state.recorder.outcome = 'completed';
}
