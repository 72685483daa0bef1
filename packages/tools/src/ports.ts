import type { MemoryStore } from '@engram/store';

/**
 * The slice of the store that the agent-facing tools need (the retriever they are given reads through its own
 * `RetrievalStore` slice of `@engram/retrieval`).
 *
 * Contract: async; rejections are `EngramStoreError`s, which the tool handler turns into an `ok: false`
 * answer naming the error code. `embeddingProfile` tells the tools whether a fact's vector may be written
 * with the row (only when it equals the embedder's profile).
 */
export type ToolStore = Pick<
  MemoryStore,
  | 'embeddingProfile'
  | 'insertUniqueMemory'
  | 'getMemory'
  | 'findByContentHash'
  | 'listMemories'
  | 'updateMemory'
  | 'supersedeMemory'
  | 'forgetMemory'
  | 'linkConflict'
  | 'readEvents'
  | 'writeSkill'
  | 'deleteSkill'
  | 'listSkills'
>;

/**
 * The slice of the store that corrections need (see `correctMemory`); with the conflict methods, an open
 * contradiction of the corrected memory moves to its new version.
 */
export type CorrectionStore = Pick<MemoryStore, 'getMemory' | 'supersedeMemory'> &
  Partial<Pick<MemoryStore, 'listConflicts' | 'linkConflict'>>;
