/**
 * The facade's reads for a person looking at a memory (the inspector): the open conflicts of a scope with both
 * sides, the sessions with their entry counts, and the rows whose embedding failed with their error codes.
 * Every read keeps to the scope: a user sees the agent's own memories and its own, never another user's.
 */
import type { Engine } from './engine.js';
import { invalidInput } from './errors.js';
import { toItem } from './items.js';
import { storeScope } from './scope.js';
import type { MemoryItem, Scope } from './types.js';

/** An open contradiction between two current facts of the scope (`Memory.conflicts`). */
export interface MemoryConflict {
  /** The fact stored first, as the scope sees it. */
  readonly older: MemoryItem;
  /** The fact that contradicts it. */
  readonly newer: MemoryItem;
  /** What differs: `number`, `negation` or `entity`. */
  readonly reason: string;
  /** When the contradiction was found (epoch ms). */
  readonly createdAt: number;
}

/** Options of `Memory.conflicts`. */
export interface ConflictsOptions extends Scope {
  /** Open links read, newest first as the store lists them (default 100, at most 500). */
  readonly limit?: number;
}

/** A logged conversation of the scope (`Memory.sessions`). */
export interface SessionInfo {
  readonly sessionId: string;
  /** Entries logged in it that the scope sees (messages, tool calls and results). */
  readonly entries: number;
  /** The first and the last entry's time (epoch ms). */
  readonly firstAt: number;
  readonly lastAt: number;
}

/** Options of `Memory.sessions`. */
export interface SessionsOptions extends Scope {
  /** Default 100, at most 500. */
  readonly limit?: number;
  /** The page after this session id (ids ascending). */
  readonly afterSessionId?: string;
}

/** A memory whose embedding failed (`Memory.embeddingFailures`). */
export interface EmbeddingFailure {
  readonly id: string;
  /** The memory's user; null for the agent's own. */
  readonly userId: string | null;
  /**
   * The embedder's or provider's error code (`ENGRAM_PROVIDER_TIMEOUT`, `ENGRAM_EMBEDDING_MALFORMED_VECTOR` …),
   * or `unknown` when the failure had none or the file holds something else. Never an error message.
   */
  readonly errorCode: string;
  /** Failed attempts so far; the drain retries a row until its bound. */
  readonly attempts: number;
  /** When the last attempt failed (epoch ms); null for failures recorded before Engram kept it. */
  readonly failedAt: number | null;
}

/** Options of `Memory.embeddingFailures`. */
export interface EmbeddingFailuresOptions extends Scope {
  /** Default 100, at most 500. */
  readonly limit?: number;
  /** The page after this memory id (ids ascending). */
  readonly afterId?: string;
}

function pageLimit(value: unknown): number {
  if (value === undefined) return 100;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > 500) {
    throw invalidInput('limit must be an integer from 1 to 500');
  }
  return value;
}

/** The scope's open conflicts whose two sides it sees and are both still current. */
export async function openConflicts(
  engine: Engine,
  agentId: string,
  userId: string | null,
  limit: unknown,
): Promise<readonly MemoryConflict[]> {
  const scope = storeScope(userId);
  // The store lists only the links both of whose sides the scope sees, so the limit counts none of another
  // user's.
  const links = await engine.store.listConflicts(agentId, {
    state: 'open',
    limit: pageLimit(limit),
    ...scope,
  });
  const out: MemoryConflict[] = [];
  for (const link of links) {
    // Both sides as this scope sees them: another user's fact is not found, and a settled side is not active.
    const [older, newer] = await Promise.all([
      engine.store.getMemory(agentId, link.olderId, scope),
      engine.store.getMemory(agentId, link.newerId, scope),
    ]);
    if (older === null || newer === null) continue;
    if (older.lifecycle !== 'active' || newer.lifecycle !== 'active') continue;
    out.push({ older: toItem(older), newer: toItem(newer), reason: link.reason, createdAt: link.createdAt });
  }
  return out;
}

/** The scope's sessions with logged entries, by session id. */
export async function sessionList(
  engine: Engine,
  agentId: string,
  userId: string | null,
  options: { readonly limit?: unknown; readonly afterSessionId?: unknown },
): Promise<readonly SessionInfo[]> {
  const after = options.afterSessionId;
  if (after !== undefined && typeof after !== 'string') throw invalidInput('afterSessionId must be a string');
  const rows = await engine.store.listSessionSummaries(agentId, {
    ...storeScope(userId),
    limit: pageLimit(options.limit),
    ...(after === undefined ? {} : { afterSessionId: after }),
  });
  return rows.map((r) => ({
    sessionId: r.sessionId,
    entries: r.entries,
    firstAt: r.firstAt,
    lastAt: r.lastAt,
  }));
}

/** The scope's rows whose embedding failed, by id, each with its error code. */
export async function embeddingFailureList(
  engine: Engine,
  agentId: string,
  userId: string | null,
  options: { readonly limit?: unknown; readonly afterId?: unknown },
): Promise<readonly EmbeddingFailure[]> {
  const after = options.afterId;
  if (after !== undefined && typeof after !== 'string') throw invalidInput('afterId must be a string');
  const rows = await engine.store.listFailedEmbeddings(agentId, {
    ...storeScope(userId),
    limit: pageLimit(options.limit),
    ...(after === undefined ? {} : { afterId: after }),
  });
  return rows.map((r) => ({
    id: r.id,
    userId: r.userId,
    errorCode: r.errorCode,
    attempts: r.attempts,
    failedAt: r.failedAt,
  }));
}
