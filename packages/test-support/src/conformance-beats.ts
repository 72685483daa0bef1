/**
 * The conformance suite of the store port, process beats: two store instances on one database or file are two
 * processes. A beat one publishes the other reads back (the snapshot as it was); a beat replaces the process's
 * row; a clean close removes it; an expired beat is not listed and the next writer deletes it; bad input is a
 * typed error and writes nothing; a malformed row written behind the store's back is skipped and counted, never
 * thrown.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, type ConformancePort, type TestClock, testClock } from './conformance-port.js';
import type { ConformanceHarness } from './store-conformance.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const SNAPSHOT = {
  schemaVersion: 1,
  agentId: null,
  agent: { tracked: true, retrieval: { search: { operations: 3, latency: { p50: 1.5, max: null } } } },
  process: { store: { statements: { meta: 0 } }, memory_candidates: 2 },
};

function withTwo(
  open: ConformanceOpen,
  fn: (a: ConformancePort, b: ConformancePort, clock: TestClock, h: ConformanceHarness) => Promise<void>,
): () => Promise<void> {
  return async () => {
    const clock = testClock(10_000);
    const h = await open({
      now: clock.now,
      idFactory: () => `id-${Math.random()}`,
      vectors: false,
      forget: 'erase',
    });
    try {
      const second = await h.openSecond();
      try {
        await fn(h.store, second.store, clock, h);
      } finally {
        await second.close();
      }
    } finally {
      await h.close();
    }
  };
}

/** Registers the process-beats part of the suite. */
export function describeProcessBeatConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: process beats`, () => {
    it(
      'a beat one process publishes the other reads back; a beat replaces its row; a clean close removes it',
      withTwo(open, async (a, b) => {
        expect(await b.listProcessBeats()).toEqual({ beats: [], skipped: 0 });
        await a.publishProcessBeat({ processId: A, startedAt: 5_000, ttlMs: 60_000, snapshot: SNAPSHOT });
        const listed = await b.listProcessBeats();
        expect(listed.skipped).toBe(0);
        expect(listed.beats).toHaveLength(1);
        expect(listed.beats[0]).toMatchObject({
          processId: A,
          startedAt: 5_000,
          ttlMs: 60_000,
          snapshot: SNAPSHOT,
        });
        expect(typeof listed.beats[0]?.beatAt).toBe('number');

        const next = { ...SNAPSHOT, agent: { tracked: true, retrieval: { search: { operations: 4 } } } };
        await a.publishProcessBeat({ processId: A, startedAt: 5_000, ttlMs: 60_000, snapshot: next });
        await b.publishProcessBeat({ processId: B, startedAt: 6_000, ttlMs: 60_000, snapshot: SNAPSHOT });
        const both = await a.listProcessBeats();
        // Oldest process first; the replaced row carries the newer snapshot.
        expect(both.beats.map((beat) => beat.processId)).toEqual([A, B]);
        expect(both.beats[0]?.snapshot).toEqual(next);

        await a.removeProcessBeat(A);
        await a.removeProcessBeat('c'.repeat(32));
        expect((await b.listProcessBeats()).beats.map((beat) => beat.processId)).toEqual([B]);
      }),
    );

    it(
      'an expired beat is not listed, and the next writer deletes it',
      withTwo(open, async (a, b, clock) => {
        await a.publishProcessBeat({ processId: A, startedAt: 1, ttlMs: 1, snapshot: SNAPSHOT });
        // Past its time-to-live on the store clock (SQLite) and on the server clock (PostgreSQL).
        clock.set(clock.now() + 10_000);
        await sleep(20);
        expect(await b.listProcessBeats()).toEqual({ beats: [], skipped: 0 });
        const written = await b.publishProcessBeat({
          processId: B,
          startedAt: 2,
          ttlMs: 60_000,
          snapshot: SNAPSHOT,
        });
        expect(written.expired).toBe(1);
        expect((await a.listProcessBeats()).beats.map((beat) => beat.processId)).toEqual([B]);
      }),
    );

    it(
      'a bad beat is a typed error and writes nothing: text, arrays, odd keys, oversized, bad id or ttl',
      withTwo(open, async (a, b) => {
        const big: Record<string, number> = {};
        for (let i = 0; i < 8_000; i += 1) big[`figure${i}`] = 1234567.25;
        const bad = [
          { processId: A, startedAt: 1, ttlMs: 1000, snapshot: { query: 'what is the secret' } },
          { processId: A, startedAt: 1, ttlMs: 1000, snapshot: { list: [1, 2] } },
          { processId: A, startedAt: 1, ttlMs: 1000, snapshot: { 'SELECT *': 1 } },
          { processId: A, startedAt: 1, ttlMs: 1000, snapshot: { x: Number.NaN } },
          { processId: A, startedAt: 1, ttlMs: 1000, snapshot: big },
          { processId: A, startedAt: 1, ttlMs: 1000, snapshot: 'text' },
          { processId: 'pid-1234', startedAt: 1, ttlMs: 1000, snapshot: SNAPSHOT },
          { processId: A.toUpperCase(), startedAt: 1, ttlMs: 1000, snapshot: SNAPSHOT },
          { processId: A, startedAt: -1, ttlMs: 1000, snapshot: SNAPSHOT },
          { processId: A, startedAt: 1, ttlMs: 0, snapshot: SNAPSHOT },
        ];
        for (const beat of bad) {
          await expect(a.publishProcessBeat(beat)).rejects.toMatchObject({
            code: 'ENGRAM_STORE_INVALID_INPUT',
          });
        }
        await expect(a.removeProcessBeat('../etc')).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        expect(await b.listProcessBeats()).toEqual({ beats: [], skipped: 0 });
      }),
    );

    it(
      'a malformed row written behind the store’s back is skipped and counted, never thrown',
      withTwo(open, async (a, b, _clock, h) => {
        if (h.corrupt === undefined) return;
        await a.publishProcessBeat({ processId: A, startedAt: 1, ttlMs: 60_000, snapshot: SNAPSHOT });
        const row = (id: string, snapshot: string) =>
          `INSERT INTO process_beats(process_id, started_at, beat_at, ttl_ms, snapshot) VALUES ('${id}', 2, 9000000000000, 60000, '${snapshot}')`;
        await h.corrupt(row('1'.repeat(32), '{"query":"the secret plan"}'));
        await h.corrupt(row('2'.repeat(32), 'not json'));
        await h.corrupt(row('3'.repeat(32), `{"x":${'1'.repeat(70_000)}}`));
        await h.corrupt(row('not-a-process-id', '{}'));
        const listed = await b.listProcessBeats();
        expect(listed.beats.map((beat) => beat.processId)).toEqual([A]);
        expect(listed.skipped).toBe(4);
        expect(JSON.stringify(listed)).not.toContain('secret');
      }),
    );
  });
}
