import { createDeadline } from '@engram/contracts/rules';
import type { RetrievalResult } from '../explanation.js';
import { MAX_QUERY_SCAN_CHARS } from '../keywords.js';
import type { Reranker } from '../ports.js';
import { resultText } from '../window.js';
import { reranks } from './assembly.js';
import { CANCELLED, type CallState, checkAbort, type PipelineContext } from './state.js';

/** The settled rerank call: one score per document, or why the fused order is kept. */
type RerankOutcome =
  | { readonly ok: true; readonly scores: readonly number[] }
  | { readonly ok: false; readonly cause: 'rerankTimeout' | 'rerankError' | typeof CANCELLED };

function validScores(value: unknown, length: number): value is readonly number[] {
  if (!Array.isArray(value) || value.length !== length) return false;
  for (const x of value) if (typeof x !== 'number' || !Number.isFinite(x)) return false;
  return true;
}

/**
 * Calls the reranker under the budget; never rejects. The deadline aborts the reranker's signal when it
 * fires, when the caller cancels, or when the call settles (`stop`).
 */
function callReranker(
  reranker: Reranker,
  query: string,
  documents: readonly string[],
  ctx: PipelineContext,
  state: CallState,
  timeoutMs: number,
): Promise<RerankOutcome> {
  return new Promise<RerankOutcome>((resolve) => {
    const deadline = createDeadline({
      ms: timeoutMs,
      timers: ctx.timers,
      signals: [state.call.signal, state.stop],
      onExpire: (expiry) =>
        resolve({ ok: false, cause: expiry === 'deadline' ? 'rerankTimeout' : CANCELLED }),
    });
    if (deadline.expired !== undefined) {
      resolve({ ok: false, cause: CANCELLED });
      return;
    }
    const failed = (): void => {
      if (deadline.settle()) resolve({ ok: false, cause: 'rerankError' });
    };
    let pending: Promise<readonly number[]>;
    try {
      pending = reranker.rerank(query, documents, { signal: deadline.signal });
    } catch {
      failed();
      return;
    }
    Promise.resolve(pending).then((scores) => {
      if (!validScores(scores, documents.length)) {
        failed();
        return;
      }
      if (deadline.settle()) resolve({ ok: true, scores });
    }, failed);
  });
}

/** The head reordered by score (ties keep the fused order), each with its rerank evidence. */
function reorder(head: readonly RetrievalResult[], scores: readonly number[]): RetrievalResult[] {
  const order = head.map((_, i) => i);
  order.sort((a, b) => (scores[b] as number) - (scores[a] as number) || a - b);
  return order.map((i, rank) => {
    const result = head[i] as RetrievalResult;
    return {
      ...result,
      explanation: {
        ...result.explanation,
        rerank: { score: scores[i] as number, rank: rank + 1, fusedRank: i + 1 },
      },
    };
  });
}

/**
 * Stage `rerank` (only with a reranker, never for `decision`): the first `candidates` fused results are
 * scored against the query by the reranker — which sees the query and each memory's text (a chunked memory's
 * matching window) only — and reordered by its scores; the rest follow in the fused order, then the call's
 * limit applies. A timeout, a rejection or malformed scores keep the fused order and record `rerankTimeout`
 * or `rerankError`; the stage's latency is recorded either way. A caller's abort cancels the call.
 */
export async function rerankStage(ctx: PipelineContext, state: CallState): Promise<void> {
  const rerank = ctx.settings.rerank;
  const reranker = ctx.reranker;
  const limit = state.call.limit;
  if (rerank === null || reranker === undefined || !reranks(state) || state.results.length === 0) {
    if (state.results.length > limit) state.results = state.results.slice(0, limit);
    return;
  }
  const fused = state.results;
  const head = fused.slice(0, rerank.candidates);
  const documents = head.map((r) => resultText(r.record, r.explanation.chunk));
  const started = ctx.mono();
  const outcome = await callReranker(
    reranker,
    state.query.slice(0, MAX_QUERY_SCAN_CHARS),
    documents,
    ctx,
    state,
    rerank.timeoutMs,
  );
  state.recorder.stage('rerank', ctx.mono() - started);
  checkAbort(state);
  if (outcome.ok) {
    state.results = [...reorder(head, outcome.scores), ...fused.slice(head.length)].slice(0, limit);
  } else {
    if (outcome.cause === CANCELLED) throw CANCELLED;
    state.recorder.degradations.add(outcome.cause);
    state.results = fused.slice(0, limit);
  }
  state.recorder.selected = state.results.length;
}
