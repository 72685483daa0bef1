import type { MemoryKind } from '@engram/store';
import { EngramRetrievalError } from '../errors.js';
import { RETRIEVAL_PURPOSES, type RetrievalPurpose } from '../execution.js';
import { DEFAULT_LIMIT, DEFAULT_RECALL_KINDS, KNOWN_KINDS, MAX_LIMIT, MAX_TAG_FILTERS } from './settings.js';

/** The store's tag shape: a lower-case prefix, a colon, a value without control characters. */
const TAG_FILTER = /^[a-z][a-z0-9_-]{0,31}:[^\u0000-\u001f\u007f]{1,512}$/;

/** Options of one retrieval call. */
export interface RetrieveOptions {
  /** Results wanted, an integer ≥ 1 (default 10); values above 100 are clamped to 100. */
  readonly limit?: number;
  /** Kinds to search (default: event, fact, semantic, episodic, reflection). */
  readonly kinds?: readonly MemoryKind[];
  /** Exact tags every result must carry, e.g. `file:src/a.ts`, `tool:bash` (at most 16). */
  readonly tags?: readonly string[];
  /** Cancels the call: the answer is `cancelled` with no results. */
  readonly signal?: AbortSignal;
}

/** A call's options after validation, with defaults applied. */
export interface ValidatedCall {
  readonly limit: number;
  readonly kinds: readonly MemoryKind[];
  readonly tags: readonly string[];
  readonly signal: AbortSignal | undefined;
}

function invalidInput(message: string): EngramRetrievalError {
  return new EngramRetrievalError('ENGRAM_RETRIEVAL_INVALID_INPUT', message);
}

/** Validates one call's arguments before anything is read; throws `ENGRAM_RETRIEVAL_INVALID_INPUT`. */
export function validateCall(
  purpose: RetrievalPurpose,
  agentId: unknown,
  query: unknown,
  options: unknown,
): ValidatedCall {
  if (!(RETRIEVAL_PURPOSES as readonly string[]).includes(purpose))
    throw invalidInput('Unknown retrieval purpose.');
  if (typeof agentId !== 'string' || agentId.trim() === '')
    throw invalidInput('agentId must be a non-empty string.');
  if (typeof query !== 'string') throw invalidInput('query must be a string.');
  if (options !== undefined && (typeof options !== 'object' || options === null)) {
    throw invalidInput('options must be an object.');
  }
  const o = (options ?? {}) as RetrieveOptions;
  const rawLimit = o.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(rawLimit) || rawLimit < 1) throw invalidInput('limit must be a positive integer.');
  const kinds = validateKinds(o.kinds);
  const tags = validateTags(o.tags);
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal))
    throw invalidInput('signal must be an AbortSignal.');
  return { limit: Math.min(rawLimit, MAX_LIMIT), kinds, tags, signal: o.signal };
}

function validateKinds(kinds: unknown): readonly MemoryKind[] {
  if (kinds === undefined) return DEFAULT_RECALL_KINDS;
  if (!Array.isArray(kinds) || kinds.length === 0) throw invalidInput('kinds must be a non-empty array.');
  for (const kind of kinds) {
    if (!(KNOWN_KINDS as readonly unknown[]).includes(kind))
      throw invalidInput('kinds contains an unknown kind.');
  }
  return [...new Set(kinds as MemoryKind[])];
}

function validateTags(tags: unknown): readonly string[] {
  if (tags === undefined) return [];
  if (!Array.isArray(tags) || tags.length > MAX_TAG_FILTERS) {
    throw invalidInput(`tags must be an array of at most ${MAX_TAG_FILTERS} strings.`);
  }
  for (const tag of tags) {
    if (typeof tag !== 'string' || !TAG_FILTER.test(tag) || tag.length > 560) {
      throw invalidInput('tags must be prefix:value strings without control characters.');
    }
  }
  return [...new Set(tags as string[])];
}
