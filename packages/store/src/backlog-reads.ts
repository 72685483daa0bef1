/**
 * The backlog reads of the port: the rows whose embedding failed, each with the stable error code the drain
 * committed with it, and the sessions of an agent with their entry counts. The code is checked on write (a
 * typed Engram error code, never a message) and untrusted on read: whatever is stored, a reader gets a code of
 * that shape or {@link UNKNOWN_EMBEDDING_ERROR}, and never an error.
 */
import { ENGRAM_ERROR_CODE_PATTERN } from '@engram/contracts';
import { invalidInput } from './errors.js';
import { checkUserScope, type UserScope } from './scope.js';
import { validateAgentId, validateId, validateLimit } from './validate.js';

/** What a failed row's code reads as when none was stored or the stored one is not a code. */
export const UNKNOWN_EMBEDDING_ERROR = 'unknown';
/** The longest error code a store keeps. */
export const MAX_EMBEDDING_ERROR_LENGTH = 64;
/** Most rows or sessions one backlog read returns. */
export const MAX_BACKLOG_PAGE = 500;

/** An `error` outcome of `commitEmbeddings` (`chunk` as listed for a chunked memory). */
export interface EmbeddingErrorOutcome {
  readonly id: string;
  readonly revision: number;
  readonly state: 'error';
  readonly chunk?: number;
  /** The embedder's or provider's typed error code (`ENGRAM_PROVIDER_TIMEOUT` …), kept with the row; never a message. */
  readonly code?: string;
}

/** A row whose embedding failed. */
export interface FailedEmbedding {
  readonly id: string;
  readonly agentId: string;
  /** The memory's user; null for the agent's own. */
  readonly userId: string | null;
  /** The embedder's or provider's error code (`ENGRAM_PROVIDER_TIMEOUT` …), or `unknown`. */
  readonly errorCode: string;
  /** Failed attempts so far. */
  readonly attempts: number;
  /** When the last attempt failed (epoch ms); null when the store did not record it. */
  readonly failedAt: number | null;
}

/** Options of `listFailedEmbeddings`: the user scope (the agent's rows and that user's) and a page. */
export interface ListFailedEmbeddingsOptions extends UserScope {
  /** Default 100, at most {@link MAX_BACKLOG_PAGE}. */
  readonly limit?: number;
  /** The page after this id (ids ascending). */
  readonly afterId?: string;
}

/** A session of an agent as the session list shows it. */
export interface SessionSummary {
  readonly sessionId: string;
  /** Entries logged in it that the scope sees (messages, tool calls and results). */
  readonly entries: number;
  /** The first and the last entry's time (epoch ms). */
  readonly firstAt: number;
  readonly lastAt: number;
}

/** Options of `listSessionSummaries`: the user scope (the agent's entries and that user's) and a page. */
export interface ListSessionSummariesOptions extends UserScope {
  /** Default 100, at most {@link MAX_BACKLOG_PAGE}. */
  readonly limit?: number;
  /** The page after this session id (ids ascending). */
  readonly afterSessionId?: string;
}

/** The backlog reads of the port (part of `MemoryStore`). */
export interface BacklogReadSlice {
  /**
   * The agent's `error` rows (active or not), by id; with `forUser`, the agent's own and that user's, never
   * another user's. Each carries its stored error code read as untrusted ({@link readEmbeddingErrorCode}).
   */
  listFailedEmbeddings(
    agentId: string,
    options?: ListFailedEmbeddingsOptions,
  ): Promise<readonly FailedEmbedding[]>;
  /**
   * The agent's sessions that have logged entries, by session id, each with how many entries the scope sees
   * and the first and last one's time; with `forUser`, only the agent's entries and that user's count, and a
   * session with none of them is left out.
   */
  listSessionSummaries(
    agentId: string,
    options?: ListSessionSummariesOptions,
  ): Promise<readonly SessionSummary[]>;
}

/** True for a code a store keeps: an Engram error code of at most {@link MAX_EMBEDDING_ERROR_LENGTH}. */
export function isEmbeddingErrorCode(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    value.length <= MAX_EMBEDDING_ERROR_LENGTH &&
    ENGRAM_ERROR_CODE_PATTERN.test(value)
  );
}

/** Checks the code of an `error` outcome on write: absent, or an Engram error code (never a message). */
export function checkEmbeddingErrorCode(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (!isEmbeddingErrorCode(value)) {
    throw invalidInput(
      `${field} must be an error code like ENGRAM_PROVIDER_TIMEOUT (at most ${MAX_EMBEDDING_ERROR_LENGTH} characters)`,
    );
  }
  return value;
}

/** A stored code read back: the code when it has the shape, else {@link UNKNOWN_EMBEDDING_ERROR}; never throws. */
export function readEmbeddingErrorCode(stored: unknown): string {
  return isEmbeddingErrorCode(stored) ? stored : UNKNOWN_EMBEDDING_ERROR;
}

/** A stored count or time read back: a safe non-negative integer, else the fallback; never throws. */
export function readBacklogNumber<T extends number | null>(stored: unknown, fallback: T): number | T {
  const n =
    typeof stored === 'bigint' ? Number(stored) : typeof stored === 'string' ? Number(stored) : stored;
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/** The checked arguments of `listFailedEmbeddings`. */
export function checkFailedEmbeddingsCall(
  agentId: string,
  options: ListFailedEmbeddingsOptions | undefined,
): { agentId: string; forUser: string | null; limit: number; afterId: string | null } {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw invalidInput('options must be an object');
  return {
    agentId: validateAgentId(agentId),
    forUser: checkUserScope(options),
    limit: validateLimit(options?.limit, 'limit', MAX_BACKLOG_PAGE, 100),
    afterId: options?.afterId === undefined ? null : validateId(options.afterId, 'afterId'),
  };
}

/** The checked arguments of `listSessionSummaries`. */
export function checkSessionSummariesCall(
  agentId: string,
  options: ListSessionSummariesOptions | undefined,
): { agentId: string; forUser: string | null; limit: number; afterSessionId: string | null } {
  if (options !== undefined && (typeof options !== 'object' || options === null))
    throw invalidInput('options must be an object');
  return {
    agentId: validateAgentId(agentId),
    forUser: checkUserScope(options),
    limit: validateLimit(options?.limit, 'limit', MAX_BACKLOG_PAGE, 100),
    afterSessionId:
      options?.afterSessionId === undefined
        ? null
        : validateAgentId(options.afterSessionId, 'afterSessionId'),
  };
}
