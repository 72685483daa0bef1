export type { HealthDto } from '@engram/contracts';
export type { HealthUiAsset, HealthUiAssets } from './assets.js';
export { healthUiAssets } from './assets.js';
export type { EngramHealthUiErrorCode } from './errors.js';
export { EngramHealthUiError, isEngramHealthUiError } from './errors.js';
export type { HealthHandler, HealthHandlerConfig } from './handler.js';
export { createHealthHandler } from './handler.js';
export type { HealthServer, HealthServerConfig } from './server.js';
export { startHealthServer } from './server.js';
