/**
 * `@engram/store/port-kit`: the pure pieces a second adapter of the store port reuses, so that it validates,
 * chunks, tokenizes and ranks exactly as the SQLite adapter does (one rule in one place). No native code and
 * no SQL: input validation (the query filters and the whole vector query included), chunk spans, the BM25
 * tokenizer and query planner, the idf, the LIKE-path text, the embedder fingerprint and the default memory id. Like `@engram/store/raw` it carries no compatibility promise beyond the store's
 * own adapters.
 */

export type { Bm25Plan, Bm25Role, Bm25Term } from './bm25-plan.js';
export { MAX_PHRASES, planBm25Query } from './bm25-plan.js';
export { chunkSpans } from './chunking.js';
export { checkEmbeddingOutcomes } from './embedding-outcomes.js';
export { invalidInput } from './errors.js';
export type { HistoryInput } from './facts-types.js';
export { CONFLICT_REASONS, CONFLICT_STATES, forgetOptions } from './facts-validate.js';
export type { Bm25Settings } from './lexical-index.js';
export { bm25Idf, DEFAULT_BM25 } from './lexical-index.js';
export type { LexicalPlan } from './lexical-plan.js';
export { planLexicalQuery } from './lexical-plan.js';
export { indexTokens, queryTokens, termFrequencies } from './lexical-tokens.js';
export { timeOrderedId } from './memory-id.js';
export { codePointLength, likeText, splitCjkSegments } from './normalize.js';
export type { CheckedTime, CheckedVectorQuery } from './query-checks.js';
export {
  checkFilter,
  checkKinds,
  checkTags,
  checkTime,
  validateVectorQuery,
} from './query-checks.js';
export { TOKENIZER_DESCRIPTION } from './schema.js';
export { embeddingFingerprint } from './sqlite/migrate.js';
export type { PreparedEvent, PreparedMemory, PreparedPatch, ValidationLimits } from './validate.js';
export {
  DEFAULT_MAX_CONTENT_LENGTH,
  prepareEvent,
  prepareNewMemory,
  preparePatch,
  prepareSkill,
  validateAgentId,
  validateContent,
  validateId,
  validateInteger,
  validateKind,
  validateLifecycle,
  validateLimit,
  validateMaintenanceClaim,
  validateSkillName,
  validateTag,
  validateTags,
  validateTimestamp,
  validateUnit,
  validateVector,
} from './validate.js';
