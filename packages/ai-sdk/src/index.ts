/**
 * `@engram/ai-sdk`: Engram for the Vercel AI SDK. `engramMiddleware(memory)` for `wrapLanguageModel` puts the
 * agent's memory into each call and records the exchange; `engramTools(memory)` gives the model the memory tools.
 */

export type { EngramMiddlewareOptions } from './middleware.js';
export { engramMiddleware } from './middleware.js';
export type { EngramToolsOptions } from './tools.js';
export { engramTools } from './tools.js';
