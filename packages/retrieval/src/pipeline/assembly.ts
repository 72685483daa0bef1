import { type FusionCandidate, fuseCandidates } from '../fusion.js';
import type { CallState, PipelineContext } from './state.js';

/** Joins the arms' valid candidates by id, with each arm's 1-based rank and evidence. */
export function collectCandidates(state: CallState): FusionCandidate[] {
  const candidates = new Map<string, FusionCandidate>();
  state.lexicalValid.forEach(({ hit, record }, index) => {
    candidates.set(record.id, {
      record,
      lexicalRank: index + 1,
      ...(hit.score === undefined ? {} : { lexicalScore: hit.score }),
      ...(hit.chunk === undefined ? {} : { chunk: hit.chunk }),
    });
  });
  state.vectorValid.forEach(({ hit, record }, index) => {
    const existing = candidates.get(record.id);
    candidates.set(record.id, {
      ...(existing ?? { record }),
      vectorRank: index + 1,
      ...(hit.similarity === undefined ? {} : { similarity: hit.similarity }),
      // The lexical arm's chunk (where the words are) wins over the vector arm's.
      ...(existing?.chunk === undefined && hit.chunk !== undefined ? { chunk: hit.chunk } : {}),
    });
  });
  return [...candidates.values()];
}

/** Stage `assembly`: fusion, explanation and the limit; the call is then `completed`. */
export function assemblyStage(ctx: PipelineContext, state: CallState): void {
  const assemblyStart = ctx.mono();
  state.results = fuseCandidates(
    collectCandidates(state),
    ctx.settings.fusion,
    ctx.now(),
    state.vectorWeight,
    state.vectorConfidence,
  ).slice(0, state.call.limit);
  state.recorder.selected = state.results.length;
  state.recorder.stage('assembly', ctx.mono() - assemblyStart);
  state.recorder.outcome = 'completed';
}
