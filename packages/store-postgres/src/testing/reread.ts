/** Shared by the tests of the briefs the searches return (`search-lexical-briefs`, `search-vector-briefs`). */
import type { RevalidateOptions } from '@engram/store';
import type { PostgresMemoryStore } from '../store.js';

/** Re-read options `revalidateBrief` must refuse, and so must a search's `briefs`. */
export const BAD_REREAD_OPTIONS: readonly unknown[] = Object.freeze([
  null,
  'all',
  { includeArchived: 'yes' },
  { asOf: 'yesterday' },
  { forUser: 7 },
]);

/** The error code `revalidateBrief` answers `options` with (`'accepted'` when it does not refuse them). */
export function revalidateBriefRefusal(
  store: PostgresMemoryStore,
  options: unknown,
): Promise<string | undefined> {
  return store.revalidateBrief('a', [{ id: 'x' }], options as RevalidateOptions).then(
    () => 'accepted',
    (error: { code?: string }) => error.code,
  );
}
