import type { MemoryRecord } from '@engram/store';
import { describe, expect, it } from 'vitest';
import {
  calibrate,
  DEFAULT_FUSION_WEIGHTS,
  DEFAULT_VECTOR_EVIDENCE,
  type FusionCandidate,
  type FusionWeights,
  fuseCandidates,
  recencyFactor,
  type VectorEvidence,
  vectorConfidence,
} from './fusion.js';
import { memoryRecord } from './memory-record.fixture.js';

const NOW = 1_700_000_000_000;
/** Reciprocal rank fusion, the non-default method these first tests pin down. */
const RRF: FusionWeights = { ...DEFAULT_FUSION_WEIGHTS, method: 'rrf' };
const DAY = 86_400_000;

function record(id: string, importance = 0.5, updatedAt = NOW): MemoryRecord {
  return memoryRecord({ id, importance, createdAt: updatedAt, updatedAt });
}

describe('fuseCandidates', () => {
  it('computes reciprocal rank fusion (k = 60) plus small importance and recency terms', () => {
    const candidates: FusionCandidate[] = [
      { record: record('b'), lexicalRank: 2, lexicalScore: 3.5 },
      { record: record('a'), lexicalRank: 1, lexicalScore: 7.25, vectorRank: 3, similarity: 0.8 },
      { record: record('c'), vectorRank: 1, similarity: 0.9 },
    ];
    const results = fuseCandidates(candidates, RRF, NOW);
    expect(results.map((r) => r.record.id)).toEqual(['a', 'c', 'b']);
    const [a, c, b] = results;
    // importance 0.5 · 0.0005 + recency 1 · 0.00025 = 0.0005 on every row
    expect(a?.explanation.rrf).toBeCloseTo(1 / 61 + 1 / 63, 15);
    expect(a?.explanation.final).toBeCloseTo(1 / 61 + 1 / 63 + 0.0005, 15);
    expect(a?.score).toBe(a?.explanation.final);
    expect(c?.explanation.rrf).toBeCloseTo(1 / 61, 15);
    expect(b?.explanation.rrf).toBeCloseTo(1 / 62, 15);
    expect(b?.explanation.final).toBeCloseTo(1 / 62 + 0.0005, 15);
    expect(a?.explanation).toMatchObject({
      arms: ['lexical', 'vector'],
      lexicalRank: 1,
      lexicalScore: 7.25,
      vectorRank: 3,
      similarity: 0.8,
      importance: 0.5,
      recency: 1,
    });
    expect(c?.explanation.arms).toEqual(['vector']);
    expect(c?.explanation).not.toHaveProperty('lexicalRank');
    expect(b?.explanation.arms).toEqual(['lexical']);
  });

  it('lets importance and recency reorder near-ties only', () => {
    const important = { record: record('x', 1), lexicalRank: 2 };
    const plain = { record: record('y', 0), lexicalRank: 1 };
    // 1/62 + 0.0005 + 0.00025 = 0.016879… > 1/61 + 0.00025 = 0.016643…
    expect(fuseCandidates([plain, important], RRF, NOW).map((r) => r.record.id)).toEqual(['x', 'y']);
    const farBehind = { record: record('z', 1), lexicalRank: 5 };
    // 1/65 + 0.00075 = 0.016134… < 1/61 + 0.00025
    expect(fuseCandidates([farBehind, plain], RRF, NOW).map((r) => r.record.id)).toEqual(['y', 'z']);
  });

  it('breaks exact ties by ascending id, whatever the input order', () => {
    const input = ['m', 'b', 'z', 'a'].map((id) => ({ record: record(id), lexicalRank: 1 }));
    expect(fuseCandidates(input, RRF, NOW).map((r) => r.record.id)).toEqual(['a', 'b', 'm', 'z']);
    expect(fuseCandidates([...input].reverse(), RRF, NOW).map((r) => r.record.id)).toEqual([
      'a',
      'b',
      'm',
      'z',
    ]);
  });

  it('halves recency every half-life', () => {
    expect(recencyFactor(NOW, NOW, 30 * DAY)).toBe(1);
    expect(recencyFactor(NOW - 30 * DAY, NOW, 30 * DAY)).toBeCloseTo(0.5, 12);
    expect(recencyFactor(NOW - 60 * DAY, NOW, 30 * DAY)).toBeCloseTo(0.25, 12);
    expect(recencyFactor(NOW + DAY, NOW, 30 * DAY)).toBe(1);
  });

  it('is top-k monotonic: the first k of a longer answer are the top-k answer', () => {
    let seed = 7;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const candidates: FusionCandidate[] = Array.from({ length: 60 }, (_, i) => ({
      record: record(
        `r${String(i).padStart(2, '0')}`,
        Math.round(next() * 4) / 4,
        NOW - Math.floor(next() * 90) * DAY,
      ),
      ...(next() < 0.7 ? { lexicalRank: 1 + Math.floor(next() * 40) } : {}),
      ...(next() < 0.7 ? { vectorRank: 1 + Math.floor(next() * 40) } : {}),
    }));
    const full = fuseCandidates(candidates, RRF, NOW).map((r) => r.record.id);
    const shuffled = fuseCandidates([...candidates].reverse(), RRF, NOW).map((r) => r.record.id);
    expect(shuffled).toEqual(full);
    for (let i = 1; i < full.length; i += 1) {
      const prev = fuseCandidates(candidates, RRF, NOW)[i - 1];
      const cur = fuseCandidates(candidates, RRF, NOW)[i];
      expect((prev?.score ?? 0) >= (cur?.score ?? 0)).toBe(true);
    }
  });
});

describe('vector evidence', () => {
  const ten = (first: number, tenth: number): number[] => [
    first,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    0.5,
    tenth,
  ];

  it('weighs the vector arm by how far its first hit stands above its tenth, relative to the first', () => {
    const evidence: VectorEvidence = { noiseMargin: 0.2, fullMargin: 0.4, depth: 10 };
    // (0.55 − 0.5) / 0.55 ≈ 0.09 ≤ 0.2 → 0; (0.5/0.7 → margin 0.3) → (0.3 − 0.2) / 0.2 = 0.5;
    // (0.9 − 0.5) / 0.9 ≈ 0.44 ≥ 0.4 → 1.
    expect(vectorConfidence(ten(0.55, 0.5), evidence)).toBe(0);
    expect(vectorConfidence(ten(0.5 / 0.7, 0.5), evidence)).toBeCloseTo(0.5, 10);
    expect(vectorConfidence(ten(0.9, 0.5), evidence)).toBe(1);
  });

  it('gives the same confidence on any common scale of similarities (embedders differ in scale)', () => {
    const hits = [0.42, 0.3, 0.29, 0.27, 0.25, 0.24, 0.22, 0.21, 0.2, 0.19];
    const base = vectorConfidence(hits, DEFAULT_VECTOR_EVIDENCE);
    expect(base).toBeGreaterThan(0);
    expect(base).toBeLessThan(1);
    for (const scale of [0.5, 1.5, 2]) {
      expect(
        vectorConfidence(
          hits.map((h) => h * scale),
          DEFAULT_VECTOR_EVIDENCE,
        ),
      ).toBeCloseTo(base, 10);
    }
    // The same absolute gap between the first and the tenth hit is weaker evidence among higher similarities.
    const shifted = hits.map((h) => h + 0.3);
    expect(vectorConfidence(shifted, DEFAULT_VECTOR_EVIDENCE)).toBeLessThan(base);
  });

  it('finds no evidence in a first hit without a positive similarity', () => {
    // Without the guard, a first similarity of 0 divides by zero: an infinite margin, full confidence.
    expect(vectorConfidence(ten(0, -0.4), DEFAULT_VECTOR_EVIDENCE)).toBe(0);
  });

  it('finds no evidence in a tenth similarity that is not a number (and never returns NaN)', () => {
    expect(vectorConfidence(ten(0.8, Number.NaN), DEFAULT_VECTOR_EVIDENCE)).toBe(0);
  });

  it('counts the arm fully when there are too few hits to judge', () => {
    expect(vectorConfidence([0.3, 0.29], DEFAULT_VECTOR_EVIDENCE)).toBe(1);
  });

  it('puts rows of a silenced vector arm after every row with evidence, in vector order', () => {
    const candidates: FusionCandidate[] = [
      { record: record('v1', 1), vectorRank: 1, similarity: 0.4 },
      { record: record('v2', 0), vectorRank: 2, similarity: 0.39 },
      { record: record('both', 0), lexicalRank: 3, lexicalScore: 1, vectorRank: 3, similarity: 0.38 },
      { record: record('lex', 0), lexicalRank: 1, lexicalScore: 2 },
    ];
    const results = fuseCandidates(candidates, RRF, NOW, 0);
    // With weight 0 the vector arm adds nothing: lexical order (lex #1, both #3), then v1, v2 by vector rank,
    // even though v1 has the higher importance.
    expect(results.map((r) => r.record.id)).toEqual(['lex', 'both', 'v1', 'v2']);
    expect(results[1]?.explanation.rrf).toBeCloseTo(1 / 63, 12);
    expect(results[2]?.explanation).toMatchObject({ rrf: 0, vectorWeight: 0, final: 1 / 61 });
  });

  it('uses the per-call weight in the RRF term and explains it', () => {
    const [only] = fuseCandidates(
      [{ record: record('x', 0, NOW), vectorRank: 1, similarity: 0.9 }],
      RRF,
      NOW,
      0.5,
    );
    expect(only?.explanation.vectorWeight).toBe(0.5);
    expect(only?.explanation.rrf).toBeCloseTo(0.5 / 61, 12);
  });
});

/** Deterministic pseudo-random numbers in 0..1 (a 32-bit LCG). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** `n` rows in the lexical arm's order; row i has BM25 score 10·0.9^i (scores fall off as BM25's do). */
function lexicalArm(n: number): Map<string, { rank: number; score: number }> {
  const out = new Map<string, { rank: number; score: number }>();
  for (let i = 0; i < n; i += 1)
    out.set(`r${String(i).padStart(3, '0')}`, { rank: i + 1, score: 10 * 0.9 ** i });
  return out;
}

function join(
  lexical: Map<string, { rank: number; score: number }>,
  vector: readonly { id: string; similarity: number }[],
): FusionCandidate[] {
  const byId = new Map<string, FusionCandidate>();
  for (const [id, l] of lexical)
    byId.set(id, { record: record(id), lexicalRank: l.rank, lexicalScore: l.score });
  vector.forEach((v, i) => {
    const prev = byId.get(v.id);
    byId.set(v.id, { ...(prev ?? { record: record(v.id) }), vectorRank: i + 1, similarity: v.similarity });
  });
  return [...byId.values()];
}

describe('calibrated fusion (the default)', () => {
  it('ranks like the good arm when the vector arm is noise', () => {
    const lexical = lexicalArm(100);
    const random = lcg(7);
    // A noise embedder: similarities in a narrow band, in an order unrelated to relevance, over other rows too.
    const ids = [...lexical.keys(), ...Array.from({ length: 100 }, (_, i) => `n${i}`)];
    const vector = ids
      .map((id) => ({ id, similarity: 0.3 + 0.1 * random() }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, 100);
    const candidates = join(lexical, vector);
    expect(calibrate(candidates, 10).agreement).toBeLessThanOrEqual(0.2);
    const fused = fuseCandidates(candidates, DEFAULT_FUSION_WEIGHTS, NOW).map((r) => r.record.id);
    const lexicalOnly = [...lexical.keys()];
    // The first ten are the lexical first ten, at most two of them swapped by a neighbour.
    const top = fused.slice(0, 10);
    expect(top.filter((id) => lexicalOnly.slice(0, 10).includes(id)).length).toBeGreaterThanOrEqual(9);
    expect(top[0]).toBe('r000');
    // Rank fusion with the same noise does reorder the answer.
    const rrf = fuseCandidates(candidates, RRF, NOW).map((r) => r.record.id);
    expect(rrf.slice(0, 10).filter((id) => lexicalOnly.slice(0, 10).includes(id)).length).toBeLessThan(9);
  });

  it('with a limit returns exactly the first results of the whole answer, explanations included', () => {
    const random = lcg(11);
    const lexical = lexicalArm(60);
    // Tied similarities and vector-only rows too: the order must not depend on the limit.
    const vector = [...lexical.keys(), ...Array.from({ length: 60 }, (_, i) => `v${i}`)]
      .map((id) => ({ id, similarity: Math.round((0.2 + 0.6 * random()) * 20) / 20 }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, 80);
    const candidates = join(lexical, vector);
    for (const weights of [DEFAULT_FUSION_WEIGHTS, RRF]) {
      for (const confidence of [0, 1]) {
        const all = fuseCandidates(candidates, weights, NOW, weights.vector, confidence);
        for (const limit of [0, 1, 10, 99, 500]) {
          expect(fuseCandidates(candidates, weights, NOW, weights.vector, confidence, limit)).toEqual(
            all.slice(0, limit),
          );
        }
      }
    }
  });

  it('rewards agreement: a row both arms rank high rises above a lexical first it barely trails', () => {
    const lexical = lexicalArm(20);
    // The lexical arm hardly separates r000 and r001; the vector arm agrees on the order of the top ten
    // except that it puts r001 first.
    lexical.set('r001', { rank: 2, score: 9.9 });
    const order = ['r001', 'r000', 'r002', 'r003', 'r004', 'r005', 'r006', 'r007', 'r008', 'r009'];
    const vector = order.map((id, i) => ({ id, similarity: 0.8 - 0.03 * i }));
    const candidates = join(lexical, vector);
    // Average overlap: no agreement at depth 1, full agreement at depths 2–10.
    expect(calibrate(candidates, 10).agreement).toBeCloseTo(0.9, 12);
    const fused = fuseCandidates(candidates, DEFAULT_FUSION_WEIGHTS, NOW);
    const lexMin = 10 * 0.9 ** 19;
    const trust = 0.9 ** DEFAULT_FUSION_WEIGHTS.agreementPower;
    expect(fused[0]?.record.id).toBe('r001');
    expect(fused[0]?.explanation.agreement).toBeCloseTo(0.9, 12);
    expect(fused[0]?.explanation.relevance).toBeCloseTo(
      (0.7 * (9.9 - lexMin)) / (10 - lexMin) + 0.3 * trust,
      12,
    );
    expect(fused[1]?.record.id).toBe('r000');
  });

  it('keeps the lexical first when the arms find the same rows but disagree on which comes first', () => {
    const lexical = lexicalArm(20);
    // The vector arm's top ten is the lexical top ten in reverse: the same set, the opposite order.
    const order = Array.from({ length: 10 }, (_, i) => `r${String(9 - i).padStart(3, '0')}`);
    const vector = order.map((id, i) => ({ id, similarity: 0.8 - 0.03 * i }));
    const candidates = join(lexical, vector);
    // A set overlap would call this full agreement; the average overlap counts the order.
    expect(calibrate(candidates, 10).agreement).toBeLessThan(0.5);
    const fused = fuseCandidates(candidates, DEFAULT_FUSION_WEIGHTS, NOW).map((r) => r.record.id);
    expect(fused.slice(0, 3)).toEqual(['r000', 'r001', 'r002']);
  });

  it('lets a vector arm alone rank when the lexical arm found nothing', () => {
    const vector = [
      { id: 'b', similarity: 0.9 },
      { id: 'a', similarity: 0.5 },
    ];
    const fused = fuseCandidates(join(new Map(), vector), DEFAULT_FUSION_WEIGHTS, NOW);
    expect(fused.map((r) => r.record.id)).toEqual(['b', 'a']);
    expect(fused[0]?.explanation.agreement).toBe(1);
    expect(fused[0]?.explanation.relevance).toBeCloseTo(1 - DEFAULT_FUSION_WEIGHTS.alpha, 12);
  });

  it('puts rows only a disagreeing vector arm found after every lexical row, in vector order', () => {
    const lexical = lexicalArm(12);
    const vector = Array.from({ length: 12 }, (_, i) => ({ id: `v${i}`, similarity: 0.9 - 0.01 * i }));
    const fused = fuseCandidates(join(lexical, vector), DEFAULT_FUSION_WEIGHTS, NOW).map((r) => r.record.id);
    expect(fused.slice(0, 12)).toEqual([...lexical.keys()]);
    expect(fused.slice(12)).toEqual(vector.map((v) => v.id));
  });

  it('lets a confident vector arm count although the lexical arm found other rows (a paraphrase)', () => {
    const lexical = lexicalArm(3);
    const vector = [
      { id: 'para', similarity: 0.9 },
      ...Array.from({ length: 9 }, (_, i) => ({ id: `v${i}`, similarity: 0.3 - 0.01 * i })),
    ];
    const candidates = join(lexical, vector);
    expect(calibrate(candidates, 10).agreement).toBe(0);
    // Without confidence the vector arm is silenced; with full confidence its first hit competes on score.
    const silenced = fuseCandidates(candidates, DEFAULT_FUSION_WEIGHTS, NOW, 1, 0).map((r) => r.record.id);
    expect(silenced.indexOf('para')).toBe(3);
    const confident = fuseCandidates(candidates, DEFAULT_FUSION_WEIGHTS, NOW, 1, 1);
    expect(confident.map((r) => r.record.id).indexOf('para')).toBeLessThan(3);
    expect(confident.find((r) => r.record.id === 'para')?.explanation.trust).toBe(1);
  });
});
