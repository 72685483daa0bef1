import type { Timers } from '@engram/contracts';
import type { MaintenanceStore } from './store-ports.js';

/** The maintenance lease a pass holds: renewed on a timer until released. */
export interface PassLease {
  /** The pass's signal: aborts when `given` does, or when the lease is lost to another worker. */
  signal(given: AbortSignal | undefined): AbortSignal;
  /** Stops renewing and releases the lease (only this owner's: a lease another worker took stays). */
  release(): Promise<void>;
  /** True when the lease was taken over from another holder (`takeOver`). */
  readonly tookOver: boolean;
}

/** How often a held lease is renewed at most: every few seconds, so a short lease never lapses under a live pass. */
export const LEASE_RENEWAL_MS = 5000;

/** Who holds the lease, and for how long each claim or renewal lasts. */
export interface LeaseTerms {
  readonly leaseMs: number;
  readonly owner: string;
}

const UNLEASED_SIGNAL = (given: AbortSignal | undefined): AbortSignal =>
  given ?? new AbortController().signal;
const UNLEASED: PassLease = { signal: UNLEASED_SIGNAL, release: async () => {}, tookOver: false };

/**
 * Takes an agent's maintenance lease for a pass: `'claimed'` while another worker holds it. A store without
 * leases, or one that cannot answer the claim (read-only, failing), runs the pass unleased, as before leases
 * existed: its writes are compare-and-set, and its failures are the pass's outcomes.
 *
 * With `takeOver` (a forced pass), a lease another worker holds is taken over (a holder that died, or one the
 * operator overrides); the lease says so (`tookOver`), and the worker that held it stops at its next renewal.
 *
 * While the pass runs, the lease is claimed again by the same owner every third of its length (every
 * {@link LEASE_RENEWAL_MS} at most), which extends it, so a pass longer than the lease is never overlapped by
 * another worker's, while a lease whose holder died expires one lease length after its last renewal. A renewal that fails (the
 * store is busy) is retried at the next tick; the lease still runs until its expiry. A renewal answered
 * `claimed: false` means this lease expired (the process stalled) and another worker took the agent: the
 * pass's signal aborts and the pass stops as cancelled at its next check.
 */
export async function takeLease(
  store: Pick<MaintenanceStore, 'claimMaintenance' | 'releaseMaintenance'>,
  timers: Timers,
  agentId: string,
  terms: LeaseTerms,
  takeOver = false,
): Promise<PassLease | 'claimed'> {
  if (store.claimMaintenance === undefined) return UNLEASED;
  const claimWith = (over: boolean) =>
    store.claimMaintenance?.(agentId, over ? { ...terms, takeOver: true } : terms).then(
      (c) => c.claimed,
      () => null,
    ) ?? Promise.resolve(null);
  let claim = await claimWith(false);
  let tookOver = false;
  if (claim === false && takeOver) {
    claim = await claimWith(true);
    tookOver = claim === true;
  }
  if (claim === false) return 'claimed';
  if (claim === null) return UNLEASED;
  const lost = new AbortController();
  const every = Math.max(1, Math.min(LEASE_RENEWAL_MS, Math.floor(terms.leaseMs / 3)));
  let handle: unknown;
  let stopped = false;
  const renew = (): void => {
    if (stopped || store.claimMaintenance === undefined) return;
    store.claimMaintenance(agentId, terms).then(
      (c) => {
        if (stopped) return;
        if (c.claimed) handle = timers.setTimeout(renew, every);
        else lost.abort();
      },
      () => {
        if (!stopped) handle = timers.setTimeout(renew, every);
      },
    );
  };
  handle = timers.setTimeout(renew, every);
  return {
    tookOver,
    signal: (given) => (given === undefined ? lost.signal : AbortSignal.any([given, lost.signal])),
    async release(): Promise<void> {
      stopped = true;
      timers.clearTimeout(handle);
      if (lost.signal.aborted || store.releaseMaintenance === undefined) return;
      try {
        await store.releaseMaintenance(agentId, { owner: terms.owner });
      } catch {
        // the lease expires on its own
      }
    },
  };
}
