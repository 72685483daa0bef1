import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as enums from './enums.js';
import * as errors from './errors.js';
import * as health from './health-dto/index.js';
import * as root from './index.js';
import * as observers from './observers.js';
import * as rules from './rules/index.js';

/** The modules an entry evaluates when loaded: relative imports followed, type-only imports skipped. */
function loadedModules(entry: URL): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (url: URL): void => {
    if (files.has(url.pathname)) return;
    files.add(url.pathname);
    const source = readFileSync(url, 'utf8');
    // A statement-level `import type` / `export type` is erased; anything else is evaluated.
    for (const match of source.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('.')) visit(new URL(specifier.replace(/\.js$/, '.ts'), url));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return { files: [...files], packages: [...packages].sort() };
}

describe('the entries of @engram/contracts', () => {
  it('the root still exports every name of every subpath entry, and nothing besides', () => {
    const fromEntries = [enums, rules, observers, health, errors].flatMap((entry) => Object.keys(entry));
    expect(new Set(fromEntries).size).toBe(fromEntries.length);
    expect(Object.keys(root).sort()).toEqual(fromEntries.sort());
  });

  it('importing a rule, an enum or an observer default does not build the health schemas (zod)', () => {
    for (const entry of ['./rules/index.ts', './enums.ts', './observers.ts', './errors.ts']) {
      const { files, packages } = loadedModules(new URL(entry, import.meta.url));
      expect(packages.filter((name) => !name.startsWith('node:'))).toEqual([]);
      expect(files.filter((file) => file.includes('/health-dto/'))).toEqual([]);
    }
    const healthPackages = loadedModules(new URL('./health-dto/index.ts', import.meta.url)).packages;
    expect(healthPackages.filter((name) => !name.startsWith('node:'))).toEqual(['zod']);
  });

  it('each subpath the manifest exports is one of those entries, built', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      exports: Record<string, { default?: string }>;
    };
    const sources = Object.fromEntries(
      ['./enums', './rules', './observers', './health', './errors'].map((subpath) => [
        subpath,
        manifest.exports[subpath]?.default?.replace(/^\.\/dist\//, './').replace(/\.js$/, '.ts'),
      ]),
    );
    expect(sources).toEqual({
      './enums': './enums.ts',
      './rules': './rules/index.ts',
      './observers': './observers.ts',
      './health': './health-dto/index.ts',
      './errors': './errors.ts',
    });
  });
});
