import { describe, expect, it } from 'vitest';
import { benchPlans, ORAMA_MAX_AGENTS, oramaAgentsWithin, oramaHeapBytesPerRow } from './plan.js';
import { type BenchReport, formatBenchTable } from './report.js';
import {
  benchQueries,
  benchVocabulary,
  mulberry32,
  percentile,
  rowRanks,
  rowText,
  VOCABULARY_SIZE,
  widenVector,
} from './workload.js';

describe('benchmark workload', () => {
  it('generates the same rows and queries on every run, row by row', () => {
    expect(benchVocabulary()).toHaveLength(VOCABULARY_SIZE);
    expect(new Set(benchVocabulary()).size).toBe(VOCABULARY_SIZE);
    expect(rowText(12_345)).toBe(rowText(12_345));
    expect(rowText(1)).not.toBe(rowText(2));
    expect(benchQueries(0, 1000, 5, 3)).toEqual(benchQueries(0, 1000, 5, 3));
  });

  it('draws words with a long tail: common words are frequent, most of the vocabulary is rare', () => {
    const counts = new Map<number, number>();
    for (let i = 0; i < 2000; i += 1) for (const r of rowRanks(i)) counts.set(r, (counts.get(r) ?? 0) + 1);
    expect(counts.get(0) ?? 0).toBeGreaterThan(counts.get(1000) ?? 0);
    expect(counts.size).toBeGreaterThan(VOCABULARY_SIZE / 3);
  });

  it('builds each query from three words of its target row, inside the requested range', () => {
    for (const q of benchQueries(500, 100, 50, 9)) {
      expect(q.target).toBeGreaterThanOrEqual(500);
      expect(q.target).toBeLessThan(600);
      const words = new Set(rowText(q.target).replace(/\.$/, '').split(' '));
      const queryWords = q.text.split(' ');
      expect(queryWords.length).toBeGreaterThanOrEqual(2);
      expect(queryWords.length).toBeLessThanOrEqual(3);
      for (const w of queryWords) expect(words.has(w)).toBe(true);
    }
  });
});

describe('widenVector', () => {
  function unit(seed: number): Float32Array {
    const random = mulberry32(seed);
    const v = new Float32Array(128).map(() => random() - 0.5);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  }
  const dot = (a: Float32Array, b: Float32Array): number =>
    a.reduce((s, x, i) => s + x * (b[i] as number), 0);

  it('keeps every cosine similarity of the 128-d vectors at 384 and 1536 dimensions', () => {
    const vectors = [1, 2, 3, 4, 5].map(unit);
    for (const dims of [384, 1536]) {
      const wide = vectors.map((v) => widenVector(v, dims));
      for (const w of wide) {
        expect(w).toHaveLength(dims);
        expect(dot(w, w)).toBeCloseTo(1, 5);
      }
      for (let i = 0; i < vectors.length; i += 1) {
        for (let j = 0; j < vectors.length; j += 1) {
          expect(dot(wide[i] as Float32Array, wide[j] as Float32Array)).toBeCloseTo(
            dot(vectors[i] as Float32Array, vectors[j] as Float32Array),
            5,
          );
        }
      }
      // No block repeats another: the coordinates are mixed, not tiled.
      const w = wide[0] as Float32Array;
      expect([...w.slice(0, 128)]).not.toEqual([...w.slice(128, 256)]);
    }
    expect(widenVector(vectors[0] as Float32Array, 128)).toBe(vectors[0]);
    expect(() => widenVector(vectors[0] as Float32Array, 200)).toThrow();
  });
});

describe('percentile', () => {
  it('uses the nearest rank: 1..257 gives p50 129 and p95 245', () => {
    const samples = Array.from({ length: 257 }, (_, i) => 257 - i);
    expect(percentile(samples, 0.5)).toBe(129);
    expect(percentile(samples, 0.95)).toBe(245);
    expect(percentile(samples, 1)).toBe(257);
    expect(percentile([], 0.5)).toBeNaN();
  });
});

describe('formatBenchTable', () => {
  it('prints one line per scenario present, with an em dash for a missing figure, and the diagnostics line', () => {
    const scenario = {
      agents: 1,
      rows: 10_000,
      ingest: { rowsPerSec: 12_000, ratioToRaw: 0.25, rawRowsPerSec: 48_000, batchSize: 1000 },
      query: {
        p50Ms: 3,
        p95Ms: 6,
        ratioToRaw: 2,
        p95RatioToRaw: 1.5,
        rawP50Ms: 1.5,
        rawP95Ms: 4,
        recallAt5: 0.99,
        queries: 400,
        stagesP50Ms: { keyword: 1, vector: 1.5, total: 3 },
        rawFtsP50Ms: 0.5,
        rawVectorP50Ms: 1,
      },
      orama: {
        p50Ms: Number.NaN,
        p95Ms: 2,
        ratio: 1.5,
        p95Ratio: 3,
        recallAt5: 1,
        engramRecallAt5: 0.99,
        engramP50Ms: 3,
        engramP95Ms: 6,
        queries: 400,
        rowsIndexed: 10_000,
        rowsPerSec: 7000,
      },
    };
    const report: BenchReport = {
      version: 1,
      size: 10_000,
      machine: { cpus: 2, node: 'v20', platform: 'linux-x64' },
      oneAgent10k: scenario,
      diagnostics: { nsPerRecord: 812.4, records: 1_000_000 },
    };
    const lines = formatBenchTable(report).split('\n');
    expect(lines).toHaveLength(10);
    expect(lines[2]).toMatch(
      /^oneAgent10k\s+10000\s+12000\s+48000\s+0\.25\s+3\.00\s+6\.00\s+1\.50\s+4\.00\s+2\.00\s+0\.990\s+—\s+2\.00/,
    );
    expect(lines[7]).toMatch(
      /^oneAgent10k\s+1\.00\s+—\s+1\.50\s+—\s+—\s+3\.00\s+0\.50\s+1\.00\s+—\/—\s+—\/—$/,
    );
    expect(lines[9]).toBe('diagnostics record path: 812 ns CPU per recorded retrieval (1000000 records)');
  });

  it('ends the scenario line with the raw + row floor, the ratio to it and the CPU ratios, when present', () => {
    const scenario = {
      agents: 1,
      rows: 10_000,
      ingest: {
        rowsPerSec: 12_000,
        ratioToRaw: 0.25,
        rawRowsPerSec: 48_000,
        rawRowRowsPerSec: 30_000,
        ratioToRawRow: 0.4,
        cpu: {
          rowsPerSec: 20_000,
          rawRowsPerSec: 80_000,
          rawRowRowsPerSec: 50_000,
          ratioToRaw: 0.25,
          ratioToRawRow: 0.4,
        },
        batchSize: 1000,
      },
      query: {
        p50Ms: 3,
        p95Ms: 6,
        ratioToRaw: 2,
        p95RatioToRaw: 1.5,
        rawP50Ms: 1.5,
        rawP95Ms: 4,
        recallAt5: 0.99,
        queries: 400,
        stagesP50Ms: { total: 3 },
        rawFtsP50Ms: 0.5,
        rawVectorP50Ms: 1,
      },
      orama: {
        p50Ms: 2,
        p95Ms: 2,
        ratio: 1.5,
        p95Ratio: 3,
        recallAt5: 1,
        engramRecallAt5: 0.99,
        engramP50Ms: 3,
        engramP95Ms: 6,
        queries: 400,
        rowsIndexed: 10_000,
        rowsPerSec: 7000,
      },
    };
    const report: BenchReport = {
      version: 1,
      size: 10_000,
      machine: { cpus: 2, node: 'v20', platform: 'linux-x64' },
      hundredAgents: scenario,
      diagnostics: { nsPerRecord: 812.4, records: 1_000_000 },
    };
    const lines = formatBenchTable(report).split('\n');
    expect(lines[0]).toMatch(/orama R@5\s+raw\+row rows\/s\s+ratio\s+cpu ratio raw \/ raw\+row$/);
    expect(lines[2]).toMatch(
      /^hundredAgents\s+10000\s+12000\s+48000\s+0\.25\s.*\s30000\s+0\.40\s+0\.25\/0\.40$/,
    );
  });

  it('--size 100000 runs the 100 agents × 10k scenario at 128-d and at 1536-d; the default keeps 100 × 1k', () => {
    const plan = (size: number): Record<string, string> =>
      Object.fromEntries(
        benchPlans(size).map((p) => [p.name, `${p.agents}×${p.rowsPerAgent}@${p.dimensions}`]),
      );
    expect(plan(100_000)).toEqual({
      oneAgent10k: '1×10000@128',
      oneAgent100k: '1×100000@128',
      hundredAgents: '100×10000@128',
      oneAgent384d: '1×100000@384',
      oneAgent1536d: '1×100000@1536',
      hundredAgents1536d: '100×10000@1536',
    });
    expect(plan(10_000)).toEqual({
      oneAgent10k: '1×10000@128',
      hundredAgents: '100×1000@128',
      oneAgent384d: '1×10000@384',
      oneAgent1536d: '1×10000@1536',
      hundredAgents1536d: '100×1000@1536',
    });
    // Never more than 10k rows per agent, never an empty agent.
    expect(plan(1_000_000).hundredAgents1536d).toBe('100×10000@1536');
    expect(plan(5).hundredAgents1536d).toBe('100×1@1536');
  });

  it('Orama indexes only as many agents as fit in half the free heap, between 1 and the cap', () => {
    const perAgent = 10_000 * oramaHeapBytesPerRow(1536);
    // 12 GiB free: every agent up to the cap; 4 GiB: fewer; a tiny heap: still one.
    expect(oramaAgentsWithin(12 * 2 ** 30, 10_000, 1536)).toBe(ORAMA_MAX_AGENTS);
    const within4 = oramaAgentsWithin(4 * 2 ** 30, 10_000, 1536);
    expect(within4).toBe(Math.floor((2 * 2 ** 30) / perAgent));
    expect(within4).toBeLessThan(ORAMA_MAX_AGENTS);
    expect(oramaAgentsWithin(1, 10_000, 1536)).toBe(1);
    // 128-d, 1k rows per agent (the default run): the cap.
    expect(oramaAgentsWithin(2 * 2 ** 30, 1000, 128)).toBe(ORAMA_MAX_AGENTS);
  });
});
