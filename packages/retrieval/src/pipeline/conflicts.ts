import type { RetrievalConflict } from '../explanation.js';
import type { CallState, PipelineContext } from './state.js';

/**
 * Stage after assembly: marks results that are one side of an open contradiction (two facts on the same
 * subject with different values, linked when the newer was remembered). Advisory: a store without conflict
 * links, or one whose read fails, leaves the explanations as they are.
 */
export async function conflictStage(ctx: PipelineContext, state: CallState): Promise<void> {
  const { store } = ctx;
  if (store.listConflicts === undefined) return;
  // Only facts are linked: a search that found none reads nothing more.
  const ids = state.results.filter((r) => r.record.kind === 'fact').map((r) => r.record.id);
  if (ids.length === 0) return;
  let links: Awaited<ReturnType<NonNullable<typeof store.listConflicts>>>;
  try {
    links = await store.listConflicts(state.agentId, { ids, state: 'open' });
  } catch {
    return;
  }
  if (links.length === 0) return;
  const byId = new Map<string, { older: string[]; newer: string[] }>();
  const entry = (id: string) => {
    let e = byId.get(id);
    if (e === undefined) {
      e = { older: [], newer: [] };
      byId.set(id, e);
    }
    return e;
  };
  for (const link of links) {
    entry(link.olderId).newer.push(link.newerId);
    entry(link.newerId).older.push(link.olderId);
  }
  state.results = state.results.map((result) => {
    const e = byId.get(result.record.id);
    if (e === undefined) return result;
    // Contradicted by a newer fact: likely outdated. Only contradicting older facts: likely current.
    const conflict: RetrievalConflict =
      e.newer.length > 0
        ? { status: 'older', with: [...e.newer, ...e.older] }
        : { status: 'newer', with: e.older };
    return { ...result, explanation: { ...result.explanation, conflict } };
  });
}
