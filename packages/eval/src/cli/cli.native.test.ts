/**
 * The built evaluation CLIs as `pnpm eval:fixture` / `pnpm eval:dataset` run them: `node dist/cli/….js` as a
 * child process, with `INIT_CWD` set the way pnpm sets it (the directory the user ran pnpm from).
 */

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { afterAll, describe, expect, it } from 'vitest';
import type { RetrievalReport } from '../report.js';

const EVAL_FIXTURE = fileURLToPath(new URL('../../dist/cli/eval-fixture.js', import.meta.url));
const EVAL_DATASET = fileURLToPath(new URL('../../dist/cli/eval-dataset.js', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a CLI from `cwd` (the package directory, as pnpm does) with `INIT_CWD` = where the user stood. */
function run(cli: string, args: readonly string[], cwd: string, initCwd: string): Promise<Run> {
  return runNode(cli, args, { cwd, env: { ...process.env, INIT_CWD: initCwd, NO_COLOR: '1' } });
}

const root = mkdtempSync(join(tmpdir(), 'engram-eval-cli-'));
const user = join(root, 'user');
const pkg = join(root, 'pkg');
mkdirSync(user);
mkdirSync(pkg);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const fixture = {
  version: 1,
  name: 'cli-tiny',
  vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
  corpus: Array.from({ length: 120 }, (_, i) => ({
    id: `m${i}`,
    agentId: i % 2 === 0 ? 'a' : 'b',
    kind: 'event',
    content: `note ${i}: ${i % 3 === 0 ? 'deploy' : 'review'} of service ${i}`,
    importance: 0.5,
  })),
  queries: [
    { id: 'q1', agentId: 'a', text: 'service 42', subsets: ['exact'], relevantIds: ['m42'] },
    { id: 'q2', agentId: 'b', text: 'review service 7', subsets: ['code'], relevantIds: ['m7'] },
  ],
};
writeFileSync(join(user, 'fixture.json'), JSON.stringify(fixture));

describe('eval:fixture', () => {
  it('resolves paths from where pnpm ran, prints progress on stderr and the table on stdout, writes the report', async () => {
    const result = await run(EVAL_FIXTURE, ['fixture.json', 'out/report.json'], pkg, user);
    expect(result.stderr).toContain('fixture cli-tiny v1: 120 rows, 2 queries');
    expect(result.stderr).toContain('loaded 120/120 rows');
    for (const variant of ['fts', 'vector', 'hybrid'])
      expect(result.stderr).toContain(`${variant}: 2/2 queries`);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('cli-tiny v1 (deterministic-lexicon-v1, 128d)');
    expect(lines[1]).toMatch(/^variant\s+scope\s+queries\s+R@5\s+MRR@10\s+nDCG@10$/);
    // fts, vector, hybrid and the bm25 reference, each overall + 2 subsets; then the vectors line.
    expect(lines).toHaveLength(3 + 4 * 3 + 1);
    expect(lines[12]).toMatch(/^bm25\s+overall\s+2\s/);
    expect(lines.at(-1)).toMatch(/^vectors: \d+ embedded, 0 from the cache$/);
    const report = JSON.parse(readFileSync(join(user, 'out/report.json'), 'utf8')) as RetrievalReport;
    expect(existsSync(join(pkg, 'out'))).toBe(false);
    expect(Object.keys(report)).toEqual([
      'version',
      'fixture',
      'vectorProfile',
      'embedder',
      'vectors',
      'variants',
      'run',
    ]);
    // The report names its run: the command as typed, with file names only, on this machine.
    expect(report.run?.command).toBe('pnpm eval:fixture fixture.json report.json');
    expect(report.run?.machine.cpus).toBeGreaterThan(0);
    // The default vector cache sits under where pnpm ran.
    expect(existsSync(join(user, 'node_modules/.cache/engram-eval'))).toBe(true);
    expect(report.variants.hybrid.queries.map((q) => q.id)).toEqual(['q1', 'q2']);
    expect(report.variants.fts.queries[0]?.ranked[0]).toBe('m42');
  });

  it('prints the usage for --help, and exits 2 on wrong arguments', async () => {
    const help = await run(EVAL_FIXTURE, ['--help'], pkg, user);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: eval:fixture <fixture\.json> <report\.json>/);
    const missing = await run(EVAL_FIXTURE, ['fixture.json'], pkg, user);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^expected two paths\nusage:/);
    const unknown = await run(EVAL_FIXTURE, ['--bogus', 'a', 'b'], pkg, user);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^unknown option --bogus\nusage:/);
  });

  it('exits 1 with the typed error for an invalid fixture or an existing --store file, writing no report', async () => {
    writeFileSync(
      join(user, 'invalid.json'),
      JSON.stringify({ ...fixture, queries: [{ ...fixture.queries[0], relevantIds: ['m1'] }] }),
    );
    const invalid = await run(EVAL_FIXTURE, ['invalid.json', 'invalid-report.json'], pkg, user);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain(
      'ENGRAM_EVAL_INVALID_FIXTURE: Invalid fixture: queries[0]: relevant id "m1" belongs to another agent',
    );
    expect(existsSync(join(user, 'invalid-report.json'))).toBe(false);

    writeFileSync(join(user, 'old.sqlite'), '');
    const stale = await run(
      EVAL_FIXTURE,
      ['fixture.json', 'stale-report.json', '--store', 'old.sqlite'],
      pkg,
      user,
    );
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('ENGRAM_EVAL_INVALID_ARGUMENTS');
    expect(existsSync(join(user, 'stale-report.json'))).toBe(false);
  });
});

describe("eval:fixture on a user's own fixture, with any embedder and the vector cache", () => {
  const mine = {
    version: 2,
    name: 'my-notes',
    vectorProfile: { id: 'deterministic-lexicon-v1', dimensions: 128, normalized: true },
    subsets: ['billing', 'ops'],
    corpus: [
      {
        id: 'n1',
        agentId: 'me',
        kind: 'fact',
        content: 'Invoices are sent on the first Monday.',
        importance: 0.5,
      },
      {
        id: 'n2',
        agentId: 'me',
        kind: 'fact',
        content: 'The staging cluster restarts at midnight.',
        importance: 0.5,
      },
      { id: 'n3', agentId: 'me', kind: 'event', content: 'Refund issued for invoice 1042.', importance: 0.5 },
    ],
    queries: [
      { id: 'b1', agentId: 'me', text: 'when are invoices sent', subsets: ['billing'], relevantIds: ['n1'] },
      { id: 'b2', agentId: 'me', text: 'refund invoice 1042', subsets: ['billing'], relevantIds: ['n3'] },
      { id: 'o1', agentId: 'me', text: 'staging restarts', subsets: ['ops'], relevantIds: ['n2'] },
    ],
  };
  writeFileSync(join(user, 'mine.json'), JSON.stringify(mine));

  it('reports per subset the file defines, names the embedder, and a second run embeds nothing', async () => {
    const args = ['--fixture', 'mine.json', '--cache', 'vcache', '--embedder', 'deterministic'];
    const first = await run(EVAL_FIXTURE, [...args, '--out', 'mine-1.json'], pkg, user);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('embedder deterministic: deterministic-lexicon-v1, 128d');
    expect(first.stderr).toContain(`vector cache: ${join(user, 'vcache')}`);
    const a = JSON.parse(readFileSync(join(user, 'mine-1.json'), 'utf8')) as RetrievalReport;
    expect(a.fixture).toEqual({ name: 'my-notes', version: 2 });
    expect(a.embedder).toEqual({ name: 'deterministic', id: 'deterministic-lexicon-v1', dimensions: 128 });
    expect(a.vectors).toEqual({ embedded: 6, fromCache: 0 });
    for (const variant of ['fts', 'vector', 'hybrid', 'bm25'] as const) {
      expect(Object.keys(a.variants[variant].subsets), variant).toEqual(['billing', 'ops']);
      expect(a.variants[variant].subsets.billing?.queries).toBe(2);
    }
    const second = await run(EVAL_FIXTURE, [...args, '--out', 'mine-2.json'], pkg, user);
    expect(second.code).toBe(0);
    expect(second.stdout.trimEnd().split('\n').at(-1)).toBe('vectors: 0 embedded, 6 from the cache');
    const b = JSON.parse(readFileSync(join(user, 'mine-2.json'), 'utf8')) as RetrievalReport;
    expect(b.vectors).toEqual({ embedded: 0, fromCache: 6 });
    expect(b.variants).toEqual(a.variants);
  });

  it('runs the bundled retrieval-v1 without --fixture, writing under test-results/eval/ where pnpm ran', async () => {
    const result = await run(EVAL_FIXTURE, ['--no-cache'], pkg, user);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('vector cache: off');
    const report = JSON.parse(
      readFileSync(join(user, 'test-results/eval/retrieval-v1-deterministic.json'), 'utf8'),
    ) as RetrievalReport;
    expect(report.fixture.name).toBe('retrieval-v1');
    expect(report.variants.hybrid.overall.queries).toBe(60);
  });

  it('names the bad field of an invalid fixture, never its content, and writes no report', async () => {
    const secret = 'my bank PIN is 4711';
    const bad = {
      ...mine,
      corpus: [{ ...mine.corpus[0], kind: 'note', content: secret }, ...mine.corpus.slice(1)],
    };
    writeFileSync(join(user, 'bad.json'), JSON.stringify(bad));
    const result = await run(EVAL_FIXTURE, ['--fixture', 'bad.json', '--out', 'bad-report.json'], pkg, user);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('ENGRAM_EVAL_INVALID_FIXTURE: Invalid fixture: fixture.corpus[0].kind');
    expect(result.stderr).not.toContain(secret);
    expect(existsSync(join(user, 'bad-report.json'))).toBe(false);
  });

  it('exits 2 for an unknown embedder or a flag that does not fit it, and 1 for openai without its settings', async () => {
    const unknown = await run(EVAL_FIXTURE, ['--embedder', 'bert', '--fixture', 'mine.json'], pkg, user);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^unknown embedder; expected one of deterministic, use, openai, local\nusage:/,
    );
    const concepts = await run(EVAL_FIXTURE, ['--embedder', 'openai', '--no-concepts'], pkg, user);
    expect(concepts.code).toBe(2);
    expect(concepts.stderr).toMatch(/^--no-concepts needs --embedder deterministic\n/);
    const both = await run(EVAL_FIXTURE, ['--cache', 'x', '--no-cache'], pkg, user);
    expect(both.code).toBe(2);
    const openai = await run(EVAL_FIXTURE, ['--embedder', 'openai', '--fixture', 'mine.json'], pkg, user);
    expect(openai.code).toBe(1);
    expect(openai.stderr).toContain('ENGRAM_EVAL_EMBEDDER_UNAVAILABLE');
  });
});

describe('eval:dataset', () => {
  it('turns a SQuAD-format CMRC file into a fixture, runs it and writes the report and the fixture', async () => {
    const squad = {
      version: 'v1.0',
      data: [
        {
          paragraphs: [
            {
              id: 'P1',
              context: '长城是中国古代的军事防御工程。',
              qas: [{ id: 'Q1', question: '长城是什么工程？' }],
            },
            {
              id: 'P2',
              context: '黄河是中国第二长的河流。',
              qas: [{ id: 'Q2', question: '中国第二长的河流是哪条？' }],
            },
          ],
        },
      ],
    };
    writeFileSync(join(user, 'cmrc.json'), JSON.stringify(squad));
    const result = await run(
      EVAL_DATASET,
      ['cmrc', 'cmrc.json', 'reports/cmrc.json', '--fixture-out', 'reports/cmrc-fixture.json'],
      pkg,
      user,
    );
    expect(result.stderr).toContain(`reading cmrc from ${join(user, 'cmrc.json')}`);
    expect(result.stderr).toContain('hybrid: 2/2 queries');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toMatch(/^cmrc2018-dev v1 /);
    const report = JSON.parse(readFileSync(join(user, 'reports/cmrc.json'), 'utf8')) as RetrievalReport;
    expect(report.variants.fts.overall.queries).toBe(2);
    expect(report.variants.fts.overall.recallAt5).toBe(1);
    const written = JSON.parse(readFileSync(join(user, 'reports/cmrc-fixture.json'), 'utf8')) as {
      corpus: unknown[];
      queries: unknown[];
    };
    expect([written.corpus.length, written.queries.length]).toEqual([2, 2]);
  });

  it('exits 2 for an unknown dataset name and 1 for a file that is not there', async () => {
    const unknown = await run(EVAL_DATASET, ['msmarco', 'x', 'y'], pkg, user);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown dataset "msmarco"; expected one of locomo, scifact, cmrc');
    const missing = await run(EVAL_DATASET, ['locomo', 'nope.json', 'y.json'], pkg, user);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('eval:dataset failed (ENOENT): Error');
  });
});
