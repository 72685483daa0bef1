/**
 * The documents' figures come from report files and nothing else: the repository's rendered documents are
 * what its digests render (the check CI runs), a report is kept without its per-query rows, and a digest read
 * back is checked before a figure of it is printed.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { digestReport, parseDigest } from './digest.js';
import {
  findRepoRoot,
  loadDigests,
  RENDERED,
  recordReports,
  renderDocuments,
  staleDocuments,
  writeDocuments,
} from './figures.js';
import { HEADLINE_MARKERS } from './render.js';
import { commandLine, runInfo } from './run-info.js';

const run = {
  command: 'pnpm eval:dataset locomo locomo10.json report.json --split test',
  commit: '0123456789ab',
  dirty: false,
  date: '2026-12-07T05:00:00.000Z',
  machine: { cpus: 2, cpuModel: 'Test CPU', memoryGiB: 24, node: 'v20.20.2', platform: 'linux-x64' },
};
const metrics = (ndcg: number) => ({ queries: 10, recallAt5: 0.5, mrrAt10: 0.4, ndcgAt10: ndcg });
const evalReport = {
  version: 2,
  fixture: { name: 'locomo10-test', version: 1 },
  vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
  embedder: { name: 'deterministic', id: 'deterministic-lexicon-v1', dimensions: 128 },
  vectors: { embedded: 0, fromCache: 20 },
  variants: Object.fromEntries(
    ['fts', 'vector', 'hybrid', 'bm25'].map((v, i) => [
      v,
      {
        overall: metrics(0.5 + i / 100),
        subsets: { 'cat1-multihop': metrics(0.3), 'cat2-temporal': metrics(0.6) },
        queries: [{ id: 'q1', ranked: ['private-id'], recallAt5: 1, mrrAt10: 1, ndcgAt10: 1 }],
      },
    ]),
  ),
  run,
};

const dirs: string[] = [];
function scratchRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'engram-figures-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'pnpm-workspace.yaml'), 'packages: []\n');
  return dir;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the documents in this repository', () => {
  it('are exactly what docs/reports renders (run pnpm docs:figures render after recording a report)', () => {
    const root = findRepoRoot(fileURLToPath(new URL('.', import.meta.url)));
    expect(loadDigests(root).length).toBeGreaterThan(0);
    expect(staleDocuments(root)).toEqual([]);
  });
});

describe('recording a report', () => {
  it('keeps every overall and subset figure and drops the per-query rows', () => {
    const root = scratchRepo();
    const path = join(root, 'report.json');
    writeFileSync(path, JSON.stringify(evalReport));
    writeFileSync(
      join(root, 'README.md'),
      `# x\n\n${HEADLINE_MARKERS.start}\nold figures\n${HEADLINE_MARKERS.end}\n\nrest\n`,
    );
    expect(recordReports(root, [path])).toEqual(['eval-locomo10-test-deterministic.json']);
    const kept = readFileSync(join(root, 'docs/reports/eval-locomo10-test-deterministic.json'), 'utf8');
    expect(kept).not.toContain('private-id');
    writeDocuments(root);
    const quality = readFileSync(join(root, RENDERED.quality), 'utf8');
    expect(quality).toContain('| locomo10-test | deterministic | 0.500 | 0.510 | 0.520 | 0.530 |');
    expect(quality).toContain('| cat2-temporal | 10 | 0.600 | 0.600 | 0.600 | 0.600 |');
    expect(quality).toContain(run.command);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).not.toContain('old figures');
    expect(readme).toContain('| locomo10 | 0.500 | 0.520 | 0.530 |');
    expect(readme.endsWith('\n\nrest\n')).toBe(true);
    expect(staleDocuments(root)).toEqual([]);
    writeFileSync(join(root, 'README.md'), readme.replace('0.520', '0.999'));
    expect(staleDocuments(root)).toEqual(['README.md']);
  });

  it('refuses a report without the facts of its run', () => {
    const { run: _run, ...old } = evalReport;
    expect(() => digestReport(old)).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_ARGUMENTS' }),
    );
  });

  it('keeps a benchmark report whole and prints sections it has no table for as figures', () => {
    const digest = digestReport({
      version: 1,
      size: 10000,
      machine: { cpus: 2, node: 'v20.20.2', platform: 'linux-x64' },
      run: { ...run, command: 'pnpm bench --only userScope100k --out x.json' },
      userScope100k: { rows: 100000, hybrid: { ratioP50: 0.4025 } },
      diagnostics: { nsPerRecord: 64.5, records: 1000000 },
    });
    const docs = renderDocuments([digest]);
    const bench = docs[RENDERED.benchmarks] ?? '';
    expect(bench).toContain('### userScope100k');
    expect(bench).toContain('| hybrid.ratioP50 | 0.403 |');
    expect(bench).toContain('| nsPerRecord | 64.500 |');
  });
});

describe('a digest read back', () => {
  it('is refused when a figure is not a number, and a changed figure changes the document', () => {
    const digest = digestReport(evalReport);
    const tampered = JSON.parse(JSON.stringify(digest));
    tampered.variants.fts.overall.ndcgAt10 = '<script>';
    expect(() => parseDigest(tampered, 'x.json')).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_ARGUMENTS' }),
    );
    const changed = JSON.parse(JSON.stringify(digest));
    changed.variants.fts.overall.ndcgAt10 = 0.9;
    const before = renderDocuments([digest])[RENDERED.quality];
    const after = renderDocuments([parseDigest(changed, 'x.json')])[RENDERED.quality];
    expect(after).not.toEqual(before);
  });

  it('is refused when it is not JSON, naming only the file', () => {
    const root = scratchRepo();
    mkdirSync(join(root, 'docs/reports'), { recursive: true });
    writeFileSync(join(root, 'docs/reports/bad.json'), '{');
    expect(() => loadDigests(root)).toThrow(/digest bad\.json is not JSON/);
  });
});

describe('the run facts', () => {
  it('name files without their folders and never show a URL', () => {
    expect(
      commandLine('eval:dataset', [
        'locomo',
        '/home/me/data/locomo10.json',
        'out/r.json',
        '--',
        '--split',
        'test',
      ]),
    ).toBe('pnpm eval:dataset locomo locomo10.json r.json --split test');
    expect(commandLine('bench', ['--postgres', 'postgres://u:secret@h/db', '--out=/tmp/a/b.json'])).toBe(
      'pnpm bench --postgres <url> --out=b.json',
    );
  });

  it('take the command a wrapping script ran under, and ignore a malformed one', () => {
    const cwd = fileURLToPath(new URL('.', import.meta.url));
    const wrapped = runInfo('bench', ['--only', 'postgres'], cwd, {
      ENGRAM_RUN_COMMAND: JSON.stringify(['bench:postgres', '--recommended']),
    });
    expect(wrapped.command).toBe('pnpm bench:postgres --recommended');
    expect(runInfo('bench', ['--only', 'x'], cwd, { ENGRAM_RUN_COMMAND: '[1]' }).command).toBe(
      'pnpm bench --only x',
    );
    expect(wrapped.commit).toMatch(/^[0-9a-f]{12}$/);
  });
});
