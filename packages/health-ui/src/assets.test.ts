import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BROWSER_MODULES, CONTRACTS_ENUMS_URL_PATH, healthUiAssets } from './assets.js';

const browserSrc = fileURLToPath(new URL('./browser/', import.meta.url));

describe('shipped assets', () => {
  it('list exactly the browser modules of src/browser', () => {
    const sources = readdirSync(browserSrc)
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
      .map((name) => name.replace(/\.ts$/, '.js'))
      .sort();
    expect([...BROWSER_MODULES].sort()).toEqual(sources);
  });

  it('exist after the build, at paths found relative to the module', () => {
    const missing = healthUiAssets.files
      .filter((asset) => !existsSync(asset.filePath))
      .map((a) => a.filePath);
    expect(missing, 'run `pnpm --filter @engram/health-ui build` first').toEqual([]);
    expect(healthUiAssets.index.urlPath).toBe('/');
    expect(new Set(healthUiAssets.files.map((a) => a.urlPath)).size).toBe(healthUiAssets.files.length);
  });

  it('reference only relative URLs the handler serves', () => {
    const html = readFileSync(healthUiAssets.index.filePath, 'utf8');
    const served = new Set(healthUiAssets.files.map((a) => a.urlPath));
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect(ref.startsWith('./'), ref).toBe(true);
      expect(served.has(ref.slice(1)), ref).toBe(true);
    }
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=/);
  });

  it('import nothing but modules the handler serves in the browser, and never write markup from strings', () => {
    const modules = healthUiAssets.files.filter((a) => a.urlPath.startsWith('/app/'));
    const served = new Set(modules.map((a) => a.urlPath));
    const imported = new Set<string>();
    for (const asset of modules) {
      // Comments may name what the code avoids; only code counts.
      const js = readFileSync(asset.filePath, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const match of js.matchAll(/\bfrom\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]/g)) {
        const specifier = match[1] ?? match[2] ?? '';
        expect(specifier, asset.urlPath).toMatch(/^\.\/(contracts\/)?[a-z0-9-]+\.js$/);
        const target = new URL(specifier, `http://page.invalid${asset.urlPath}`).pathname;
        expect(served.has(target), `${asset.urlPath} imports ${specifier}`).toBe(true);
        imported.add(target);
      }
      expect(js, asset.urlPath).not.toMatch(
        /innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/,
      );
    }
    // The closed enums come from the contracts build, which the page really imports (and which imports nothing).
    expect(imported.has(CONTRACTS_ENUMS_URL_PATH)).toBe(true);
    expect(served.has('/app/enums.js')).toBe(false);
  });
});
