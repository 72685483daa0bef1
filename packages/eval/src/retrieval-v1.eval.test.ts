import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeJsonFile } from './cli/common.js';
import { parseFixture, type RetrievalFixture } from './fixture.js';
import { evaluateGate } from './gate.js';
import { formatReportTable, type RetrievalReport, VARIANTS } from './report.js';
import { runFixture } from './runner.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
// Each package's eval output has its own folder (the turbo `outputs` of this package's eval task).
const reportPath = join(root, 'test-results/eval/retrieval-v1.json');
const ablationPath = join(root, 'test-results/eval/retrieval-v1-ablation.json');
const fixture: RetrievalFixture = parseFixture(
  JSON.parse(readFileSync(resolve(here, '../fixtures/retrieval-v1.json'), 'utf8')),
);

let report: RetrievalReport;
let ablation: RetrievalReport;

beforeAll(async () => {
  report = await runFixture({ fixture });
  // The evidence is written before any assertion, so a failing gate still leaves its report.
  writeJsonFile(reportPath, report);
  ablation = await runFixture({ fixture, conceptFeatures: false });
  writeJsonFile(ablationPath, ablation);
  process.stdout.write(`${formatReportTable(report)}\n`);
});

describe('retrieval-v1 through the production store and retriever', () => {
  it('writes the report in the documented shape', () => {
    const written = JSON.parse(readFileSync(reportPath, 'utf8')) as RetrievalReport;
    expect(written).toEqual(report);
    expect(Object.keys(written)).toEqual([
      'version',
      'fixture',
      'vectorProfile',
      'embedder',
      'vectors',
      'variants',
    ]);
    expect(written.fixture).toEqual({ name: 'retrieval-v1', version: 1 });
    expect(written.embedder).toEqual({
      name: 'deterministic',
      id: 'deterministic-lexicon-v1',
      dimensions: 128,
    });
    // Every distinct text (236 rows, 60 queries, minus the verbatim copies) embedded once, no cache.
    expect(written.vectors?.fromCache).toBe(0);
    expect(written.vectors?.embedded).toBe(260);
    expect(Object.keys(written.variants)).toEqual([...VARIANTS]);
    for (const variant of VARIANTS) {
      const v = written.variants[variant];
      expect(Object.keys(v.overall)).toEqual(['queries', 'recallAt5', 'mrrAt10', 'ndcgAt10']);
      expect(Object.keys(v.subsets)).toEqual(['exact', 'cjk', 'path', 'code', 'semantic', 'mixed']);
      expect(v.queries).toHaveLength(60);
      expect(v.queries.every((q) => q.ranked.length <= 10)).toBe(true);
    }
  });

  it('passes the gate: hybrid thresholds overall and on the lexical subsets, and the ablation', () => {
    const gate = evaluateGate(report, ablation);
    expect(gate.failures.map((f) => f.message)).toEqual([]);
    expect(gate.ok).toBe(true);
  });

  it('never returns a memory of another agent, although identical texts exist under other agents', () => {
    const owner = new Map(fixture.corpus.map((r) => [r.id, r.agentId]));
    const agentOf = new Map(fixture.queries.map((q) => [q.id, q.agentId]));
    for (const variant of VARIANTS) {
      for (const q of report.variants[variant].queries) {
        for (const id of q.ranked) expect(owner.get(id), `${variant} ${q.id}`).toBe(agentOf.get(q.id));
      }
    }
  });

  it('fails the gate when fusion is broken by dropping the vector arm', async () => {
    const broken = await runFixture({ fixture, hybridArms: { lexical: true, vector: false } });
    const gate = evaluateGate(broken, ablation);
    expect(gate.ok).toBe(false);
    expect(gate.failures).toContainEqual(expect.objectContaining({ check: 'overall', metric: 'recallAt5' }));
    expect(broken.variants.hybrid.subsets.semantic?.recallAt5).toBeLessThan(0.5);
  });

  it('fails the ablation check when the concepts were not actually switched off', () => {
    const gate = evaluateGate(report, report);
    expect(gate.failures).toContainEqual(expect.objectContaining({ check: 'ablation', scope: 'semantic' }));
  });
});
