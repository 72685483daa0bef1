/**
 * The lifecycle rules both adapters follow: what an insert, an archive, a supersede, a lifecycle move and a
 * merge accept (checked before any statement runs, so bad input changes nothing), and the history entry a
 * supersede records. Pure; the statements stay the adapter's.
 */
import { EngramStoreError, invalidInput } from './errors.js';
import type { HistoryInput } from './facts-types.js';
import { forgetOptions } from './facts-validate.js';
import { checkUserScope, type UserScope } from './scope.js';
import type { EmbeddingProfile, Lifecycle, MergeSource, NewMemory, SupersedeOptions } from './types.js';
import {
  type PreparedMemory,
  prepareNewMemory,
  type ValidationLimits,
  validateAgentId,
  validateId,
  validateInteger,
  validateLifecycle,
  validateVector,
} from './validate.js';

/** What an insert is checked against: the store's limits and the embedder profile it is bound to. */
export interface InsertRules {
  readonly limits: ValidationLimits;
  readonly profile: EmbeddingProfile | null;
}

/**
 * Validates a new memory, and its vector against the bound profile (`ENGRAM_STORE_VECTOR_UNAVAILABLE` when the
 * store has none); `field` names it in errors.
 */
export function prepareMemoryInsert(rules: InsertRules, input: NewMemory, field: string): PreparedMemory {
  const prepared = prepareNewMemory(input, rules.limits, field);
  if (prepared.vector !== undefined) {
    if (rules.profile === null) {
      throw new EngramStoreError(
        'ENGRAM_STORE_VECTOR_UNAVAILABLE',
        'the store has no embedder profile, so it cannot store vectors',
      );
    }
    validateVector(prepared.vector, rules.profile.dimensions, `${field}.vector`);
  }
  return prepared;
}

/** A generated memory id, checked like a caller's. */
export function generatedMemoryId(idFactory: () => string): string {
  return validateId(idFactory(), 'generated id');
}

/** The arguments of `archiveMemory` (the revision only when given); the checked user of the scope, or null. */
export function validateArchiveArgs(
  agentId: string,
  id: string,
  expectedRevision?: number,
  scope?: UserScope,
): string | null {
  validateAgentId(agentId);
  validateId(id);
  if (expectedRevision !== undefined) validateInteger(expectedRevision, 'expectedRevision', 1);
  return checkUserScope(scope);
}

/** The arguments of `supersedeMemory`; the prepared replacement, which must belong to the same agent. */
export function validateSupersedeArgs(
  rules: InsertRules,
  agentId: string,
  oldId: string,
  expectedRevision: number,
  replacement: NewMemory,
): PreparedMemory {
  validateAgentId(agentId);
  validateId(oldId, 'oldId');
  validateInteger(expectedRevision, 'expectedRevision', 1);
  const prepared = prepareMemoryInsert(rules, replacement, 'replacement');
  if (prepared.agentId !== agentId) throw invalidInput('replacement.agentId must equal agentId');
  return prepared;
}

/** The arguments of `setLifecycle`; the checked user of the scope, or null. */
export function validateLifecycleMoveArgs(
  agentId: string,
  id: string,
  expectedRevision: number,
  lifecycle: Lifecycle,
  scope?: UserScope,
): string | null {
  validateAgentId(agentId);
  validateId(id);
  validateInteger(expectedRevision, 'expectedRevision', 1);
  validateLifecycle(lifecycle);
  return checkUserScope(scope);
}

/**
 * The arguments of `mergeMemories`: 2 to 64 sources, each an object with an id and a revision, no id twice;
 * the prepared merged memory, which must belong to the same agent.
 */
export function validateMergeArgs(
  rules: InsertRules,
  agentId: string,
  sources: readonly MergeSource[],
  merged: NewMemory,
): PreparedMemory {
  validateAgentId(agentId);
  if (!Array.isArray(sources)) throw invalidInput('sources must be an array');
  if (sources.length < 2 || sources.length > 64) throw invalidInput('a merge takes 2 to 64 sources');
  const seen = new Set<string>();
  for (const [i, s] of sources.entries()) {
    if (typeof s !== 'object' || s === null) throw invalidInput('source must be an object');
    validateId(s.id, `sources[${i}].id`);
    validateInteger(s.expectedRevision, `sources[${i}].expectedRevision`, 1);
    if (seen.has(s.id)) throw invalidInput('sources name the same id twice');
    seen.add(s.id);
  }
  const prepared = prepareMemoryInsert(rules, merged, 'merged');
  if (prepared.agentId !== agentId) throw invalidInput('merged.agentId must equal agentId');
  return prepared;
}

/**
 * Who corrected a row and why, as a supersede's options name them (checked as a forget's are); undefined when
 * they name neither, so the history entry says nothing of it.
 */
export function supersedeRetirer(options: SupersedeOptions | undefined): Retirer | undefined {
  if (typeof options !== 'object' || options === null) return undefined;
  if (options.actor === undefined && options.reason === undefined) return undefined;
  return forgetOptions({
    ...(options.actor === undefined ? {} : { actor: options.actor }),
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  });
}

/** Who retires a row and why (as `forgetOptions` checked them). */
export interface Retirer {
  readonly actor: string;
  readonly reason: string | null;
}

/**
 * The history entry of a row superseded by `successor` at `at`, at the row's new revision, naming the row's
 * user; `who` when a caller named who retired it (a settled conflict).
 */
export function supersededEntry(
  agentId: string,
  row: { readonly id: string; readonly revision: number; readonly userId: string | null },
  successor: string,
  at: number,
  who?: Retirer,
): HistoryInput {
  return {
    agentId,
    memoryId: row.id,
    action: 'superseded',
    at,
    revision: row.revision,
    ...(who === undefined ? {} : { actor: who.actor, reason: who.reason }),
    relatedId: successor,
    userId: row.userId,
  };
}
