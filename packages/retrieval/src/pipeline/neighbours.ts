import type { MemoryBrief, MemoryKind, SessionWindow } from '@engram/store';
import { passesFilter, readableRow, revalidateOptions } from './revalidation.js';
import {
  type CallState,
  callConversation,
  checkAbort,
  type PipelineContext,
  storeCall,
  type ValidCandidate,
} from './state.js';

/**
 * Part of the `authoritativeRevalidation` stage, after it: with conversation scoring on (a neighbour share
 * above 0) and a store that reads sessions (`sessionNeighbours`), the memories next to the first `depth`
 * lexical candidates in their sessions become lexical candidates too (their own score 0: they rank by what
 * their neighbours and session give them). They are read under the call's rules and filters like any
 * candidate. A memory without a session or a position brings none.
 */
export async function neighbourStage(ctx: PipelineContext, state: CallState): Promise<void> {
  const scoring = callConversation(ctx, state);
  const read = ctx.store.sessionNeighbours?.bind(ctx.store);
  if (scoring.neighbour <= 0 || !state.lexicalOn || read === undefined) return;
  const placed = state.lexicalValid
    .map((c, index) => ({ c, index }))
    .filter(({ c }) => c.record.sessionId !== null && c.record.seqFrom !== null)
    .sort((a, b) => (b.c.hit.score ?? 0) - (a.c.hit.score ?? 0) || a.index - b.index)
    .slice(0, scoring.depth);
  if (placed.length === 0) return;
  const start = ctx.mono();
  const windows: SessionWindow[] = placed.map(({ c }) => {
    const from = c.record.seqFrom as number;
    return {
      sessionId: c.record.sessionId as string,
      from: Math.max(1, from - 1),
      to: (c.record.seqTo ?? from) + 1,
    };
  });
  const briefs = await storeCall(() => read(state.agentId, windows, revalidateOptions(state)));
  const lexical = new Set(state.lexicalValid.map((c) => c.record.id));
  const fresh: MemoryBrief[] = [];
  const known: MemoryBrief[] = [];
  for (const brief of briefs) {
    if (!readableRow(brief) || lexical.has(brief.id)) continue;
    const seen = state.checked.get(brief.id);
    if (seen === undefined) fresh.push(brief);
    else if (seen !== null) known.push(seen);
  }
  let rows: readonly MemoryBrief[] = fresh;
  if (state.call.filter !== null && fresh.length > 0) {
    // With a scope or metadata filter every candidate is read in full (see `revalidation.ts`).
    const full = await storeCall(() =>
      ctx.store.revalidate(
        state.agentId,
        fresh.map((b) => ({ id: b.id, revision: b.revision })),
        revalidateOptions(state),
      ),
    );
    for (const row of full) state.records.set(row.id, row);
    rows = full;
  }
  for (const row of rows) state.checked.set(row.id, row);
  const kinds = new Set<MemoryKind>(state.call.kinds);
  const neighbours: ValidCandidate[] = [];
  for (const row of [...known, ...rows]) {
    if (passesFilter(state, kinds, row))
      neighbours.push({ hit: { id: row.id, revision: row.revision, score: 0 }, record: row });
  }
  state.neighbours = neighbours;
  state.recorder.stage(
    'authoritativeRevalidation',
    (state.recorder.latencies.authoritativeRevalidation ?? 0) + ctx.mono() - start,
  );
  checkAbort(state);
}
