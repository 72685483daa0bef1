export type { ConceptGroup } from './concepts.js';
export { CONCEPT_GROUPS_V1 } from './concepts.js';
export type {
  DeterministicEmbedderConfig,
  DeterministicEmbedOptions,
  DeterministicProfile,
} from './embedder.js';
export {
  createDeterministicEmbedder,
  DETERMINISTIC_PROFILE,
  DeterministicEmbedder,
  isZeroVector,
} from './embedder.js';
export type { EngramEmbedderErrorCode } from './errors.js';
export { ENGRAM_EMBEDDER_ERROR_CODES, EngramEmbedderError, isEngramEmbedderError } from './errors.js';
export type { ExtractFeaturesOptions } from './features.js';
export { extractFeatures, normalizeText } from './features.js';
export type { FeatureSlot } from './hash.js';
export { featureSlot, fnv1a32 } from './hash.js';
