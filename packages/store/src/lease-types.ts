/**
 * The per-agent maintenance lease of the store port (split from `types.ts`, which re-exports it; `MemoryStore`
 * includes the slice).
 */

/** Options of {@link MaintenanceLeaseSlice.claimMaintenance}. */
export interface ClaimMaintenanceOptions {
  /** How long the lease lasts from now, in ms (1 ms to 1 day). */
  readonly leaseMs: number;
  /** Who claims (an id of the worker; default: the store instance's own id). Never user content. */
  readonly owner?: string;
  /** Take the lease even while another owner holds a live one (a forced pass over a holder that died). */
  readonly takeOver?: boolean;
}

/** The answer of a claim: whether this owner holds the lease now, and until when (epoch ms) it holds. */
export interface MaintenanceClaim {
  readonly claimed: boolean;
  /** When `claimed`, the deadline of the lease. */
  readonly until?: number;
}

/**
 * A per-agent maintenance lease, so N processes over one store run one maintenance pass per agent at a time.
 * Optional: a store without it runs every pass it is asked to, unclaimed.
 */
export interface MaintenanceLeaseSlice {
  /**
   * Takes the agent's lease when it is free, expired, or already held by `owner` (then it is extended), or
   * always with `takeOver`; one atomic statement. `{ claimed: false }` when another owner holds a live lease.
   */
  claimMaintenance?(agentId: string, options: ClaimMaintenanceOptions): Promise<MaintenanceClaim>;
  /** Gives the lease up if `owner` (default: this store instance) holds it; a no-op otherwise. */
  releaseMaintenance?(agentId: string, options?: { readonly owner?: string }): Promise<void>;
}
