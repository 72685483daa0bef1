/**
 * `@engram/ai-sdk`: Engram for the Vercel AI SDK. `engramMiddleware(memory)` for `wrapLanguageModel` puts the
 * agent's memory into each call and records the exchange; `engramTools(memory)` gives the model the memory
 * tools. Both take a scope (`{ agentId, userId, sessionId }`; the middleware's may be a function of the call),
 * so one agent serves many users.
 */

export type { EngramMiddlewareOptions, EngramScopeFunction } from './middleware.js';
export { engramMiddleware } from './middleware.js';
export type { CallOptions as EngramCallOptions } from './prompt.js';
export type { EngramScope } from './scope.js';
export type { EngramToolsOptions } from './tools.js';
export { engramTools } from './tools.js';
