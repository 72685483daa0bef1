/**
 * Content hashing for exact-duplicate detection. Re-exported from `@engram/store` (whose import loads no native
 * code) so that a hash computed here always equals the `contentHash` the store wrote: one normalisation, no drift.
 */
export { contentHash, normalizeContent } from '@engram/store';
