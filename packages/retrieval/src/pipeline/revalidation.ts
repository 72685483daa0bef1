import { matchesMemoryFilter } from '@engram/contracts/rules';
import type { MemoryBrief, MemoryKind, RevalidationCandidate } from '@engram/store';
import { searchLexical } from './lexical.js';
import {
  type ArmState,
  type CallState,
  checkAbort,
  type PipelineContext,
  readableId,
  readableRevision,
  readableRow,
  revalidateOptions,
  storeCall,
  type ValidCandidate,
} from './state.js';
import { searchVector, vectorFailed } from './vector.js';

export { readableRow, revalidateOptions } from './state.js';

/**
 * Reads the current rows of every candidate not yet checked (of the lexical arm only with `lexicalOnly`); a
 * missing or inactive row is recorded as null.
 */
async function revalidate(ctx: PipelineContext, state: CallState, lexicalOnly = false): Promise<void> {
  const { checked } = state;
  const wanted = new Map<string, number | undefined>();
  for (const hit of state.lexical.hits) {
    if (readableId(hit.id) && readableRevision(hit.revision) && !checked.has(hit.id)) {
      wanted.set(hit.id, hit.revision);
    }
  }
  if (!lexicalOnly) {
    for (const hit of state.vector.hits)
      if (readableId(hit.id) && !checked.has(hit.id) && !wanted.has(hit.id)) wanted.set(hit.id, undefined);
  }
  if (wanted.size === 0) return;
  const candidates: RevalidationCandidate[] = [];
  for (const [id, revision] of wanted) candidates.push(revision === undefined ? { id } : { id, revision });
  const rows = await storeCall(() => reread(ctx, state, candidates));
  for (const row of rows) if (readableRow(row)) checked.set(row.id, row);
  // A lexical candidate dropped at its revision may still be active at a newer one: a concurrent edit.
  const stale: RevalidationCandidate[] = [];
  for (const [id, revision] of wanted) if (revision !== undefined && !checked.has(id)) stale.push({ id });
  if (stale.length > 0) {
    const current = await storeCall(() => reread(ctx, state, stale));
    for (const row of current) if (readableRow(row)) checked.set(row.id, row);
  }
  for (const id of wanted.keys()) if (!checked.has(id)) checked.set(id, null);
}

/**
 * Re-reads candidates: their briefs (the fields ranking and the kind and tag filters read) when the store
 * offers them and the call has no scope or metadata filter, else their full rows, kept in `state.records`.
 * The full rows of the briefs returned are read at assembly.
 */
async function reread(
  ctx: PipelineContext,
  state: CallState,
  candidates: readonly RevalidationCandidate[],
): Promise<readonly MemoryBrief[]> {
  const { store } = ctx;
  if (store.revalidateBrief !== undefined && state.call.filter === null) {
    return store.revalidateBrief(state.agentId, candidates, revalidateOptions(state));
  }
  const rows = await store.revalidate(state.agentId, candidates, revalidateOptions(state));
  for (const row of rows) state.records.set(row.id, row);
  return rows;
}

/** The kind, tag and (read in full) metadata filters of the call. */
export function passesFilter(state: CallState, kinds: ReadonlySet<MemoryKind>, record: MemoryBrief): boolean {
  const { filter, tags } = state.call;
  if (!kinds.has(record.kind) || !tags.every((tag) => record.tags.includes(tag))) return false;
  if (filter === null) return true;
  // With a filter every candidate was read in full (see `reread`).
  const full = state.records.get(record.id);
  return full !== undefined && matchesMemoryFilter(filter.checked, full);
}

/** Derives both arms' valid candidates again from the revalidated rows (after rows were dropped). */
export function refreshValid(state: CallState): void {
  const kinds = new Set<MemoryKind>(state.call.kinds);
  state.lexicalValid = validLexical(state, kinds);
  state.vectorValid = validVector(state, kinds);
}

/** The lexical candidates still active at the revision they were found at, and passing the filters. */
function validLexical(state: CallState, kinds: ReadonlySet<MemoryKind>): ValidCandidate[] {
  const valid: ValidCandidate[] = [];
  for (const hit of state.lexical.hits) {
    const record = state.checked.get(hit.id);
    if (record === undefined || record === null) continue;
    if (hit.revision !== undefined && record.revision !== hit.revision) {
      state.recorder.degradations.add('revisionChanged');
      continue;
    }
    if (passesFilter(state, kinds, record)) valid.push({ hit, record });
  }
  return valid;
}

/** The vector candidates still active and passing the filters. */
function validVector(state: CallState, kinds: ReadonlySet<MemoryKind>): ValidCandidate[] {
  const valid: ValidCandidate[] = [];
  for (const hit of state.vector.hits) {
    const record = state.checked.get(hit.id);
    if (record !== undefined && record !== null && passesFilter(state, kinds, record))
      valid.push({ hit, record });
  }
  return valid;
}

function needsRefill(ctx: PipelineContext, arm: ArmState, validCount: number): 'no' | 'yes' | 'capped' {
  const { settings } = ctx;
  if (validCount >= settings.refillTarget || validCount >= arm.hits.length || !arm.saturated) return 'no';
  return arm.budget >= settings.refillMaxBudget ? 'capped' : 'yes';
}

/**
 * While the vector arm's k-NN still runs elsewhere (the SQLite store's vector worker, the PostgreSQL store's
 * pool), the lexical candidates are revalidated, so that the revalidation stage then reads only the
 * vector-only candidates. The same rows are read (a candidate found by both arms is read once, at its lexical
 * revision, as in one read), so the answer is the same; the time counts in the revalidation stage.
 */
export async function revalidateLexicalEarly(ctx: PipelineContext, state: CallState): Promise<void> {
  if (!state.vectorPending || !state.lexicalOn || state.lexical.hits.length === 0) return;
  const start = ctx.mono();
  await revalidate(ctx, state, true);
  state.earlyRevalidationMs = ctx.mono() - start;
  checkAbort(state);
}

/**
 * Stage `authoritativeRevalidation`: revalidates every candidate against the store, filters by kind and tag,
 * and re-queries a starved, saturated arm with a doubled budget up to the hard cap
 * (`candidateBudgetExhausted` when the cap is reached).
 */
export async function revalidationStage(ctx: PipelineContext, state: CallState): Promise<void> {
  const { settings } = ctx;
  const revalidationStart = ctx.mono();
  const kinds = new Set<MemoryKind>(state.call.kinds);
  await revalidate(ctx, state);
  state.lexicalValid = validLexical(state, kinds);
  state.vectorValid = validVector(state, kinds);
  for (;;) {
    checkAbort(state);
    const lexicalNeed = state.lexicalOn ? needsRefill(ctx, state.lexical, state.lexicalValid.length) : 'no';
    const vectorNeed = state.vectorOn ? needsRefill(ctx, state.vector, state.vectorValid.length) : 'no';
    if (lexicalNeed === 'capped' || vectorNeed === 'capped')
      state.recorder.degradations.add('candidateBudgetExhausted');
    if (lexicalNeed !== 'yes' && vectorNeed !== 'yes') break;
    if (lexicalNeed === 'yes') {
      await searchLexical(ctx, state, Math.min(settings.refillMaxBudget, state.lexical.budget * 2));
    }
    if (vectorNeed === 'yes') {
      try {
        await searchVector(ctx, state, Math.min(settings.refillMaxBudget, state.vector.budget * 2));
      } catch (error) {
        vectorFailed(state, error);
      }
    }
    await revalidate(ctx, state);
    state.lexicalValid = validLexical(state, kinds);
    state.vectorValid = validVector(state, kinds);
  }
  state.recorder.stage(
    'authoritativeRevalidation',
    state.earlyRevalidationMs + ctx.mono() - revalidationStart,
  );
  checkAbort(state);
}
