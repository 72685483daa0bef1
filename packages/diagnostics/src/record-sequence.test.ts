import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createDiagnosticsCollector } from './collector.js';
import { runRecordSequence, type SequenceResult } from './record-sequence.fixture.js';

// The golden file holds what an independent build of the collector (one ring object per stage, no typed-array
// record path) returns for this sequence: produced by a script (run with tsx) that passed its
// `createDiagnosticsCollector` to `runRecordSequence` and wrote `JSON.stringify(result)` plus a newline. It is
// never regenerated from the code under test: a record path that records anything differently (a count, a
// sample, its place in a ring, an eviction, an expiry, a rejection) fails here.
const GOLDEN = readFileSync(new URL('../fixtures/record-sequence.golden.json', import.meta.url), 'utf8');

describe('the record path records the same as before, byte for byte', () => {
  it('gives the golden snapshots for a fixed, varied sequence of 6,400 retrieval records', () => {
    const result = runRecordSequence(createDiagnosticsCollector);
    const json = `${JSON.stringify(result)}\n`;
    const golden = JSON.parse(GOLDEN) as SequenceResult;
    // A readable diff first, then the bytes.
    expect(JSON.parse(json)).toEqual(golden);
    expect(json).toBe(GOLDEN);
  });

  it('exercises eviction, expiry, rejections, observer failures and wrapped rings', () => {
    const { all, small } = runRecordSequence(createDiagnosticsCollector);
    const collector = (all as { process: { collector: Record<string, number> } }).process.collector;
    expect(collector.agentsEvicted).toBeGreaterThan(1_000);
    expect(collector.agentsExpired).toBeGreaterThan(100);
    expect(collector.recordsRejected).toBeGreaterThan(1_000);
    expect(collector.observerFailures).toBeGreaterThan(10);
    // Rings wrapped: a distribution keeps its capacity of samples out of more recorded.
    const wrapped = (snapshot: unknown, capacity: number): boolean =>
      [...JSON.stringify(snapshot).matchAll(/"count":(\d+),"total":(\d+)/g)].some(
        ([, count, total]) => Number(count) === capacity && Number(total) > capacity,
      );
    expect(wrapped(all, 16)).toBe(true);
    expect(wrapped(small, 4)).toBe(true);
    expect((small as { agents: unknown[] }).agents).toHaveLength(3);
  });
});
