/**
 * The user key of the search indexes (schema version 15): each vector of the vec0 tables and each BM25 posting
 * carries its memory's user as an integer, `user_key`, so that a user-scoped search restricts its scan inside
 * the index (`user_key IN (0, key)` for `forUser`, `user_key = key` for `userId`) instead of ranking every row of
 * the agent and dropping other users' rows afterwards. In the vector index it is a vec0 metadata column: vec0
 * skips the distance of every vector whose key does not match, so the k nearest are the scope's nearest and no
 * over-fetch and refill is needed; in the postings (`lexical-postings.ts`) a column read with each posting, so
 * only the scope's units are scored, grouped and ranked.
 *
 * The key is 0 for the agent's own rows (no user) and a 31-bit hash of the user id otherwise (never 0; four bytes
 * in a posting, none for the agent's own). Two users may share a key: the index then lets the other user's rows
 * through, and the candidate queries' exact `user_id` condition drops them (the vector arm's refill keeps its top
 * k full), so the key only narrows the scan and never decides what passes. An integer, not the id as text: vec0
 * compares text metadata by length and a 12-byte prefix and reads longer values from another table row by row, so
 * ids that share a prefix (an e-mail domain, a tenant name) would cost a read per row; an integer is compared in
 * place, and costs a posting four bytes, not the id's length.
 */
import type { FilterParams } from './filters.js';

/** The key of the agent's own rows (no user). */
export const NO_USER_KEY = 0;

/** The `user_key` of a memory of `userId` (null: the agent's own). */
export function userKey(userId: string | null | undefined): number {
  if (userId === null || userId === undefined) return NO_USER_KEY;
  // Two FNV-1a passes over the UTF-16 units with different offsets, folded into 31 bits.
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < userId.length; i += 1) {
    const c = userId.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 13);
  }
  const key = (a ^ (b >>> 7)) >>> 1;
  return key === NO_USER_KEY ? 1 : key;
}

/**
 * Which user restriction a search can apply inside an index for a filter: `one` (a `userId` scope: that user's
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

/**
 * The condition on `user_key` of an index's rows (`column`: the vec0 table's own column, or a posting's
 * `p.user_key`), an `AND` clause over `@uk`, empty for `none`.
 */
export function knnUsersSql(users: KnnUsers, column = 'user_key'): string {
  return users === 'one'
    ? ` AND ${column} = @uk`
    : users === 'own'
      ? ` AND ${column} IN (${NO_USER_KEY}, @uk)`
      : '';
}
