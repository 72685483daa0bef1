/**
 * The bookkeeping fields of a fresh, active, embedded memory row as the store returns it (created at 0, never
 * accessed, revision 1). Tests that build rows by hand (where no store runs) spread these, then set what they
 * test; the store's own type checks the result at the call site.
 */
/** The type of {@link FRESH_MEMORY_FIELDS}. */
export interface FreshMemoryFields {
  readonly createdAt: 0;
  readonly updatedAt: 0;
  readonly lastAccessedAt: null;
  readonly accessCount: 0;
  readonly revision: 1;
  readonly lifecycle: 'active';
  readonly supersededBy: null;
  readonly embeddingState: 'ready';
  readonly embeddingFingerprint: null;
  readonly embeddingAttempts: 0;
  readonly userId: null;
  readonly metadata: Readonly<Record<string, never>>;
  readonly validFrom: 0;
  readonly validTo: null;
  readonly forgottenAt: null;
}

export const FRESH_MEMORY_FIELDS: FreshMemoryFields = Object.freeze({
  createdAt: 0,
  updatedAt: 0,
  lastAccessedAt: null,
  accessCount: 0,
  revision: 1,
  lifecycle: 'active',
  supersededBy: null,
  embeddingState: 'ready',
  embeddingFingerprint: null,
  embeddingAttempts: 0,
  userId: null,
  metadata: Object.freeze({}),
  validFrom: 0,
  validTo: null,
  forgottenAt: null,
});
