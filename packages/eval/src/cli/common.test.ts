import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngramProviderError } from '@engram/provider-openai';
import { describe, expect, it } from 'vitest';
import { EngramEvalError } from '../errors.js';
import { type RetrievalReport, summarizeVariant } from '../report.js';
import {
  type CliOutput,
  defaultCacheDirectory,
  describeCliError,
  embedderFromFlags,
  finishReport,
  parseArgs,
  parseCliArgs,
  progressPrinter,
  resolveUserPath,
  storeOption,
} from './common.js';

function capture(): CliOutput & { readonly outText: () => string; readonly errText: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    outText: () => out,
    errText: () => err,
  };
}

describe('resolveUserPath', () => {
  it('resolves against INIT_CWD (where pnpm was run), not the package directory', () => {
    expect(resolveUserPath('fixtures/a.json', { INIT_CWD: '/repo' }, '/repo/packages/eval')).toBe(
      '/repo/fixtures/a.json',
    );
  });

  it('falls back to the current directory and keeps absolute paths', () => {
    expect(resolveUserPath('a.json', {}, '/work')).toBe('/work/a.json');
    expect(resolveUserPath('/abs/a.json', { INIT_CWD: '/repo' }, '/work')).toBe('/abs/a.json');
  });
});

describe('storeOption', () => {
  it('keeps a PostgreSQL URL as a URL and resolves a file like every path', () => {
    expect(storeOption('postgres://u@db:5432/engram?sslmode=require')).toEqual({
      storeUrl: 'postgres://u@db:5432/engram?sslmode=require',
    });
    expect(storeOption('postgresql://db/x')).toEqual({ storeUrl: 'postgresql://db/x' });
    expect(storeOption('/tmp/run.sqlite')).toEqual({ storePath: '/tmp/run.sqlite' });
    expect(storeOption(undefined)).toEqual({});
  });
});

describe('parseArgs', () => {
  const known = { boolean: ['help', 'no-concepts'], valued: ['store'] };

  it('separates positionals, boolean and valued flags, and ignores a forwarded --', () => {
    const parsed = parseArgs(['--', 'in.json', '--store', 'db.sqlite', 'out.json', '--no-concepts'], known);
    expect(parsed).toEqual({
      ok: true,
      positionals: ['in.json', 'out.json'],
      flags: new Map<string, string | true>([
        ['store', 'db.sqlite'],
        ['no-concepts', true],
      ]),
    });
    expect(parseArgs(['--store=x.db'], known)).toMatchObject({
      ok: true,
      flags: new Map([['store', 'x.db']]),
    });
  });

  it('rejects unknown flags and missing values', () => {
    expect(parseArgs(['--bogus'], known)).toEqual({ ok: false, message: 'unknown option --bogus' });
    expect(parseArgs(['-x'], known)).toEqual({ ok: false, message: 'unknown option -x' });
    expect(parseArgs(['--store'], known)).toEqual({ ok: false, message: '--store needs a value' });
    expect(parseArgs(['--help=1'], known)).toEqual({ ok: false, message: '--help takes no value' });
  });
});

describe('progressPrinter', () => {
  it('prints every load batch, every n-th query and the last one', () => {
    const lines: string[] = [];
    const print = progressPrinter((l) => lines.push(l), 2);
    print({ phase: 'load', done: 500, total: 600 });
    for (let done = 1; done <= 5; done += 1) print({ phase: 'query', variant: 'fts', done, total: 5 });
    expect(lines).toEqual([
      'loaded 500/600 rows',
      'fts: 2/5 queries',
      'fts: 4/5 queries',
      'fts: 5/5 queries',
    ]);
  });
});

describe('parseCliArgs', () => {
  const known = { boolean: ['help'], valued: ['size'] };

  it('prints the usage on stdout for --help and -h, with exit code 0', () => {
    for (const flag of ['--help', '-h']) {
      const io = capture();
      expect(parseCliArgs([flag], known, 'USAGE', io)).toEqual({ ok: false, exitCode: 0 });
      expect(io.outText()).toBe('USAGE\n');
      expect(io.errText()).toBe('');
    }
  });

  it('prints the problem and the usage on stderr for a bad argument, with exit code 2', () => {
    const io = capture();
    expect(parseCliArgs(['--size'], known, 'USAGE', io)).toEqual({ ok: false, exitCode: 2 });
    expect(io.errText()).toBe('--size needs a value\nUSAGE\n');
    expect(io.outText()).toBe('');
  });

  it('hands the parsed arguments back otherwise, printing nothing', () => {
    const io = capture();
    const args = parseCliArgs(['a', '--size=3'], known, 'USAGE', io);
    expect(args).toEqual({ ok: true, positionals: ['a'], flags: new Map([['size', '3']]) });
    expect(io.outText() + io.errText()).toBe('');
  });
});

describe('describeCliError', () => {
  it("shows an eval error's code and message", () => {
    const error = new EngramEvalError('ENGRAM_EVAL_INVALID_FIXTURE', 'Invalid fixture: queries[0]: bad');
    expect(describeCliError('eval:fixture', error)).toBe(
      'ENGRAM_EVAL_INVALID_FIXTURE: Invalid fixture: queries[0]: bad',
    );
  });

  it('shows only the name and code of any other error, never its message (it may quote the data)', () => {
    const driver = Object.assign(new TypeError('near "SECRET memory text": syntax error'), {
      code: 'SQLITE_ERROR',
    });
    expect(describeCliError('eval:dataset', driver)).toBe('eval:dataset failed (SQLITE_ERROR): TypeError');
    expect(describeCliError('eval:dataset', 'thrown string')).toBe('eval:dataset failed: Error');
  });

  it("shows a provider error's code and message: it names the variable, never its value", () => {
    const error = new EngramProviderError(
      'ENGRAM_PROVIDER_CONFIG',
      'ENGRAM_OPENAI_TIMEOUT_MS must be a positive integer.',
      {
        operation: 'config',
        setting: 'ENGRAM_OPENAI_TIMEOUT_MS',
      },
    );
    expect(describeCliError('eval:dataset', error)).toBe(
      'ENGRAM_PROVIDER_CONFIG: ENGRAM_OPENAI_TIMEOUT_MS must be a positive integer.',
    );
  });

  it('shows the message when asked (the benchmark handles no user content)', () => {
    expect(describeCliError('bench', new Error('disk full'), true)).toBe('bench failed: disk full');
  });
});

describe('finishReport', () => {
  it('writes the report (creating directories), prints its table on stdout and the path and time on stderr', () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-eval-cli-'));
    try {
      const v = summarizeVariant(
        [{ id: 'q1', subsets: ['exact'], ranked: ['a'], recallAt5: 1, mrrAt10: 1, ndcgAt10: 1 }],
        ['exact'],
      );
      const report: RetrievalReport = {
        version: 1,
        fixture: { name: 'tiny', version: 2 },
        vectorProfile: { id: 'p', dimensions: 128, normalized: true },
        variants: { fts: v, vector: v, hybrid: v, bm25: v },
      };
      const path = join(dir, 'nested/out/report.json');
      const io = capture();
      finishReport(report, path, 1000, io, 3500);
      expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(report);
      expect(io.outText().split('\n')[0]).toBe('tiny v2 (p, 128d)');
      expect(io.errText()).toBe(`report written to ${path} (2.5 s)\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('embedderFromFlags', () => {
  it('defaults to the deterministic embedder with a cache under node_modules/.cache where pnpm ran', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'engram-eval-flags-'));
    try {
      expect(defaultCacheDirectory({ INIT_CWD: dir }, '/elsewhere')).toBe(
        join(dir, 'node_modules/.cache/engram-eval'),
      );
      const chosen = await embedderFromFlags(new Map(), { INIT_CWD: dir });
      if ('message' in chosen) throw new Error(chosen.message);
      expect(chosen.named.name).toBe('deterministic');
      expect(chosen.cache?.directory.startsWith(join(dir, 'node_modules/.cache/engram-eval/'))).toBe(true);
      const ablation = await embedderFromFlags(new Map([['no-concepts', true]]), { INIT_CWD: dir });
      if ('message' in ablation) throw new Error(ablation.message);
      expect(ablation.named.cacheId).toBe('deterministic-lexicon-v1+no-concepts');
      expect(ablation.cache?.directory).not.toBe(chosen.cache?.directory);
      const off = await embedderFromFlags(new Map([['no-cache', true]]), { INIT_CWD: dir });
      expect('message' in off ? off.message : off.cache).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('returns a message for an unknown embedder and for flags that do not fit together', async () => {
    expect(await embedderFromFlags(new Map([['embedder', 'bert']]), {})).toEqual({
      message: 'unknown embedder; expected one of deterministic, use, openai, local',
    });
    expect(
      await embedderFromFlags(
        new Map<string, string | true>([
          ['embedder', 'use'],
          ['no-concepts', true],
        ]),
        {},
      ),
    ).toEqual({
      message: '--no-concepts needs --embedder deterministic',
    });
    expect(
      await embedderFromFlags(
        new Map<string, string | true>([
          ['cache', 'x'],
          ['no-cache', true],
        ]),
        {},
      ),
    ).toEqual({
      message: '--cache and --no-cache exclude each other',
    });
  });

  it('refuses --threads without --embedder use, or outside 0–64', async () => {
    expect(await embedderFromFlags(new Map([['threads', '2']]), {})).toEqual({
      message: '--threads needs --embedder use',
    });
    for (const threads of ['-1', '65', '1.5', 'many']) {
      expect(
        await embedderFromFlags(
          new Map<string, string | true>([
            ['embedder', 'use'],
            ['threads', threads],
          ]),
          {},
        ),
      ).toEqual({ message: '--threads must be an integer from 0 to 64' });
    }
  });
});
