import type { Tier } from './manifest.js';

const TEST_FILE = /\.(test\.(ts|tsx|mts|cts)|test-d\.(ts|mts|cts))$/;
const TIER_INFIX: readonly [Exclude<Tier, 'behavior'>, RegExp][] = [
  ['native', /\.native\.test(-d)?\.[a-z]+$/],
  ['eval', /\.eval\.test(-d)?\.[a-z]+$/],
  ['perf', /\.perf\.test(-d)?\.[a-z]+$/],
];
const EXCLUDED_SEGMENTS = new Set(['node_modules', 'dist']);

/** True for a `*.test.{ts,tsx,mts,cts}` or `*.test-d.{ts,mts,cts}` file under `packages/*` or `apps/*` (not in node_modules or dist). */
export function isTestFile(path: string): boolean {
  const segments = path.split('/');
  if (segments.length < 3) return false;
  if (segments[0] !== 'packages' && segments[0] !== 'apps') return false;
  if (segments.some((segment) => EXCLUDED_SEGMENTS.has(segment))) return false;
  return TEST_FILE.test(segments[segments.length - 1] ?? '');
}

/** True for a type test (`*.test-d.*`), which the typecheck runs rather than a vitest tier. */
export function isTypeTest(path: string): boolean {
  return /\.test-d\.[a-z]+$/.test(path);
}

/** The tier a file name claims: `.native.test.*` → native, `.eval.test.*` → eval, `.perf.test.*` → perf, other `.test.*` → behavior. */
export function tierFromFileName(path: string): Tier {
  for (const [tier, pattern] of TIER_INFIX) {
    if (pattern.test(path)) return tier;
  }
  return 'behavior';
}

/** The package that holds a path: the one with the longest directory prefix, if any. */
export function owningPackage<P extends { readonly dir: string }>(
  path: string,
  packages: readonly P[],
): P | undefined {
  let best: P | undefined;
  for (const pkg of packages) {
    const dir = pkg.dir.replace(/\/+$/, '');
    if (
      path.startsWith(`${dir}/`) &&
      (best === undefined || dir.length > best.dir.replace(/\/+$/, '').length)
    ) {
      best = pkg;
    }
  }
  return best;
}
