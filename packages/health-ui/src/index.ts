export type { HealthDto } from '@engram/diagnostics';
export type { HealthUiAsset, HealthUiAssets } from './assets.js';
export { healthUiAssets } from './assets.js';
export type { EngramHealthUiErrorCode } from './errors.js';
export { ENGRAM_HEALTH_UI_ERROR_CODES, EngramHealthUiError, isEngramHealthUiError } from './errors.js';
export type { HealthApiErrorCode, HealthHandler, HealthHandlerConfig } from './handler.js';
export { createHealthHandler, MAX_AGENT_ID_LENGTH, MAX_AGENTS_LISTED } from './handler.js';
export type { HealthServer, HealthServerConfig } from './server.js';
export { startHealthServer } from './server.js';
