import { MANIFEST_FILE, type ScopeManifest, scopeManifestSchema, TIERS, type Tier } from './manifest.js';
import { findModuleReferences, type ModuleReference } from './module-references.js';
import { findSkipMarkers } from './skip-markers.js';
import { isTestFile, isTypeTest, owningPackage, tierFromFileName } from './test-files.js';

/** The rules of the checker; each error names one. */
export const SCOPE_RULES: readonly [
  'INVALID_MANIFEST',
  'MISSING_PATH',
  'DUPLICATE',
  'UNLISTED',
  'NATIVE_IN_BEHAVIOR',
  'TIER_SUFFIX',
  'NOT_RUN',
  'EMPTY_REASON',
  'WRONG_OWNER',
  'SKIPPED_TEST',
] = [
  'INVALID_MANIFEST',
  'MISSING_PATH',
  'DUPLICATE',
  'UNLISTED',
  'NATIVE_IN_BEHAVIOR',
  'TIER_SUFFIX',
  'NOT_RUN',
  'EMPTY_REASON',
  'WRONG_OWNER',
  'SKIPPED_TEST',
] as const;

/** One rule code. */
export type ScopeRule = (typeof SCOPE_RULES)[number];

/** One violation: the rule, the file it concerns and a human-readable message (paths and rule facts only). */
export interface ScopeError {
  /** The violated rule. */
  readonly rule: ScopeRule;
  /** The repository-relative path concerned (the manifest itself for INVALID_MANIFEST). */
  readonly path: string;
  /** What is wrong and how to fix it. */
  readonly message: string;
}

/** A file of the repository as the checker sees it. */
export interface ScopeFile {
  /** Repository-relative POSIX path. */
  readonly path: string;
  /** UTF-8 text of the file. */
  readonly content: string;
}

/** A workspace package: its name and its repository-relative directory. */
export interface ScopePackage {
  /** The `name` of its package.json. */
  readonly name: string;
  /** Repository-relative POSIX directory, e.g. `packages/store`. */
  readonly dir: string;
}

/** Everything the checker looks at; the caller reads the file system, the checker never does. */
export interface CheckScopeInput {
  /** The parsed JSON of `memory-test-scope.json` (validated here). */
  readonly manifest: unknown;
  /** Every test file and every source file imports may reach (at least every file under packages/* and apps/*). */
  readonly files: readonly ScopeFile[];
  /** The workspace packages. */
  readonly packages: readonly ScopePackage[];
}

/** Counts of a manifest that passed every rule. */
export interface ScopeSummary {
  /** Number of test entries. */
  readonly testFiles: number;
  /** Number of distinct owning packages of the test entries. */
  readonly packages: number;
  /** Test entries per tier. */
  readonly byTier: Readonly<Record<Tier, number>>;
  /** Number of exemptions. */
  readonly exemptions: number;
}

/** Result of {@link checkScope}. */
export type CheckScopeResult =
  | { readonly ok: true; readonly summary: ScopeSummary }
  | { readonly ok: false; readonly errors: readonly ScopeError[] };

/** Module specifiers that load a native SQLite binding or the native harness. */
export function isNativeSpecifier(specifier: string): boolean {
  const direct = ['better-sqlite3', 'better-sqlite3-multiple-ciphers', 'sqlite-vec'];
  if (direct.some((name) => specifier === name || specifier.startsWith(`${name}/`))) return true;
  return specifier.includes('native-harness') || specifier.includes('/scripts/native-gate');
}

function dirname(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut === -1 ? '' : path.slice(0, cut);
}

function joinPath(base: string, relative: string): string | undefined {
  const out = base === '' ? [] : base.split('/');
  for (const segment of relative.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else {
      out.push(segment);
    }
  }
  return out.join('/');
}

function resolveModule(
  importer: string,
  specifier: string,
  files: ReadonlyMap<string, string>,
  packages: readonly ScopePackage[],
): string | undefined {
  if (specifier.startsWith('./') || specifier.startsWith('../')) {
    const target = joinPath(dirname(importer), specifier);
    if (target === undefined) return undefined;
    const candidates = [target];
    const ext = /\.(m|c)?js$/.exec(target);
    if (ext !== null) {
      const stem = target.slice(0, -ext[0].length);
      const ts = ext[1] === undefined ? ['.ts', '.tsx'] : [`.${ext[1]}ts`];
      candidates.push(...ts.map((e) => stem + e));
    } else {
      candidates.push(`${target}.ts`, `${target}.tsx`, `${target}/index.ts`);
    }
    return candidates.find((candidate) => files.has(candidate));
  }
  const pkg = packages.find((p) => p.name === specifier);
  if (pkg === undefined) return undefined;
  const entry = `${pkg.dir.replace(/\/+$/, '')}/src/index.ts`;
  return files.has(entry) ? entry : undefined;
}

/**
 * Follows runtime imports from a behavior test and returns the chain to the first native module, if any.
 *
 * The test file counts every reference; modules it reaches count static imports and top-level
 * `import()`/`require()` (a call inside a function may never run when the module loads).
 */
function findNativeChain(
  testPath: string,
  files: ReadonlyMap<string, string>,
  packages: readonly ScopePackage[],
): readonly string[] | undefined {
  const previous = new Map<string, string | undefined>([[testPath, undefined]]);
  const queue = [testPath];
  const chainTo = (path: string): string[] => {
    const chain: string[] = [];
    for (let at: string | undefined = path; at !== undefined; at = previous.get(at)) chain.unshift(at);
    return chain;
  };
  while (queue.length > 0) {
    const current = queue.shift()!;
    const refs = findModuleReferences(files.get(current) ?? '');
    const counted = (ref: ModuleReference): boolean =>
      current === testPath || ref.kind === 'static' || ref.topLevel;
    for (const ref of refs) {
      if (!counted(ref)) continue;
      if (isNativeSpecifier(ref.specifier)) return [...chainTo(current), ref.specifier];
      const next = resolveModule(current, ref.specifier, files, packages);
      if (next !== undefined && !previous.has(next)) {
        previous.set(next, current);
        queue.push(next);
      }
    }
  }
  return undefined;
}

/**
 * Checks the test-scope manifest against the repository's files and packages.
 *
 * Pure: it reads only its input and never throws for bad data; every violation becomes a
 * {@link ScopeError}, sorted by path and rule.
 */
export function checkScope(input: CheckScopeInput): CheckScopeResult {
  const parsed = scopeManifestSchema.safeParse(input.manifest);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((issue) => ({
        rule: 'INVALID_MANIFEST' as const,
        path: MANIFEST_FILE,
        message: `${issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.')}: ${issue.message}`,
      })),
    };
  }
  const manifest: ScopeManifest = parsed.data;
  const files = new Map(input.files.map((file) => [file.path, file.content]));
  const errors: ScopeError[] = [];
  const report = (rule: ScopeRule, path: string, message: string): void => {
    errors.push({ rule, path, message });
  };

  const seen = new Map<string, 'tests' | 'exemptions'>();
  const checkListed = (path: string, list: 'tests' | 'exemptions'): void => {
    const first = seen.get(path);
    if (first !== undefined) {
      report(
        'DUPLICATE',
        path,
        `listed again in "${list}" (first listed in "${first}"); a file has exactly one entry`,
      );
    } else {
      seen.set(path, list);
    }
    if (!files.has(path)) report('MISSING_PATH', path, `listed in "${list}" but no such file exists`);
  };

  for (const entry of manifest.tests) {
    checkListed(entry.path, 'tests');
    const owner = owningPackage(entry.path, input.packages);
    if (owner === undefined) {
      report(
        'WRONG_OWNER',
        entry.path,
        `no package directory holds this file (listed owner "${entry.package}")`,
      );
    } else if (owner.name !== entry.package) {
      report('WRONG_OWNER', entry.path, `owned by "${owner.name}" (${owner.dir}), not "${entry.package}"`);
    }
    if (isTypeTest(entry.path)) {
      report(
        'NOT_RUN',
        entry.path,
        'type tests (*.test-d.*) run in typecheck, not in a vitest tier: list as exemption',
      );
    } else {
      const claimed = tierFromFileName(entry.path);
      if (claimed !== entry.tier) {
        report('TIER_SUFFIX', entry.path, `listed as "${entry.tier}" but the file name says "${claimed}"`);
      }
      if (!entry.path.endsWith('.ts')) {
        report(
          'NOT_RUN',
          entry.path,
          'tiers run only *.ts test files; rename the file or list it as exemption',
        );
      } else if (owner !== undefined && !entry.path.startsWith(`${owner.dir.replace(/\/+$/, '')}/src/`)) {
        report('NOT_RUN', entry.path, `tiers run only test files under ${owner.dir}/src`);
      }
    }
    const source = files.get(entry.path);
    if (source !== undefined) {
      const skips = findSkipMarkers(source);
      if (skips.length > 0) {
        report(
          'SKIPPED_TEST',
          entry.path,
          `tests either run or fail, never skip: remove ${[...new Set(skips)].join(', ')}`,
        );
      }
    }
    if (entry.tier === 'behavior' && files.has(entry.path)) {
      const chain = findNativeChain(entry.path, files, input.packages);
      if (chain !== undefined) {
        report(
          'NATIVE_IN_BEHAVIOR',
          entry.path,
          `behavior tests must not load native modules: ${chain.join(' -> ')}; rename to *.native.test.ts or import types only`,
        );
      }
    }
  }

  for (const exemption of manifest.exemptions) {
    checkListed(exemption.path, 'exemptions');
    if (exemption.reason.trim() === '')
      report('EMPTY_REASON', exemption.path, 'an exemption needs a non-empty reason');
  }

  for (const path of files.keys()) {
    if (isTestFile(path) && !seen.has(path)) {
      report(
        'UNLISTED',
        path,
        `test file is not in ${MANIFEST_FILE}: add it to "tests" with its tier and package`,
      );
    }
  }

  if (errors.length > 0) {
    errors.sort((a, b) => (a.path === b.path ? a.rule.localeCompare(b.rule) : a.path < b.path ? -1 : 1));
    return { ok: false, errors };
  }
  const byTier = Object.fromEntries(TIERS.map((tier) => [tier, 0])) as Record<Tier, number>;
  for (const entry of manifest.tests) byTier[entry.tier] += 1;
  return {
    ok: true,
    summary: {
      testFiles: manifest.tests.length,
      packages: new Set(manifest.tests.map((entry) => entry.package)).size,
      byTier,
      exemptions: manifest.exemptions.length,
    },
  };
}
