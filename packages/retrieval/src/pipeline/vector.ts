import type { VectorHit } from '@engram/store';
import { vectorConfidence } from '../fusion.js';
import {
  type ArmHit,
  type CallState,
  checkAbort,
  foldsRevalidation,
  type PipelineContext,
  readableRow,
  revalidateOptions,
  StoreFailure,
  storeCall,
  type VectorRun,
} from './state.js';

/** The store's k-NN of `vector` for `budget` neighbours, with the call's filters. */
function requestVector(
  ctx: PipelineContext,
  state: CallState,
  vector: Float32Array,
  budget: number,
): Promise<readonly VectorHit[]> {
  const { call } = state;
  // Filters and the time scope apply inside the k-NN, so the arm's budget is spent on rows that can pass. A
  // plain current-facts search keeps the unfiltered k-NN (revalidation drops what is not current).
  const filtered =
    call.filter !== null ||
    call.tags.length > 0 ||
    call.time.asOf !== undefined ||
    call.time.includeHistory === true;
  return storeCall(() =>
    ctx.store.searchVector({
      agentId: state.agentId,
      vector,
      k: budget,
      ...(filtered
        ? {
            kinds: call.kinds,
            ...(call.tags.length > 0 ? { tags: call.tags } : {}),
            ...(call.filter === null ? {} : { filter: call.filter.given }),
            time: call.time,
          }
        : {}),
      ...(foldsRevalidation(ctx, state) ? { briefs: revalidateOptions(state) } : {}),
    }),
  );
}

/**
 * Asks the vector arm for `budget` neighbours of the query vector; hits below the similarity threshold are
 * dropped. The arm's weight comes from its first hits, before the threshold: the same for every budget ≥ depth.
 */
export async function searchVector(ctx: PipelineContext, state: CallState, budget: number): Promise<void> {
  const raw = await requestVector(ctx, state, state.queryVector as Float32Array, budget);
  applyVectorHits(ctx, state, budget, raw);
}

/**
 * Starts the vector arm's first k-NN as soon as the query embedding settles with a vector, so that it runs
 * while the FTS arm runs (on the store's vector worker, or its pool). Gives an embedding that settles at
 * once (a local embedder) a few microtasks to do so, so that its k-NN is asked for before the FTS arm takes the
 * thread; it never waits for a timer.
 */
export async function startVectorArm(ctx: PipelineContext, state: CallState): Promise<void> {
  const embedding = state.embedding;
  if (embedding === undefined) return;
  let settled = false;
  state.vectorRun = embedding.then((outcome) => {
    settled = true;
    if (!outcome.ok || outcome.vector === null) return undefined;
    const started = ctx.mono();
    state.vectorPending = true;
    return requestVector(ctx, state, outcome.vector, state.vector.budget).then(
      (hits): VectorRun => {
        state.vectorPending = false;
        return { ok: true, hits, ms: ctx.mono() - started };
      },
      (error: unknown): VectorRun => {
        state.vectorPending = false;
        return { ok: false, error, ms: ctx.mono() - started };
      },
    );
  });
  for (let i = 0; i < SETTLE_TICKS && !settled; i += 1) await undefined;
}

/** Microtasks an embedding that is already computed needs to settle through the guard. */
const SETTLE_TICKS = 8;

/** Takes the first k-NN's hits: the arm's weight, the hits above the threshold, saturation. */
function applyVectorHits(
  ctx: PipelineContext,
  state: CallState,
  budget: number,
  raw: readonly VectorHit[],
): void {
  const { settings } = ctx;
  const { vector } = state;
  vector.budget = budget;
  if (settings.vectorEvidence !== false) {
    const top = raw.slice(0, settings.vectorEvidence.depth).map((hit: VectorHit) => hit.similarity);
    const confidence = vectorConfidence(top, settings.vectorEvidence);
    // Rank fusion scales the arm by its confidence; the calibrated fusion takes the larger of the confidence
    // and the arms' agreement (see fusion.ts).
    if (settings.fusion.method === 'rrf') state.vectorWeight = settings.fusion.vector * confidence;
    else state.vectorConfidence = confidence;
  }
  // One pass over the hits (on every hybrid search): the ones above the threshold, as arm hits.
  const hits: ArmHit[] = [];
  const threshold = settings.similarityThreshold;
  for (const hit of raw) {
    if (!(hit.similarity >= threshold)) continue;
    hits.push(
      hit.chunk === undefined
        ? { id: hit.id, similarity: hit.similarity }
        : { id: hit.id, similarity: hit.similarity, chunk: hit.chunk },
    );
  }
  vector.hits = hits;
  // Deeper hits can only be less similar: refilling helps only when every hit cleared the threshold.
  vector.saturated = raw.length >= budget && vector.hits.length === raw.length;
  state.recorder.vector = vector.hits.length;
  if (foldsRevalidation(ctx, state)) checkVectorOnly(state, raw, threshold);
}

/**
 * Keeps the briefs the k-NN read with its hits (`VectorQuery.briefs`) as the revalidation of the vector-only
 * candidates above the threshold, so that the revalidation stage reads none of them again: the same read
 * `revalidateBrief` makes, at the k-NN. A candidate of the lexical arm is left to its own read at the revision
 * it was found at (a row both arms found is read once, at its lexical revision), one already checked keeps
 * its read, and a hit without a brief (a store that does not fold) is read by the stage.
 */
function checkVectorOnly(state: CallState, raw: readonly VectorHit[], threshold: number): void {
  const { checked } = state;
  let lexical: Set<string> | undefined;
  for (const hit of raw) {
    if (hit.brief === undefined || !(hit.similarity >= threshold) || checked.has(hit.id)) continue;
    lexical ??= new Set(state.lexical.hits.map((h) => h.id));
    if (!lexical.has(hit.id))
      checked.set(hit.id, hit.brief !== null && readableRow(hit.brief) ? hit.brief : null);
  }
}

/** A failing vector arm degrades the answer to FTS-only; it never fails it. Rethrows anything else. */
export function vectorFailed(state: CallState, error: unknown): void {
  if (!(error instanceof StoreFailure)) throw error;
  state.recorder.degradations.add(error.cause);
  state.vectorOn = false;
  state.vector.hits = [];
  state.recorder.vector = 0;
}

/**
 * Stage `vector`: the agent-partitioned vector arm, when the query has a vector. Its k-NN was started by
 * `startVectorArm` and ran while the FTS arm ran; the stage's time is the k-NN's own (it overlaps `keyword`).
 */
export async function vectorStage(ctx: PipelineContext, state: CallState): Promise<void> {
  state.vectorOn = state.queryVector !== null;
  if (!state.vectorOn) return;
  const run = await state.vectorRun;
  if (run === undefined) {
    // Not started early (no embedding promise): asked for now.
    const vectorStart = ctx.mono();
    try {
      await searchVector(ctx, state, state.vector.budget);
      state.recorder.arms.add('vector');
    } catch (error) {
      vectorFailed(state, error);
    }
    state.recorder.stage('vector', ctx.mono() - vectorStart);
  } else {
    if (run.ok) {
      applyVectorHits(ctx, state, state.vector.budget, run.hits);
      state.recorder.arms.add('vector');
    } else {
      vectorFailed(state, run.error);
    }
    state.recorder.stage('vector', run.ms);
  }
  checkAbort(state);
}
