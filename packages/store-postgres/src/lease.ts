/**
 * The per-agent maintenance lease on PostgreSQL: a row of `maintenance_leases` taken with one
 * `INSERT … ON CONFLICT DO UPDATE … WHERE` when it is free, expired, already the owner's, or taken over. The deadline is on the
 * server clock (as the embedding claims'), so a lease of a worker that died expires whatever the workers' clocks.
 */
import type { MaintenanceClaim } from '@engram/store';
import { validateAgentId, validateId, validateMaintenanceClaim } from '@engram/store/port-kit';
import type { PgContext } from './context.js';

/** The server clock in epoch milliseconds. */
const SERVER_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** Takes (or extends) the agent's maintenance lease; `{ claimed: false }` while another owner holds it. */
export function claimMaintenance(
  ctx: PgContext,
  agentId: string,
  options: { readonly leaseMs: number; readonly owner?: string; readonly takeOver?: boolean },
): Promise<MaintenanceClaim> {
  return ctx.op('claimMaintenance', async () => {
    const claim = validateMaintenanceClaim(agentId, options?.leaseMs, options?.owner, ctx.workerId);
    const rows = await ctx.q<{ lease_until: string }>(
      ctx.pool,
      'write',
      `INSERT INTO maintenance_leases AS l (agent_id, owner, lease_until) VALUES ($1, $2, ${SERVER_NOW} + $3)
       ON CONFLICT (agent_id) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until
       WHERE $4::boolean OR l.lease_until <= ${SERVER_NOW} OR l.owner = excluded.owner
       RETURNING lease_until`,
      [claim.agentId, claim.owner, claim.leaseMs, options?.takeOver === true],
    );
    const row = rows[0];
    return row === undefined ? { claimed: false } : { claimed: true, until: Number(row.lease_until) };
  });
}

/** Gives the agent's lease up when `owner` holds it. */
export function releaseMaintenance(
  ctx: PgContext,
  agentId: string,
  options: { readonly owner?: string } = {},
): Promise<void> {
  return ctx.op('releaseMaintenance', async () => {
    const agent = validateAgentId(agentId);
    const owner = options.owner === undefined ? ctx.workerId : validateId(options.owner, 'owner');
    await ctx.q(ctx.pool, 'write', 'DELETE FROM maintenance_leases WHERE agent_id = $1 AND owner = $2', [
      agent,
      owner,
    ]);
  });
}
