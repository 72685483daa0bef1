/**
 * `@engram/store/port-kit`: the pure pieces an adapter of the store port reuses, so that every adapter
 * validates, chunks, tokenizes and ranks exactly as the others do (one rule in one place). No native code and
 * no SQL: input validation (the query filters and the whole vector query included), chunk spans, the BM25
 * tokenizer, query planner and idf, the LIKE-path text, the embedder fingerprint, the default memory id, the
 * export format and its rows. Like an adapter's own raw entry it carries no compatibility promise beyond the
 * store's own adapters.
 */

export * from './adapter-context.js';
export * from './backlog-reads.js';
export * from './bm25.js';
export * from './bm25-plan.js';
/** The rules both adapters follow, by slice: each a namespace of pure functions (see its module). */
export * as callRules from './call-rules.js';
export * from './chunking.js';
export * from './embedding-outcomes.js';
export * from './errors.js';
export * as factsRules from './facts-rules.js';
export * from './facts-types.js';
export * from './facts-validate.js';
export * from './health-rules.js';
export * as historyRules from './history-rules.js';
export * from './import-rows.js';
export * as importRows from './import-rows.js';
export * from './lexical-plan.js';
export * from './lexical-tokens.js';
export * as lifecycleRules from './lifecycle-rules.js';
export * from './memory-id.js';
export * from './normalize.js';
export * from './process-beats.js';
export * from './query-checks.js';
export * from './scope.js';
export * from './session-read.js';
export * from './store-facade.js';
export * from './store-options.js';
export * as storedRows from './stored-rows.js';
export * from './stored-values.js';
export * from './transfer.js';
export * from './types.js';
export * from './validate.js';
