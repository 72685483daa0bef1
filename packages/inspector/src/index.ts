/**
 * `@engram/inspector`: see what your agent remembers. A local page over a memory file — memories with their
 * history, search with each result's explanation, open conflicts with confirmed corrections, a session's log
 * with what recall would put before a model, and the embedding backlog — served on 127.0.0.1 behind a random
 * token. Nothing in Engram starts it: `engram inspect` or the application does.
 */
export type { InspectorAsset } from './assets.js';
export { inspectorAssets } from './assets.js';
export type { EngramInspectorErrorCode } from './errors.js';
export { EngramInspectorError, isEngramInspectorError } from './errors.js';
export { createInspectorToken } from './guard.js';
export type { InspectorHandler, InspectorHandlerConfig } from './handler.js';
export { createInspectorHandler } from './handler.js';
export type { Locale } from './i18n.js';
export type { OpenedInspectorSource, OpenInspectorOptions } from './open.js';
export { openInspectorSource } from './open.js';
export type { InspectorServer, InspectorServerConfig } from './server.js';
export { startInspector } from './server.js';
export type { InspectorAbout, InspectorMemory, InspectorSource } from './source.js';
