/**
 * `@engram/langchain`: Engram for LangChain.js — `EngramRetriever` (explained results as `Document`s), an
 * `EngramChatMessageHistory` over the event log, and the memory tools as LangChain tools. Each takes a scope
 * (`agentId`, `userId`, and for the history `sessionId`), so one agent serves many users, each seeing only the
 * agent's memories and their own.
 */

export type { EngramChatMessageHistoryInput } from './history.js';
export { EngramChatMessageHistory } from './history.js';
export type { EngramRetrieverInput } from './retriever.js';
export { EngramRetriever } from './retriever.js';
export type { EngramScope } from './scope.js';
export type { EngramToolsOptions } from './tools.js';
export { engramTools } from './tools.js';
