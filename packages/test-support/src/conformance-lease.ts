/**
 * The conformance suite of the store port, the maintenance lease: two store instances on one database or file
 * are two workers. One holds an agent's lease while the other cannot take it; the lease passes on when it is
 * released or has expired; owners and agents are independent; bad arguments are typed errors.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, type ConformancePort, type TestClock, testClock } from './conformance-port.js';

/** Runs `fn` on two store instances over one fresh database (both closed afterwards). */
function withTwo(
  open: ConformanceOpen,
  fn: (a: ConformancePort, b: ConformancePort, clock: TestClock) => Promise<void>,
): () => Promise<void> {
  return async () => {
    const clock = testClock(10_000);
    let n = 0;
    const idFactory = (): string => {
      n += 1;
      return `gen-${n}`;
    };
    const h = await open({
      now: clock.now,
      idFactory,
      vectors: false,
      forget: 'erase',
    });
    try {
      const second = await h.openSecond();
      try {
        await fn(h.store, second.store, clock);
      } finally {
        await second.close();
      }
    } finally {
      await h.close();
    }
  };
}

/** Registers the maintenance-lease part of the suite. */
export function describeLeaseConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: maintenance lease`, () => {
    it(
      'a live lease is held by one worker; released, the other takes it',
      withTwo(open, async (a, b, clock) => {
        const held = await a.claimMaintenance('agent', { leaseMs: 60_000 });
        expect(held.claimed).toBe(true);
        expect(typeof held.until).toBe('number');
        expect(await b.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
        // The holder extends its own lease (a later deadline: how a long pass keeps it); another agent is free
        // for the other worker.
        clock.set(clock.now() + 1_000);
        await sleep(20);
        const renewed = await a.claimMaintenance('agent', { leaseMs: 60_000 });
        expect(renewed.claimed).toBe(true);
        expect(renewed.until).toBeGreaterThan(held.until as number);
        expect((await b.claimMaintenance('other', { leaseMs: 60_000 })).claimed).toBe(true);
        // Releasing a lease one does not hold changes nothing.
        await b.releaseMaintenance('agent');
        expect(await b.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
        await a.releaseMaintenance('agent');
        expect((await b.claimMaintenance('agent', { leaseMs: 60_000 })).claimed).toBe(true);
        expect(await a.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
      }),
    );

    it(
      'an expired lease is taken over: a worker that died does not hold the agent forever',
      withTwo(open, async (a, b, clock) => {
        expect((await a.claimMaintenance('agent', { leaseMs: 1 })).claimed).toBe(true);
        // Past its deadline on the store clock (SQLite) and on the server clock (PostgreSQL).
        clock.set(clock.now() + 10_000);
        await sleep(20);
        expect((await b.claimMaintenance('agent', { leaseMs: 60_000 })).claimed).toBe(true);
        expect(await a.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
      }),
    );

    it(
      'a claim with takeOver takes a live lease of another owner at once; that owner is refused afterwards',
      withTwo(open, async (a, b) => {
        expect((await a.claimMaintenance('agent', { leaseMs: 60_000 })).claimed).toBe(true);
        expect(await b.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
        expect((await b.claimMaintenance('agent', { leaseMs: 60_000, takeOver: true })).claimed).toBe(true);
        expect(await a.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
        // The old holder's release leaves the new lease alone.
        await a.releaseMaintenance('agent');
        expect(await a.claimMaintenance('agent', { leaseMs: 60_000 })).toEqual({ claimed: false });
      }),
    );

    it(
      'owners are named per claim: one instance can hold for one owner and be refused for another',
      withTwo(open, async (a) => {
        expect((await a.claimMaintenance('agent', { leaseMs: 60_000, owner: 'w1' })).claimed).toBe(true);
        expect(await a.claimMaintenance('agent', { leaseMs: 60_000, owner: 'w2' })).toEqual({
          claimed: false,
        });
        await a.releaseMaintenance('agent', { owner: 'w1' });
        expect((await a.claimMaintenance('agent', { leaseMs: 60_000, owner: 'w2' })).claimed).toBe(true);
      }),
    );

    it(
      'a bad lease or owner is a typed error and takes nothing',
      withTwo(open, async (a, b) => {
        for (const leaseMs of [0, -1, 1.5, Number.NaN, 86_400_001]) {
          await expect(a.claimMaintenance('agent', { leaseMs })).rejects.toMatchObject({
            code: 'ENGRAM_STORE_INVALID_INPUT',
          });
        }
        await expect(a.claimMaintenance('', { leaseMs: 1000 })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        await expect(a.claimMaintenance('agent', { leaseMs: 1000, owner: '' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        expect((await b.claimMaintenance('agent', { leaseMs: 60_000 })).claimed).toBe(true);
      }),
    );
  });
}
