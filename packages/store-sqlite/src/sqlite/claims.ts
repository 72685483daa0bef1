/**
 * Embedding claims on SQLite (schema version 19, table `embedding_claims`): several processes draining one
 * file share the backlog instead of embedding the same rows. A store opened with `claimLeaseMs` claims the rows
 * its `listPendingEmbeddings` returns, in the same write transaction that chose them: one row per claimed
 * memory (`rid`) with the claimant (the store instance's id) and a deadline on the store clock. Listing skips
 * the rows under another claimant's live claim; a claim whose deadline passed is taken over (its holder died or
 * stalled). A commit applies an outcome only when its row is unclaimed, this store's, or its claim expired
 * (else the outcome is `stale`: another claimant took the row over), and releases this store's claims on the
 * committed rows, whatever their outcome. SQLite's single writer makes choose-and-claim atomic across the
 * processes sharing the file. Without `claimLeaseMs`, listing claims nothing and reads the table never (one
 * drain at a time, as before).
 */
import type { StoreContext } from './context.js';

/** The claims table (created by migration 19): one row per claimed memory. */
export const EMBEDDING_CLAIMS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS embedding_claims (
  rid INTEGER PRIMARY KEY,
  owner TEXT NOT NULL,
  until INTEGER NOT NULL
)`;

/**
 * The condition a listing with claims adds (on `memories m`): no live claim of another claimant on the row.
 * Binds `@owner` and `@now`.
 */
export const UNCLAIMED_BY_OTHERS =
  'NOT EXISTS (SELECT 1 FROM embedding_claims k WHERE k.rid = m.rid AND k.owner <> @owner AND k.until > @now)';

/**
 * Claims `rids` for `owner` until `now + leaseMs` (inside the caller's write transaction, after choosing rows
 * free of other live claims), and drops the claims past their deadline (of claimants that died, or of rows
 * that are gone).
 */
export function claimRows(
  ctx: StoreContext,
  owner: string,
  leaseMs: number,
  now: number,
  rids: readonly number[],
): void {
  ctx.stmt('write', 'DELETE FROM embedding_claims WHERE until <= ?').run(now);
  if (rids.length === 0) return;
  ctx.claimsTaken = true;
  ctx
    .stmt(
      'write',
      `INSERT INTO embedding_claims(rid, owner, until) SELECT value, ?, ? FROM json_each(?) WHERE true
       ON CONFLICT(rid) DO UPDATE SET owner = excluded.owner, until = excluded.until`,
    )
    .run(owner, now + leaseMs, JSON.stringify(rids));
}

/** Whether `owner` may commit the row: unclaimed, claimed by `owner`, or claimed by someone whose lease ran out. */
export function holdsRow(ctx: StoreContext, owner: string, now: number, rid: number): boolean {
  const claim = ctx
    .stmt('read', 'SELECT owner, until FROM embedding_claims WHERE rid = ?')
    .get<{ owner: string; until: number }>(rid);
  return claim === undefined || claim.owner === owner || claim.until <= now;
}

/** Gives up `owner`'s claims on `rids` (the rows a commit settled or found stale). */
export function releaseRows(ctx: StoreContext, owner: string, rids: readonly number[]): void {
  if (rids.length === 0) return;
  ctx
    .stmt('write', 'DELETE FROM embedding_claims WHERE owner = ? AND rid IN (SELECT value FROM json_each(?))')
    .run(owner, JSON.stringify(rids));
}

/** Drops every claim (the explicit re-index resets every row). */
export function dropAllClaims(ctx: StoreContext): void {
  ctx.stmt('write', 'DELETE FROM embedding_claims').run();
}

/**
 * Gives up every claim of this store as it closes (rows it listed and never committed: a drain stopped
 * part-way), so another store need not wait for the lease; best effort (a busy or damaged file keeps them until
 * their deadline).
 */
export function releaseOwnClaims(ctx: StoreContext): void {
  if (!ctx.claimsTaken || ctx.closed || ctx.db.inTransaction) return;
  try {
    ctx.db.prepare('DELETE FROM embedding_claims WHERE owner = ?').run(ctx.claimOwner);
    ctx.claimsTaken = false;
  } catch {
    // The claims run out with their lease.
  }
}
