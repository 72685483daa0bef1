/**
 * `@engram/langchain`: Engram for LangChain.js — `EngramRetriever` (explained results as `Document`s), an
 * `EngramChatMessageHistory` over the event log, and the memory tools as LangChain tools.
 */

export type { EngramChatMessageHistoryInput } from './history.js';
export { EngramChatMessageHistory } from './history.js';
export type { EngramRetrieverInput } from './retriever.js';
export { EngramRetriever } from './retriever.js';
export type { EngramToolsOptions } from './tools.js';
export { engramTools } from './tools.js';
