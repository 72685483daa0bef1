import {
  MEMORY_KINDS,
  type MemoryKind,
  RECALLABLE_KINDS,
  RETRIEVAL_PURPOSES,
  type RetrievalPurpose,
} from '@engram/contracts/enums';
import {
  type AgentIdFormProblem,
  checkAgentId,
  checkAgentIdForm,
  checkMemoryFilter,
  checkTag,
  checkTimestamp,
  type IdentifierProblem,
  type MemoryFilter,
  type NormalisedFilter,
} from '@engram/contracts/rules';
import type { TimeScope } from '@engram/store';
import { EngramRetrievalError } from '../errors.js';
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_TAG_FILTERS } from './settings.js';

/** Options of one retrieval call. */
export interface RetrieveOptions {
  /** Results wanted, an integer ≥ 1 (default 10); values above 100 are clamped to 100. */
  readonly limit?: number;
  /** Kinds to search (default: event, fact, semantic, episodic, reflection). */
  readonly kinds?: readonly MemoryKind[];
  /** Exact tags every result must carry, e.g. `file:src/a.ts`, `tool:bash` (at most 16). */
  readonly tags?: readonly string[];
  /** Also return `archived` rows (archived by decay or by a challenge); default false: active rows only. */
  readonly includeArchived?: boolean;
  /** Cancels the call: the answer is `cancelled` with no results. */
  readonly signal?: AbortSignal;
  /** User and session scopes and metadata conditions every result must pass (applied inside both arms). */
  readonly filter?: MemoryFilter;
  /** The facts valid at this time (epoch ms) instead of the current ones: superseded facts that held then. */
  readonly asOf?: number;
  /** Current and superseded facts alike (ignored with `asOf`). */
  readonly includeHistory?: boolean;
  /**
   * The time (epoch ms) a time the query names ("last week") is counted from: by default `asOf`, else the
   * retriever's clock.
   */
  readonly referenceTime?: number;
}

/** A call's options after validation, with defaults applied. */
export interface ValidatedCall {
  readonly limit: number;
  readonly kinds: readonly MemoryKind[];
  readonly tags: readonly string[];
  readonly includeArchived: boolean;
  readonly signal: AbortSignal | undefined;
  /** The caller's filter as given (the store checks it again) and its checked form; null without one. */
  readonly filter: { readonly given: MemoryFilter; readonly checked: NormalisedFilter } | null;
  /** The time scope the arms and revalidation use. */
  readonly time: TimeScope;
  /** The caller's reference time for a time the query names (`referenceTime`, else `asOf`), or null: the clock. */
  readonly referenceTime: number | null;
}

/**
 * The problem with an agent id by the contracts' rules (the store's own): well formed, and in normal form (NFC,
 * no surrounding whitespace), so a look-alike spelling is refused rather than silently a second agent.
 */
export function agentIdProblem(value: unknown): IdentifierProblem | AgentIdFormProblem | null {
  return checkAgentId(value) ?? checkAgentIdForm(value);
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
  // The store's own agent-id rule, checked before anything is read: a caller mistake is never a store error.
  const problem = agentIdProblem(agentId);
  if (problem !== null) throw invalidInput(`agentId is invalid (${problem}).`);
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
  let filter: ValidatedCall['filter'] = null;
  if (o.filter !== undefined) {
    const checked = checkMemoryFilter(o.filter);
    if (!checked.ok) throw invalidInput(`filter is invalid (${checked.problem}).`);
    filter = { given: o.filter, checked: checked.filter };
  }
  if (o.asOf !== undefined && checkTimestamp(o.asOf) !== null)
    throw invalidInput('asOf must be epoch milliseconds.');
  if (o.referenceTime !== undefined && checkTimestamp(o.referenceTime) !== null)
    throw invalidInput('referenceTime must be epoch milliseconds.');
  if (o.includeHistory !== undefined && typeof o.includeHistory !== 'boolean') {
    throw invalidInput('includeHistory must be a boolean.');
  }
  const time: TimeScope =
    o.asOf !== undefined ? { asOf: o.asOf } : o.includeHistory === true ? { includeHistory: true } : {};
  if (o.includeArchived !== undefined && typeof o.includeArchived !== 'boolean')
    throw invalidInput('includeArchived must be a boolean.');
  return {
    limit: Math.min(rawLimit, MAX_LIMIT),
    kinds,
    tags,
    includeArchived: o.includeArchived === true,
    signal: o.signal,
    filter,
    time,
    referenceTime: o.referenceTime ?? o.asOf ?? null,
  };
}

function validateKinds(kinds: unknown): readonly MemoryKind[] {
  if (kinds === undefined) return RECALLABLE_KINDS;
  if (!Array.isArray(kinds) || kinds.length === 0) throw invalidInput('kinds must be a non-empty array.');
  for (const kind of kinds) {
    if (!(MEMORY_KINDS as readonly unknown[]).includes(kind))
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
    const problem = checkTag(tag);
    if (problem !== null) throw invalidInput(`tags contains an invalid tag (${problem}).`);
  }
  return [...new Set(tags as string[])];
}
