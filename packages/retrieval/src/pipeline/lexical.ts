import type { LexicalHit } from '@engram/store';
import { extractKeywords } from '../keywords.js';
import { startQueryEmbedding } from './query-embedding.js';
import {
  type CallState,
  checkAbort,
  foldsRevalidation,
  type PipelineContext,
  readableRow,
  revalidateOptions,
  StoreFailure,
  storeCall,
} from './state.js';
import { startVectorArm } from './vector.js';

/** Asks the FTS arm for `budget` candidates (a refill asks again with a larger budget). */
export async function searchLexical(ctx: PipelineContext, state: CallState, budget: number): Promise<void> {
  const { call, lexical } = state;
  const fold = foldsRevalidation(ctx, state);
  const result = await storeCall(() =>
    ctx.store.searchLexical({
      agentId: state.agentId,
      terms: state.terms,
      mode: 'any',
      limit: budget,
      kinds: call.kinds,
      ...(call.tags.length > 0 ? { tags: call.tags } : {}),
      ...(call.includeArchived ? { includeArchived: true } : {}),
      ...(call.filter === null ? {} : { filter: call.filter.given }),
      time: call.time,
      ...(fold ? { briefs: revalidateOptions(state) } : {}),
    }),
  );
  lexical.budget = budget;
  // The store's hits are used as they are (read-only from here on): no copy per candidate.
  lexical.hits = result.hits as LexicalHit[];
  lexical.saturated = result.hits.length >= budget;
  state.recorder.fts = lexical.hits.length;
  if (fold) checkLexical(state, result.hits);
}

/**
 * Keeps the briefs the lexical search read with its hits (`LexicalQuery.briefs`) as their revalidation, so that
 * neither the early revalidation nor the revalidation stage reads them again: the read `revalidateBrief` makes
 * at the hit's revision, in the search's own statement (a hit's brief has its revision, or is null when that
 * read drops it). A candidate already checked keeps its read, as the stage would keep it, and a hit without a
 * brief (a store that does not fold) is read by the stage.
 */
function checkLexical(state: CallState, hits: readonly LexicalHit[]): void {
  const { checked } = state;
  for (const hit of hits) {
    if (hit.brief === undefined || checked.has(hit.id)) continue;
    checked.set(hit.id, hit.brief !== null && readableRow(hit.brief) ? hit.brief : null);
  }
}

/**
 * Stage `keyword`: extracts the query terms, starts the query embedding and, once it has a vector, the vector
 * arm's k-NN, and runs the FTS arm while they run. Returns false (outcome `emptyQuery`) for a query without terms. An unavailable FTS index
 * degrades the answer (`ftsUnavailable`); any other store failure fails the call.
 */
export async function keywordStage(ctx: PipelineContext, state: CallState): Promise<boolean> {
  const { recorder } = state;
  const keywordStart = ctx.mono();
  state.terms = extractKeywords(state.query, { maxTerms: ctx.settings.maxTerms }).terms;
  if (state.terms.length === 0) {
    recorder.stage('keyword', ctx.mono() - keywordStart);
    recorder.outcome = 'emptyQuery';
    return false;
  }
  startQueryEmbedding(ctx, state);
  // The vector arm's k-NN starts once the query vector is ready and runs while the FTS arm runs.
  await startVectorArm(ctx, state);
  if (state.lexicalOn) {
    try {
      await searchLexical(ctx, state, state.lexical.budget);
      recorder.arms.add('lexical');
    } catch (error) {
      if (!(error instanceof StoreFailure) || error.cause !== 'ftsUnavailable') throw error;
      recorder.degradations.add('ftsUnavailable');
      state.lexicalOn = false;
    }
  }
  recorder.stage('keyword', ctx.mono() - keywordStart);
  checkAbort(state);
  return true;
}
