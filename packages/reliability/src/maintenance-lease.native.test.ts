// The maintenance lease over a real SQLite file: runners in several workers (two runners, two connections to
// one file) run one pass per agent at a time; the other worker's pass is skipped as `claimed` and does nothing.
import type { MaintenancePassReport } from '@engram/contracts';
import { createMaintenanceRunner, DEFAULT_MAINTENANCE_LEASE_MS, LEASE_RENEWAL_MS } from '@engram/maintenance';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeTime, openTempStore, type TempStore } from './maintenance-support.js';

const DAY = 24 * 60 * 60 * 1000;
const open: TempStore[] = [];
const extra: SqliteMemoryStore[] = [];
afterEach(() => {
  for (const s of extra.splice(0)) s.close();
  for (const t of open.splice(0)) t.close();
});

/** A store on a temporary file with two rows decay archives, and a second connection to the same file. */
async function setup() {
  const time = createFakeTime(1_800_000_000_000);
  const t = openTempStore({ now: time.clock.now });
  open.push(t);
  const second = createSqliteMemoryStore({ path: t.path, now: time.clock.now });
  extra.push(second);
  const now = time.clock.now();
  await t.store.insertMemories(
    ['an old low value note', 'another old low value note'].map((content) => ({
      agentId: 'a',
      kind: 'semantic' as const,
      content,
      importance: 0,
      createdAt: now - 200 * DAY,
    })),
  );
  return { time, first: t.store, second };
}

const decay = { floor: 0.05, minAgeMs: 14 * DAY, ageFrom: 'created' } as const;

/** Lets pending store promises (a renewal's claim) settle. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * The store of a worker held inside its pass: `listMemories` waits until `release()`. With `failRenewals`,
 * every claim after the first fails (the worker cannot reach its store) until `renewalsWork()`.
 */
function holdListing(store: SqliteMemoryStore, options: { readonly failRenewals?: boolean } = {}) {
  let enter!: () => void;
  const entered = new Promise<void>((resolve) => {
    enter = resolve;
  });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  let claims = 0;
  let failing = options.failRenewals === true;
  const held = new Proxy(store, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop === 'listMemories' && typeof value === 'function') {
        return async (...args: unknown[]) => {
          enter();
          await gate;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      if (prop === 'claimMaintenance' && typeof value === 'function') {
        return async (...args: unknown[]) => {
          claims += 1;
          if (failing && claims > 1) throw new Error('store unreachable');
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
  return {
    store: held,
    entered,
    release: () => release(),
    renewalsWork: () => {
      failing = false;
    },
  };
}

describe('maintenance lease', () => {
  it('two workers on one file: while one runs an agent, the other skips it as claimed and does nothing', async () => {
    const { time, first, second } = await setup();
    // The first worker's store, held inside its pass until the test lets it go (the real store underneath).
    const hold = holdListing(first);
    const reportsA: MaintenancePassReport[] = [];
    const reportsB: MaintenancePassReport[] = [];
    const a = createMaintenanceRunner({
      store: hold.store,
      clock: time.clock,
      decay,
      observer: { onMaintenancePass: (r) => reportsA.push(r) },
    });
    const b = createMaintenanceRunner({
      store: second,
      clock: time.clock,
      decay,
      observer: { onMaintenancePass: (r) => reportsB.push(r) },
    });
    const passA = a.run('a');
    await hold.entered;
    expect(await b.run('a')).toEqual({ skipped: 'claimed', report: null });
    // Another agent is not held.
    expect((await b.run('other')).skipped).toBeNull();
    hold.release();
    const resultA = await passA;
    expect(resultA.report?.cheap).toMatchObject({ outcome: 'completed', archived: 2 });
    expect(reportsA).toHaveLength(1);
    expect(reportsB.map((r) => r.agentId)).toEqual(['other']);
    // Released at the end of the pass: the other worker's next pass runs (and finds nothing left to archive).
    const resultB = await b.run('a');
    expect(resultB.skipped).toBeNull();
    expect(resultB.report?.cheap).toMatchObject({ outcome: 'completed', archived: 0 });
  });

  it('two runners over one store started together: one pass does the work, the other reports claimed', async () => {
    const { time, first } = await setup();
    const runners = [0, 1].map(() => createMaintenanceRunner({ store: first, clock: time.clock, decay }));
    const results = await Promise.all(runners.map((r) => r.run('a')));
    expect(results.map((r) => r.skipped).sort()).toEqual(['claimed', null]);
    const done = results.find((r) => r.skipped === null);
    expect(done?.report?.cheap.archived).toBe(2);
  });

  it('a lease of a worker that died holds the agent until it expires, then the pass runs', async () => {
    const { time, first, second } = await setup();
    expect((await second.claimMaintenance('a', { leaseMs: 60_000, owner: 'worker-gone' })).claimed).toBe(
      true,
    );
    const runner = createMaintenanceRunner({ store: first, clock: time.clock, decay });
    expect(await runner.run('a')).toEqual({ skipped: 'claimed', report: null });
    // A dry run writes nothing and needs no lease.
    expect((await runner.run('a', { dryRun: true })).details?.plan).toHaveLength(2);
    time.advance(60_001);
    const result = await runner.run('a');
    expect(result.report?.cheap).toMatchObject({ outcome: 'completed', archived: 2 });
  });

  it('a pass longer than its lease keeps it: renewed while it runs, the other worker still skips the agent', async () => {
    const { time, first, second } = await setup();
    const hold = holdListing(first);
    const a = createMaintenanceRunner({
      store: hold.store,
      clock: time.clock,
      timers: time.timers,
      decay,
      leaseMs: 60_000,
    });
    const b = createMaintenanceRunner({ store: second, clock: time.clock, decay, leaseMs: 60_000 });
    const passA = a.run('a');
    await hold.entered;
    // Five renewal periods: 100 s, well past the 60 s lease.
    for (let i = 0; i < 5; i += 1) {
      time.advance(20_000);
      await settle();
    }
    expect(await b.run('a')).toEqual({ skipped: 'claimed', report: null });
    hold.release();
    expect((await passA).report?.cheap).toMatchObject({ outcome: 'completed', archived: 2 });
    // Renewal stops with the pass, and the lease is released: the other worker runs.
    expect(time.pending()).toBe(0);
    expect((await b.run('a')).skipped).toBeNull();
  });

  it('a pass whose lease expired and was taken stops as cancelled, writes nothing more, and leaves the other lease', async () => {
    const { time, first, second } = await setup();
    const hold = holdListing(first, { failRenewals: true });
    const a = createMaintenanceRunner({
      store: hold.store,
      clock: time.clock,
      timers: time.timers,
      decay,
      leaseMs: 60_000,
    });
    const passA = a.run('a');
    await hold.entered;
    // The worker stalls: its renewals fail until the lease has expired, and another worker takes the agent.
    for (let i = 0; i < 4; i += 1) {
      time.advance(20_000);
      await settle();
    }
    expect((await second.claimMaintenance('a', { leaseMs: 60_000, owner: 'worker-b' })).claimed).toBe(true);
    hold.renewalsWork();
    time.advance(20_000);
    await settle();
    hold.release();
    const result = await passA;
    expect(result.report?.cheap.outcome).toBe('cancelled');
    // Nothing archived by the worker that lost the agent, and worker-b's lease is still held.
    const rows = await second.listMemories('a', { lifecycles: ['active'] });
    expect(rows).toHaveLength(2);
    expect((await second.claimMaintenance('a', { leaseMs: 60_000, owner: 'worker-c' })).claimed).toBe(false);
    expect(time.pending()).toBe(0);
  });

  it('the default lease is short and renewed every few seconds: a live pass keeps it, a dead one frees the agent within it', async () => {
    const { time, first, second } = await setup();
    expect(DEFAULT_MAINTENANCE_LEASE_MS).toBeLessThanOrEqual(60_000);
    const hold = holdListing(first);
    const a = createMaintenanceRunner({ store: hold.store, clock: time.clock, timers: time.timers, decay });
    const b = createMaintenanceRunner({ store: second, clock: time.clock, decay });
    const passA = a.run('a');
    await hold.entered;
    // Twice the lease's length in renewal steps: the live pass still holds the agent.
    for (let t = 0; t < 2 * DEFAULT_MAINTENANCE_LEASE_MS; t += LEASE_RENEWAL_MS) {
      time.advance(LEASE_RENEWAL_MS);
      await settle();
    }
    expect(await b.run('a')).toEqual({ skipped: 'claimed', report: null });
    hold.release();
    await passA;
    // A worker that died right after claiming: its lease lapses one default lease length later.
    expect(
      (await second.claimMaintenance('a', { leaseMs: DEFAULT_MAINTENANCE_LEASE_MS, owner: 'gone' })).claimed,
    ).toBe(true);
    expect(await b.run('a')).toEqual({ skipped: 'claimed', report: null });
    time.advance(DEFAULT_MAINTENANCE_LEASE_MS + 1);
    expect((await b.run('a')).skipped).toBeNull();
  });

  it('a forced pass takes over a lease another worker holds, and says so', async () => {
    const { time, first, second } = await setup();
    expect((await second.claimMaintenance('a', { leaseMs: 60_000, owner: 'worker-gone' })).claimed).toBe(
      true,
    );
    const runner = createMaintenanceRunner({ store: first, clock: time.clock, decay });
    expect(await runner.run('a')).toEqual({ skipped: 'claimed', report: null });
    const forced = await runner.run('a', { force: true });
    expect(forced.skipped).toBeNull();
    expect(forced.details?.tookOverLease).toBe(true);
    expect(forced.report?.cheap).toMatchObject({ outcome: 'completed', archived: 2 });
    // Released at its end: the next pass runs without force, and takes nothing over.
    const next = await runner.run('a');
    expect(next.skipped).toBeNull();
    expect(next.details?.tookOverLease).toBeUndefined();
  });

  it('a bad lease setting is a typed error', () => {
    const store = { listMemories: async () => [] } as never;
    for (const leaseMs of [0, -1, 1.5, Number.NaN, 2 * DAY]) {
      expect(() => createMaintenanceRunner({ store, leaseMs })).toThrow(
        expect.objectContaining({ code: 'ENGRAM_MAINTENANCE_INVALID_CONFIG' }),
      );
    }
  });
});
