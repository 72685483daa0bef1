import { describe, expect, it } from 'vitest';
import { parseArgs, progressPrinter, resolveUserPath } from './common.js';

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
