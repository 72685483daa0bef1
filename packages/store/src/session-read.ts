/**
 * Reading a conversation's neighbourhood: the memories logged next to given positions of their sessions. The
 * retriever's conversation scoring reads it to bring a matching turn's neighbours in as candidates.
 */
import { invalidInput } from './errors.js';
import type { MemoryBrief, RevalidateOptions } from './types.js';
import { validateAgentId, validateInteger } from './validate.js';

/** Positions `from..to` (inclusive, ≥ 1) of one session. */
export interface SessionWindow {
  readonly sessionId: string;
  readonly from: number;
  readonly to: number;
}

/** Most windows of one `sessionNeighbours` call. */
export const MAX_SESSION_WINDOWS = 100;
/** Most rows one `sessionNeighbours` call returns. */
export const MAX_SESSION_ROWS = 1000;

/** The optional session read of the port (part of `MemoryReadSlice`). */
export interface SessionReadSlice {
  /**
   * Optional: the briefs of this agent's rows whose session is a window's and whose positions
   * (`seqFrom..seqTo`) overlap its `from..to`, under `revalidate`'s rules (`active` rows by default, the time
   * scope, the user scope, `archived` with `includeArchived`); each row once, ordered by session, `seqFrom`
   * and id; at most {@link MAX_SESSION_ROWS}. Rows without a session or a position never match.
   */
  sessionNeighbours?(
    agentId: string,
    windows: readonly SessionWindow[],
    options?: RevalidateOptions,
  ): Promise<readonly MemoryBrief[]>;
}

/**
 * Validates the arguments of `sessionNeighbours` (typed `ENGRAM_STORE_INVALID_INPUT`) and returns the distinct
 * windows, in input order.
 */
export function checkSessionWindows(agentId: string, windows: readonly SessionWindow[]): SessionWindow[] {
  validateAgentId(agentId);
  if (!Array.isArray(windows)) throw invalidInput('windows must be an array');
  if (windows.length > MAX_SESSION_WINDOWS) throw invalidInput(`at most ${MAX_SESSION_WINDOWS} windows`);
  const out: SessionWindow[] = [];
  const seen = new Set<string>();
  for (const w of windows) {
    if (typeof w !== 'object' || w === null) throw invalidInput('window must be an object');
    const sessionId = validateAgentId(w.sessionId, 'window.sessionId');
    const from = validateInteger(w.from, 'window.from', 1);
    const to = validateInteger(w.to, 'window.to', from);
    const key = `${sessionId}\u0000${from}\u0000${to}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ sessionId, from, to });
  }
  return out;
}
