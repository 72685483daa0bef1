/**
 * Corrections: replacing what a memory says with a corrected version, keeping the old one in its lineage. The
 * model-facing `memory_update` and an application's own `update` run the same function; forgetting, deleting
 * an agent's memories and reading a memory's history are store calls (`forgetMemory`, `deleteAll`, `history`).
 */
import { checkAgentId, checkMemoryId } from '@engram/contracts';
import { engramErrorCode } from '@engram/contracts/errors';
import { EngramRetrievalError } from '@engram/retrieval';
import type { MemoryRecord, NewMemory } from '@engram/store';
import { EngramStoreError } from '@engram/store';
import type { CorrectionStore } from './ports.js';

/** Options of {@link correctMemory}. */
export interface CorrectionOptions {
  /** Since when the corrected fact holds (epoch ms); default the store's clock. */
  readonly validFrom?: number;
  /** Replaces the metadata (default: the old version's). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The user the correction acts for: another user's memory is not found (see `UserScope`). */
  readonly forUser?: string;
  /** Who corrected it (`agent`, `user`, an operator's name); kept in the old version's history. */
  readonly actor?: string;
  /** Why, kept in the old version's history. */
  readonly reason?: string;
  /**
   * The new text's vector, stored with the new version (searchable by meaning at once); it must match the
   * store's embedder profile. A text longer than one chunk is embedded by the drain instead.
   */
  readonly vector?: Float32Array;
}

/** The outcome of a correction: the closed old version and the current one. */
export interface Correction {
  readonly superseded: MemoryRecord;
  readonly replacement: MemoryRecord;
}

function invalid(message: string): EngramRetrievalError {
  return new EngramRetrievalError('ENGRAM_RETRIEVAL_INVALID_INPUT', message);
}

/**
 * An open contradiction of a corrected fact stays open on its new version: the correction settles nothing by
 * itself, so the core block and search keep showing the two facts as conflicting until one is resolved.
 */
async function carryOpenConflicts(
  store: CorrectionStore,
  agentId: string,
  oldId: string,
  newId: string,
): Promise<void> {
  if (store.listConflicts === undefined || store.linkConflict === undefined || oldId === newId) return;
  const links = await store.listConflicts(agentId, { ids: [oldId], state: 'open', limit: 100 });
  for (const link of links) {
    const other = link.olderId === oldId ? link.newerId : link.olderId;
    if (other === newId) continue;
    await store.linkConflict(agentId, other, newId, link.reason);
  }
}

/**
 * Refuses to change a memory whose stored revision is not a positive integer (a file edited outside the store):
 * a compare-and-set on it can never succeed. `ENGRAM_STORE_CORRUPT`, naming what still works.
 */
export function checkStoredRevision(revision: number): void {
  if (Number.isSafeInteger(revision) && revision >= 1) return;
  throw new EngramStoreError(
    'ENGRAM_STORE_CORRUPT',
    'the stored revision of this memory is damaged, so it cannot be changed: forget it (and add it again) or restore a backup',
  );
}

/**
 * Corrects a current memory: the new content supersedes it (the old version is closed at the correction time
 * and kept in its history; search returns the new one). The replacement keeps the kind, tags, scopes,
 * metadata, importance and confidence. Compare-and-set with one retry on a concurrent change.
 *
 * Resolves null when the agent has no such current memory (unknown, superseded, archived or forgotten, or
 * with `forUser` another user's).
 * Throws `EngramRetrievalError` for a bad agent id, id or content (nothing is read); a store failure rejects
 * with the store's `EngramStoreError` (a bad replacement, e.g. content over the store's cap, is
 * `ENGRAM_STORE_INVALID_INPUT`).
 */
export async function correctMemory(
  store: CorrectionStore,
  agentId: string,
  id: string,
  content: string,
  options: CorrectionOptions = {},
): Promise<Correction | null> {
  const agentProblem = checkAgentId(agentId);
  if (agentProblem !== null) throw invalid(`agentId is invalid (${agentProblem}).`);
  const idProblem = checkMemoryId(id);
  if (idProblem !== null) throw invalid(`id is invalid (${idProblem}).`);
  if (typeof content !== 'string' || content.trim() === '')
    throw invalid('content must be a non-empty string.');
  for (let attempt = 0; ; attempt += 1) {
    const scope = options.forUser === undefined ? undefined : { forUser: options.forUser };
    const current = await store.getMemory(agentId, id, scope);
    if (current === null || current.lifecycle !== 'active') return null;
    checkStoredRevision(current.revision);
    const replacement: NewMemory = {
      agentId,
      kind: current.kind,
      content: content.trim(),
      importance: current.importance,
      confidence: current.confidence,
      tags: current.tags,
      metadata: options.metadata ?? current.metadata,
      ...(current.userId === null ? {} : { userId: current.userId }),
      ...(current.sessionId === null ? {} : { sessionId: current.sessionId }),
      ...(options.validFrom === undefined ? {} : { validFrom: options.validFrom }),
      ...(options.vector === undefined ? {} : { vector: options.vector }),
    };
    try {
      const corrected = await store.supersedeMemory(agentId, id, current.revision, replacement, {
        ...scope,
        ...(options.actor === undefined ? {} : { actor: options.actor }),
        ...(options.reason === undefined ? {} : { reason: options.reason }),
      });
      await carryOpenConflicts(store, agentId, id, corrected.replacement.id);
      return corrected;
    } catch (error) {
      if (attempt === 0 && engramErrorCode(error) === 'ENGRAM_STORE_REVISION_CONFLICT') continue;
      throw error;
    }
  }
}
