/**
 * Content hashing for exact-duplicate detection. Re-exported from `@engram/contracts` (the rule the store hashes
 * with) so that a hash computed here always equals the `contentHash` the store wrote: one normalisation, no drift.
 */
export { contentHash, normalizeContent } from '@engram/contracts';
