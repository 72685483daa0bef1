/**
 * The per-agent maintenance lease on SQLite: one `meta` row per agent (`maintenance_lease:<agentId>`, value
 * `<until>:<owner>`), so no schema change. The claim is one `INSERT … ON CONFLICT DO UPDATE … WHERE` that takes
 * the row only when it is free, expired (by the store clock), already this owner's, or taken over; SQLite's single writer
 * makes it atomic across the processes sharing the file.
 */
import type { MaintenanceClaim } from '@engram/store/port-kit';
import { validateAgentId, validateId, validateMaintenanceClaim } from '@engram/store/port-kit';
import type { StoreContext } from './context.js';

const PREFIX = 'maintenance_lease:';

/** The deadline stored in a lease value (`<until>:<owner>`). */
const UNTIL = "CAST(substr(value, 1, instr(value, ':') - 1) AS INTEGER)";
/** The owner stored in a lease value. */
const OWNER = "substr(value, instr(value, ':') + 1)";

/** Takes (or extends) the agent's maintenance lease; `{ claimed: false }` while another owner holds it. */
export function claimMaintenance(
  ctx: StoreContext,
  instanceOwner: string,
  agentId: string,
  options: { readonly leaseMs: number; readonly owner?: string; readonly takeOver?: boolean },
): Promise<MaintenanceClaim> {
  return ctx.op('claimMaintenance', () => {
    const claim = validateMaintenanceClaim(agentId, options?.leaseMs, options?.owner, instanceOwner);
    ctx.assertWritable('write');
    const now = ctx.now();
    const until = now + claim.leaseMs;
    const taken = ctx
      .stmt(
        'meta',
        `INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value
         WHERE ? = 1 OR ${UNTIL} <= ? OR ${OWNER} = ?`,
      )
      .run(
        PREFIX + claim.agentId,
        `${until}:${claim.owner}`,
        options?.takeOver === true ? 1 : 0,
        now,
        claim.owner,
      );
    return taken.changes > 0 ? { claimed: true, until } : { claimed: false };
  });
}

/** Gives the agent's lease up when `owner` holds it. */
export function releaseMaintenance(
  ctx: StoreContext,
  instanceOwner: string,
  agentId: string,
  options: { readonly owner?: string } = {},
): Promise<void> {
  return ctx.op('releaseMaintenance', () => {
    const agent = validateAgentId(agentId);
    const owner = options.owner === undefined ? instanceOwner : validateId(options.owner, 'owner');
    ctx.assertWritable('write');
    ctx.stmt('meta', `DELETE FROM meta WHERE key = ? AND ${OWNER} = ?`).run(PREFIX + agent, owner);
  });
}
