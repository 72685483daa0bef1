import type { ChunkSpan, MemoryRecord } from '@engram/store';
import { type FusionCandidate, fuseCandidates } from '../fusion.js';
import type { CallState, PipelineContext } from './state.js';

/** A candidate being joined: filled in place (one object per candidate, no copies). */
interface Joined {
  record: MemoryRecord;
  lexicalRank?: number;
  lexicalScore?: number;
  vectorRank?: number;
  similarity?: number;
  chunk?: ChunkSpan;
}

/** Joins the arms' valid candidates by id, with each arm's 1-based rank and evidence. */
export function collectCandidates(state: CallState): FusionCandidate[] {
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

/** Stage `assembly`: fusion, explanation (of the returned results only) and the limit; the call is then `completed`. */
export function assemblyStage(ctx: PipelineContext, state: CallState): void {
  const assemblyStart = ctx.mono();
  state.results = fuseCandidates(
    collectCandidates(state),
    ctx.settings.fusion,
    ctx.now(),
    state.vectorWeight,
    state.vectorConfidence,
    state.call.limit,
  );
  state.recorder.selected = state.results.length;
  state.recorder.stage('assembly', ctx.mono() - assemblyStart);
  state.recorder.outcome = 'completed';
}
