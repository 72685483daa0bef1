export type { UseEmbedderConfig, UseEmbedOptions, UseLiteProfile } from './embedder.js';
export {
  createUseEmbedder,
  DEFAULT_USE_BATCH_SIZE,
  MAX_USE_BATCH_SIZE,
  USE_LITE_PROFILE,
  UseEmbedder,
} from './embedder.js';
export type { EngramEmbedderUseErrorCode } from './errors.js';
export {
  ENGRAM_EMBEDDER_USE_ERROR_CODES,
  EngramEmbedderUseError,
  isEngramEmbedderUseError,
} from './errors.js';
export { MAX_INPUT_CODE_POINTS, MAX_INPUT_TOKENS, MAX_RAW_INPUT_UNITS, normalizeInput } from './input.js';
export type { UseBackend } from './model.js';
export type { UseEmbedderPoolConfig, UsePoolEmbedOptions } from './pool.js';
export {
  createUseEmbedderPool,
  DEFAULT_USE_BATCH_CHARS,
  defaultUseThreads,
  MAX_USE_THREADS,
  UseEmbedderPool,
} from './pool.js';
