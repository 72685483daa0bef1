/**
 * The user key of a vector row (schema version 15): each vector of the vec0 tables carries its memory's user as
 * an integer metadata column, `user_key`, so that a user-scoped k-NN restricts its scan inside sqlite-vec
 * (`user_key IN (0, key)` for `forUser`, `user_key = key` for `userId`): vec0 skips the distance of every row
 * whose key does not match, and the k nearest are the nearest rows of the scope, not of the whole agent.
 *
 * The key is 0 for the agent's own rows (no user) and a 53-bit hash of the user id otherwise (never 0). Two users
 * may share a key: the index then lets the other user's rows through, and the candidate query's exact
 * `user_id` condition drops them (its refill keeps the top k full), so the hash only narrows the scan and never
 * decides what passes. An integer column, not the id as text: vec0 compares text metadata by length and a
 * 12-byte prefix and reads longer values from another table row by row, so ids that share a prefix (an e-mail
 * domain, a tenant name) would cost a read per row; an integer is compared in place.
 */
import type { FilterParams } from './filters.js';

/** The key of the agent's own rows (no user). */
export const NO_USER_KEY = 0;

/** The `user_key` of a vector of a memory of `userId` (null: the agent's own). */
export function userKey(userId: string | null | undefined): number {
  if (userId === null || userId === undefined) return NO_USER_KEY;
  // Two FNV-1a passes over the UTF-16 units with different offsets, combined into 53 bits.
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < userId.length; i += 1) {
    const c = userId.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 13);
  }
  const key = (a >>> 0) * 0x200000 + ((b >>> 0) & 0x1fffff);
  return key === NO_USER_KEY ? 1 : key;
}

/**
 * Which user restriction a k-NN can apply inside the index for a filter: `one` (a `userId` scope: that user's
 * rows), `own` (`forUser`: the agent's own rows and that user's) or `none`, with the key bound as `@uk`.
 */
export type KnnUsers = 'none' | 'one' | 'own';

/** The index-side user restriction of a filter's parameters, and its key parameter. */
export function knnUsers(scope: FilterParams | null): { users: KnnUsers; uk: number } {
  if (scope === null) return { users: 'none', uk: NO_USER_KEY };
  if (scope.fUser !== null) return { users: 'one', uk: userKey(scope.fUser) };
  if (scope.fForUser !== null) return { users: 'own', uk: userKey(scope.fForUser) };
  return { users: 'none', uk: NO_USER_KEY };
}

/** The k-NN's condition on `user_key` (over the vec0 table's own columns), empty for `none`. */
export function knnUsersSql(users: KnnUsers): string {
  return users === 'one'
    ? ' AND user_key = @uk'
    : users === 'own'
      ? ` AND user_key IN (${NO_USER_KEY}, @uk)`
      : '';
}
