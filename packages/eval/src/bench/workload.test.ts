import { describe, expect, it } from 'vitest';
import {
  benchPlans,
  ORAMA_MAX_AGENTS,
  oramaAgentsWithin,
  oramaHeapBytesPerRow,
  spreadEvenly,
} from './plan.js';
import { type BenchReport, formatBenchTable } from './report.js';
import {
  benchQueries,
  benchVocabulary,
  mulberry32,
  percentile,
  rowRanks,
  rowText,
  scenarioQueries,
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

describe('scenario queries: the timed ones and one warm-up query per queried agent', () => {
  it('times the same queries as before, agent by agent, and warms each queried agent once with another query', () => {
    const { timed, warmUps } = scenarioQueries(100, 1000, 400);
    expect(timed).toEqual(
      Array.from({ length: 100 }, (_, a) => benchQueries(a * 1000, 1000, 4, a + 1)).flat(),
    );
    expect(warmUps).toHaveLength(100);
    warmUps.forEach((w, a) => {
      // In its agent's rows, made of its target's words, and not the text of any of that agent's timed queries.
      expect(Math.floor(w.target / 1000)).toBe(a);
      const words = new Set(rowText(w.target).replace(/\.$/, '').split(' '));
      for (const word of w.text.split(' ')) expect(words.has(word)).toBe(true);
      const own = timed.filter((q) => Math.floor(q.target / 1000) === a).map((q) => q.text);
      expect(own).toHaveLength(4);
      expect(own).not.toContain(w.text);
    });
    expect(scenarioQueries(100, 1000, 400)).toEqual({ timed, warmUps });
  });

  it('warms only the agents that have timed queries, and finds a distinct warm-up even in a one-row agent', () => {
    const few = scenarioQueries(100, 1000, 30);
    expect(few.timed).toHaveLength(30);
    expect(few.warmUps.map((w) => Math.floor(w.target / 1000))).toEqual(
      Array.from({ length: 30 }, (_, a) => a),
    );
    const one = scenarioQueries(1, 10_000, 400);
    expect(one.timed).toHaveLength(400);
    expect(one.warmUps).toHaveLength(1);
    expect(one.timed.map((q) => q.text)).not.toContain(one.warmUps[0]?.text);
    // `--size 5`: 100 agents of one row, four timed queries each on that same row.
    const tiny = scenarioQueries(100, 1, 400);
    tiny.warmUps.forEach((w, a) => {
      expect(w.target).toBe(a);
      expect(tiny.timed.filter((q) => q.target === a).map((q) => q.text)).not.toContain(w.text);
    });
  });
});

describe('spreadEvenly (the agents Orama indexes)', () => {
  it('takes every (n / count)-th item in order, never more than count, all of them when count ≥ n', () => {
    const agents = Array.from({ length: 100 }, (_, a) => a);
    expect(spreadEvenly(agents, 20)).toEqual(Array.from({ length: 20 }, (_, i) => i * 5));
    expect(spreadEvenly(agents, 9)).toEqual([0, 11, 22, 33, 44, 55, 66, 77, 88]);
    expect(spreadEvenly(agents, 20)).toEqual(spreadEvenly(agents, 20));
    expect(spreadEvenly(agents, 100)).toEqual(agents);
    expect(spreadEvenly(agents, 150)).toEqual(agents);
    expect(spreadEvenly(agents, 0)).toEqual([]);
    expect(spreadEvenly([7], 1)).toEqual([7]);
    // Spread over the range: the last pick is in the last count-th of it, not among the first agents.
    const picked = spreadEvenly(agents, 3);
    expect(picked).toEqual([0, 33, 66]);
    expect(new Set(spreadEvenly(agents, 37)).size).toBe(37);
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
  /** The printed lines of a report holding `scenarios` (and a diagnostics figure of 812 ns). */
  const printed = (scenarios: Partial<BenchReport>): string[] =>
    formatBenchTable({
      version: 1,
      size: 10_000,
      machine: { cpus: 2, node: 'v20', platform: 'linux-x64' },
      diagnostics: { nsPerRecord: 812.4, records: 1_000_000 },
      ...scenarios,
    }).split('\n');

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
    const lines = printed({ oneAgent10k: scenario });
    expect(lines).toHaveLength(15);
    expect(lines[2]).toMatch(
      /^oneAgent10k\s+10000\s+12000\s+48000\s+0\.25\s+3\.00\s+6\.00\s+1\.50\s+4\.00\s+2\.00\/1\.50\s+0\.990\s+—\s+2\.00\s+1\.50\/3\.00\s+1\.000/,
    );
    expect(lines[7]).toMatch(
      /^oneAgent10k\s+1\.00\s+—\s+1\.50\s+—\s+—\s+3\.00\s+0\.50\s+1\.00\s+—\/—\s+—\/—$/,
    );
    // Orama's phase: Engram's own times there and both ratios (p50 and p95), Orama's agents and memory.
    expect(lines[12]).toMatch(
      /^oneAgent10k\s+—\s+400\s+3\.00\s+6\.00\s+—\s+2\.00\s+1\.50\s+3\.00\s+0\.990\s+1\.000\s+7000\s+—\s+—\s+—\s+—$/,
    );
    expect(lines[14]).toBe('diagnostics record path: 812 ns CPU per recorded retrieval (1000000 records)');
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
    const lines = printed({ hundredAgents: scenario });
    expect(lines[0]).toMatch(/orama R@5\s+raw\+row rows\/s\s+ratio\s+cpu ratio raw \/ raw\+row$/);
    expect(lines[2]).toMatch(
      /^hundredAgents\s+10000\s+12000\s+48000\s+0\.25\s.*\s30000\s+0\.40\s+0\.25\/0\.40$/,
    );
  });

  it("prints each agent's first query (the warm-up) in its own table, Engram and raw, when the report has it", () => {
    const query = {
      p50Ms: 3,
      p95Ms: 6,
      ratioToRaw: 2,
      p95RatioToRaw: 1.5,
      rawP50Ms: 1.5,
      rawP95Ms: 4,
      recallAt5: 1,
      queries: 400,
      stagesP50Ms: { total: 3 },
      rawFtsP50Ms: 0.5,
      rawVectorP50Ms: 1,
      coldFirst: {
        queries: 100,
        p50Ms: 40,
        p95Ms: 90.5,
        maxMs: 120,
        rawP50Ms: 35,
        rawP95Ms: 80,
        rawMaxMs: 99,
      },
    };
    const orama = {
      p50Ms: 2,
      p95Ms: 2,
      ratio: 1.5,
      p95Ratio: 3,
      recallAt5: 1,
      engramRecallAt5: 1,
      engramP50Ms: 3,
      engramP95Ms: 6,
      queries: 80,
      agents: 20,
      rowsIndexed: 20_000,
      rowsPerSec: 7000,
    };
    const lines = printed({
      hundredAgents1536d: {
        agents: 100,
        rows: 100_000,
        ingest: { rowsPerSec: 1, ratioToRaw: 1, rawRowsPerSec: 1, batchSize: 1000 },
        query,
        orama,
      },
    });
    const title = lines.findIndex((l) => l.startsWith('first query of each agent'));
    expect(title).toBeGreaterThan(0);
    expect(lines[title + 1]).toMatch(/^scenario\s+agents\s+engram p50\s+p95\s+max\s+raw p50\s+p95\s+max$/);
    expect(lines[title + 3]).toMatch(
      /^hundredAgents1536d\s+100\s+40\.00\s+90\.50\s+120\.00\s+35\.00\s+80\.00\s+99\.00$/,
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

describe('formatBenchTable memory section', () => {
  it("prints the mapped share of the file, and the small agents bytes per row beside the raw files with the store's and with vec0's default chunk size", () => {
    const lines = formatBenchTable({
      version: 1,
      size: 10_000,
      machine: { cpus: 2, node: 'v20', platform: 'linux-x64' },
      diagnostics: { nsPerRecord: 812.4, records: 1_000_000 },
      oneAgent1536d: {
        agents: 1,
        rows: 10_000,
        dimensions: 1536,
        memory: {
          rssAfterIngestMB: 100,
          heapAfterIngestMB: 20,
          rssAfterQueriesMB: 110,
          heapAfterQueriesMB: 21,
          bytesPerRow: 7000,
          rawBytesPerRow: 6500,
          mappedShare: 0.2921,
          smallAgents: {
            agents: 100,
            rowsPerAgent: 10,
            chunkSize: 128,
            bytesPerRow: 80_123,
            rawBytesPerRow: 79_456,
            rawDefaultChunkBytesPerRow: 630_789,
          },
        },
        ingest: { rowsPerSec: 1, ratioToRaw: 1, rawRowsPerSec: 1, batchSize: 1000 },
        query: {
          p50Ms: 1,
          p95Ms: 1,
          ratioToRaw: 1,
          p95RatioToRaw: 1,
          rawP50Ms: 1,
          rawP95Ms: 1,
          recallAt5: 1,
          queries: 1,
          stagesP50Ms: {},
          rawFtsP50Ms: 1,
          rawVectorP50Ms: 1,
        },
        orama: {
          p50Ms: 1,
          p95Ms: 1,
          ratio: 1,
          p95Ratio: 1,
          recallAt5: 1,
          engramRecallAt5: 1,
          engramP50Ms: 1,
          engramP95Ms: 1,
          queries: 1,
          rowsIndexed: 1,
          rowsPerSec: 1,
        },
      },
    }).split('\n');
    const header = lines.find((l) => l.startsWith('scenario') && l.includes('small agents B/row'));
    expect(header).toBeDefined();
    const row = lines.filter((l) => l.startsWith('oneAgent1536d')).find((l) => l.includes('6500'));
    expect(row).toMatch(/\s7000\s+6500\s+29 %\s+.*\s80123\s+79456\s+630789$/);
  });
});
