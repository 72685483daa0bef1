/**
 * The options each method of a `Memory` knows, checked at run time: a key not listed here (a misspelt key,
 * another library's name for an option) is `ENGRAM_MEMORY_INVALID_INPUT` naming the key and the option meant,
 * never silently ignored. Each list is typed by its options interface, so it cannot name an option that does
 * not exist.
 */
import type { RerankConfig } from '@engram/retrieval';
import type { ConflictsOptions, EmbeddingFailuresOptions, SessionsOptions } from './backlog.js';
import type {
  AddOptions,
  CallToolOptions,
  ClearMessagesOptions,
  ContextOptions,
  ExportOptions,
  ForgetOptions,
  ImportOptions,
  IngestOptions,
  ListOptions,
  MemoryChange,
  MessagesOptions,
  Scope,
  SearchOptions,
  UpdateOptions,
} from './types.js';

export const SCOPE_KEYS: readonly (keyof Scope)[] = ['agentId', 'userId'];
export const UPDATE_KEYS: readonly (keyof UpdateOptions)[] = ['agentId', 'userId', 'actor', 'reason'];
export const ADD_KEYS: readonly (keyof AddOptions)[] = [
  'agentId',
  'userId',
  'sessionId',
  'skipLogged',
  'maxContentChars',
  'kind',
  'tags',
  'importance',
  'metadata',
  'validFrom',
];
export const SEARCH_KEYS: readonly (keyof SearchOptions)[] = [
  'agentId',
  'userId',
  'limit',
  'kinds',
  'tags',
  'filter',
  'asOf',
  'includeHistory',
  'referenceTime',
  'minScore',
  'signal',
];
export const CHANGE_KEYS: readonly (keyof MemoryChange)[] = ['content', 'tags', 'importance', 'metadata'];
export const FORGET_KEYS: readonly (keyof ForgetOptions)[] = ['agentId', 'userId', 'actor', 'reason'];
export const LIST_KEYS: readonly (keyof ListOptions)[] = [
  'agentId',
  'userId',
  'kinds',
  'tags',
  'filter',
  'includeInactive',
  'limit',
  'afterId',
];
export const INGEST_KEYS: readonly (keyof IngestOptions)[] = ['agentId', 'userId', 'sessionId'];
export const MAINTAIN_KEYS: readonly (keyof (Scope & { readonly force?: boolean }))[] = [
  'agentId',
  'userId',
  'force',
];
export const HEALTH_KEYS: readonly 'agentId'[] = ['agentId'];
export const CONTEXT_KEYS: readonly (keyof ContextOptions)[] = [
  'agentId',
  'userId',
  'sessionId',
  'recentMessages',
  'budgetTokens',
  'recallLimit',
  'signal',
];
export const CALL_TOOL_KEYS: readonly (keyof CallToolOptions)[] = [
  'agentId',
  'userId',
  'sessionId',
  'signal',
];
export const MESSAGES_KEYS: readonly (keyof MessagesOptions)[] = ['agentId', 'userId', 'sessionId', 'limit'];
export const CLEAR_MESSAGES_KEYS: readonly (keyof ClearMessagesOptions)[] = [
  'agentId',
  'userId',
  'sessionId',
];
export const EXPORT_KEYS: readonly (keyof ExportOptions)[] = ['agentId', 'userId', 'sessionId', 'vectors'];
export const IMPORT_KEYS: readonly (keyof ImportOptions)[] = ['agentId', 'keepAges', 'onProgress'];
export const RERANK_KEYS: readonly (keyof RerankConfig)[] = ['model', 'candidates', 'timeoutMs'];
export const CONFLICTS_KEYS: readonly (keyof ConflictsOptions)[] = ['agentId', 'userId', 'limit'];
export const SESSIONS_KEYS: readonly (keyof SessionsOptions)[] = [
  'agentId',
  'userId',
  'limit',
  'afterSessionId',
];
export const FAILURES_KEYS: readonly (keyof EmbeddingFailuresOptions)[] = [
  'agentId',
  'userId',
  'limit',
  'afterId',
];
