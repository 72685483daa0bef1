/**
 * `@engram/contracts/rules`: the shared input rules (identifiers, tags, timestamps, filters, archive pointers,
 * text normal form and hash, CJK, tokens, deadlines). Imports nothing but `node:crypto`, so a package that
 * only checks an input does not build the health schemas (zod).
 */
export type { AgentIdFormProblem, IdentifierProblem } from './agent-id.js';
export {
  AGENT_ID_FORM_PROBLEMS,
  checkAgentId,
  checkAgentIdForm,
  checkMemoryId,
  IDENTIFIER_PROBLEMS,
  isValidAgentId,
  MAX_AGENT_ID_LENGTH,
  MAX_MEMORY_ID_LENGTH,
} from './agent-id.js';
export { CJK_CHARACTER, CJK_CLASS_SOURCE, hasCjk } from './cjk.js';
export { REDACTED, redactConnectionUrl, redactConnectionUrls } from './connection-url.js';
export type {
  Deadline,
  DeadlineExpiry,
  DeadlineOptions,
  DeadlineOutcome,
  Timers,
  WithDeadlineOptions,
} from './deadline.js';
export { backgroundTimers, createDeadline, systemTimers, withDeadline } from './deadline.js';
export type {
  MemoryFilter,
  MemoryFilterProblem,
  MetadataCondition,
  MetadataScalar,
  NormalisedCondition,
  NormalisedFilter,
} from './memory-filter.js';
export {
  checkMemoryFilter,
  MAX_FILTER_STRING_LENGTH,
  MAX_IN_VALUES,
  MAX_METADATA_CONDITIONS,
  MAX_METADATA_PATH_DEPTH,
  MEMORY_FILTER_PROBLEMS,
  METADATA_KEY_PATTERN,
  matchesMemoryFilter,
  metadataPath,
} from './memory-filter.js';
export type { ArchivePointer } from './pointer.js';
export {
  ARCHIVE_POINTER_PATTERN,
  formatArchivePointer,
  MAX_POINTER_SESSION_ID_LENGTH,
  parseArchivePointer,
} from './pointer.js';
export type { TagProblem } from './tag.js';
export {
  checkTag,
  isValidTag,
  MAX_TAG_VALUE_LENGTH,
  MAX_TAGS,
  TAG_PREFIX_PATTERN,
  TAG_PROBLEMS,
} from './tag.js';
export {
  contentHash,
  contentHashOfNfkc,
  hasControlCharacter,
  isWellFormedText,
  normalizeContent,
  toWellFormedText,
} from './text.js';
export type { TimestampProblem } from './timestamp.js';
export {
  checkTimestamp,
  isValidTimestamp,
  MAX_TIMESTAMP_MS,
  TIMESTAMP_PROBLEMS,
} from './timestamp.js';
export { estimateTokens, tokenUnits } from './tokens.js';
