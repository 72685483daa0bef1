import { describe, expect, it } from 'vitest';
import {
  isContentFreeObject,
  liveProcessBeats,
  MAX_PROCESS_BEATS_LISTED,
  MAX_PROCESS_SNAPSHOT_BYTES,
  readProcessBeatRow,
  validateProcessBeat,
} from './process-beats.js';

const ID = 'a'.repeat(32);
const row = (over: Record<string, unknown> = {}) => ({
  process_id: ID,
  started_at: 1_000,
  beat_at: 2_000,
  ttl_ms: 5_000,
  snapshot: '{"agent":{"tracked":true,"retrieval":{"search":{"operations":3}}}}',
  ...over,
});

describe('process beats: what a beat may hold', () => {
  it('accepts numbers, booleans, null and identifier keys; refuses text, arrays and odd keys', () => {
    expect(isContentFreeObject({ a: 1, b: { c: null, d: true, memory_candidates: 0 } })).toBe(true);
    for (const bad of [
      { query: 'the user asked about x' },
      { ids: [1, 2] },
      { 'content with space': 1 },
      { x: Number.POSITIVE_INFINITY },
      { when: new Date(0) },
      [1],
    ]) {
      expect(isContentFreeObject(bad)).toBe(false);
    }
    let deep: Record<string, unknown> = { x: 1 };
    for (let i = 0; i < 10; i += 1) deep = { deeper: deep };
    expect(isContentFreeObject(deep)).toBe(false);
  });

  it('refuses a snapshot over the size cap, naming the field and never the value', () => {
    const big: Record<string, number> = {};
    for (let i = 0; i < 8_000; i += 1) big[`figure${i}`] = 1234567.25;
    expect(JSON.stringify(big).length).toBeGreaterThan(MAX_PROCESS_SNAPSHOT_BYTES);
    expect(() => validateProcessBeat({ processId: ID, startedAt: 1, ttlMs: 10, snapshot: big })).toThrow(
      /snapshot is over/,
    );
    expect(() =>
      validateProcessBeat({ processId: ID, startedAt: 1, ttlMs: 10, snapshot: { q: 'secret words' } }),
    ).toThrow(
      expect.objectContaining({
        code: 'ENGRAM_STORE_INVALID_INPUT',
        message: expect.not.stringContaining('secret'),
      }),
    );
  });
});

describe('process beats: reading rows back never throws', () => {
  it('skips malformed rows and counts them; leaves expired ones out; lists the oldest process first', () => {
    const rows = [
      row({ process_id: 'b'.repeat(32), started_at: 3_000 }),
      row(),
      row({ process_id: 'c'.repeat(32), snapshot: 'not json' }),
      row({ process_id: 'd'.repeat(32), snapshot: '{"query":"the secret"}' }),
      row({ process_id: 'e'.repeat(32), snapshot: `{"x":${'1'.repeat(MAX_PROCESS_SNAPSHOT_BYTES)}}` }),
      row({ process_id: 'PID 42' }),
      row({ process_id: 'f'.repeat(32), ttl_ms: 'soon' }),
      row({ process_id: '1'.repeat(32), beat_at: 100, ttl_ms: 10 }),
      row({ process_id: '2'.repeat(32), started_at: 10n, beat_at: 2_000n, ttl_ms: '5000' }),
    ];
    const listed = liveProcessBeats(rows, 4_000);
    expect(listed.beats.map((b) => b.processId)).toEqual(['2'.repeat(32), ID, 'b'.repeat(32)]);
    expect(listed.skipped).toBe(5);
    expect(listed.beats[1]?.snapshot).toEqual({
      agent: { tracked: true, retrieval: { search: { operations: 3 } } },
    });
    // A JSONB-style column arrives parsed: read the same way.
    expect(readProcessBeatRow(row({ snapshot: { agent: { tracked: false } } }))?.snapshot).toEqual({
      agent: { tracked: false },
    });
  });

  it('lists at most the cap; the rest are counted as skipped', () => {
    const rows = Array.from({ length: MAX_PROCESS_BEATS_LISTED + 3 }, (_, i) =>
      row({ process_id: i.toString(16).padStart(32, '0'), started_at: i }),
    );
    const listed = liveProcessBeats(rows, 3_000);
    expect(listed.beats).toHaveLength(MAX_PROCESS_BEATS_LISTED);
    expect(listed.skipped).toBe(3);
  });
});
