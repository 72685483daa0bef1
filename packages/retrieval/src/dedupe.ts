import { contentHash } from '@engram/contracts/rules';
import { EngramRetrievalError } from './errors.js';

/** Pointers are kept up to this many characters, so the replacement text stays short. */
const MAX_POINTER_CHARS = 200;

/** Configuration of {@link createToolResultDeduper}. */
export interface ToolResultDeduperConfig {
  /** Most distinct results remembered (LRU), an integer in 1..100,000 (default 256). */
  readonly capacity?: number;
  /** Results shorter than this many characters (after normalisation) pass through unchanged (default 64). */
  readonly minChars?: number;
}

/** The verdict on one tool result. */
export type DedupeOutcome =
  | { readonly duplicate: false; readonly text: string }
  | { readonly duplicate: true; readonly text: string; readonly firstPointer: string };

/** Replaces the second and later identical tool results with a pointer to the first one. */
export interface ToolResultDeduper {
  /**
   * Checks a result produced at `pointer` (e.g. `session/s1#12`): a result whose normalised content was seen
   * before becomes a short text pointing at its first occurrence; otherwise it is remembered and returned.
   */
  check(content: string, pointer: string): DedupeOutcome;
  /** Results currently remembered (never more than the capacity). */
  readonly size: number;
  /** Forgets everything. */
  clear(): void;
}

/**
 * Creates a tool-result deduper backed by a bounded LRU (a `Map` whose entries are deleted and re-inserted on
 * every hit, the oldest evicted past the capacity) from the normalised-content hash to the first pointer.
 */
export function createToolResultDeduper(config: ToolResultDeduperConfig = {}): ToolResultDeduper {
  const capacity = config.capacity ?? 256;
  const minChars = config.minChars ?? 64;
  if (!Number.isInteger(capacity) || capacity < 1 || capacity > 100_000) {
    throw new EngramRetrievalError(
      'ENGRAM_RETRIEVAL_INVALID_CONFIG',
      'capacity must be an integer in 1..100000.',
    );
  }
  if (!Number.isInteger(minChars) || minChars < 0)
    throw new EngramRetrievalError(
      'ENGRAM_RETRIEVAL_INVALID_CONFIG',
      'minChars must be a non-negative integer.',
    );
  const firstSeen = new Map<string, string>();
  return {
    check(content: string, pointer: string): DedupeOutcome {
      const normalised = content.normalize('NFKC').replace(/\s+/gu, ' ').trim();
      if (normalised.length < minChars) return { duplicate: false, text: content };
      const key = contentHash(normalised);
      const first = firstSeen.get(key);
      if (first !== undefined) {
        firstSeen.delete(key);
        firstSeen.set(key, first);
        return {
          duplicate: true,
          text: `[identical to the tool result at ${first}; omitted]`,
          firstPointer: first,
        };
      }
      firstSeen.set(key, pointer.slice(0, MAX_POINTER_CHARS));
      if (firstSeen.size > capacity) {
        const oldest = firstSeen.keys().next();
        if (oldest.done !== true) firstSeen.delete(oldest.value);
      }
      return { duplicate: false, text: content };
    },
    get size(): number {
      return firstSeen.size;
    },
    clear(): void {
      firstSeen.clear();
    },
  };
}
