/**
 * The input rule of `commitEmbeddings`, shared by every store that implements the port.
 */
import { checkEmbeddingErrorCode } from './backlog-reads.js';
import { EngramStoreError, invalidInput } from './errors.js';
import type { EmbeddingOutcome, EmbeddingProfile } from './types.js';
import { validateId, validateInteger, validateVector } from './validate.js';

/**
 * Checks a batch of embedding outcomes against the store's embedder profile: ids, chunk indexes and revisions,
 * no item named twice, an error code of the shape `ENGRAM_…` (never a message) on an `error` one, and a vector of the profile's dimensions for every `ready` one. Throws the store's
 * typed error; writes nothing.
 */
export function checkEmbeddingOutcomes(
  profile: EmbeddingProfile | null,
  outcomes: readonly EmbeddingOutcome[],
): void {
  if (!Array.isArray(outcomes)) throw invalidInput('outcomes must be an array');
  const seen = new Set<string>();
  for (const [i, o] of outcomes.entries()) {
    if (typeof o !== 'object' || o === null) throw invalidInput('outcome must be an object');
    validateId(o.id, `outcomes[${i}].id`);
    if (o.chunk !== undefined) validateInteger(o.chunk, `outcomes[${i}].chunk`, 0);
    const key = o.chunk === undefined ? o.id : `${o.id}\u0000${o.chunk}`;
    if (seen.has(key)) throw invalidInput('outcomes name the same id (and chunk) twice');
    seen.add(key);
    validateInteger(o.revision, `outcomes[${i}].revision`, 1);
    if (o.state === 'ready') {
      if (profile === null) {
        throw new EngramStoreError(
          'ENGRAM_STORE_VECTOR_UNAVAILABLE',
          'the store has no embedder profile, so it cannot store vectors',
        );
      }
      validateVector(o.vector, profile.dimensions, `outcomes[${i}].vector`);
    } else if (o.state === 'error') {
      checkEmbeddingErrorCode(o.code, `outcomes[${i}].code`);
    } else if (o.state !== 'ftsOnly') {
      throw invalidInput(`outcomes[${i}].state must be ready, error or ftsOnly`);
    }
  }
}
