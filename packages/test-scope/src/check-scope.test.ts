import { describe, expect, it } from 'vitest';
import {
  type CheckScopeInput,
  type CheckScopeResult,
  checkScope,
  findSkipMarkers,
  type ScopeFile,
  type ScopeRule,
  type ScopeTestEntry,
} from './index.js';

const packages = [
  { name: '@engram/store', dir: 'packages/store' },
  { name: '@engram/retrieval', dir: 'packages/retrieval' },
  { name: '@engram/demo', dir: 'apps/demo' },
];

const pure = "import { describe, it } from 'vitest';\nimport { fuse } from './fusion.js';\n";

/** A small valid repository: one test per tier, plus the sources they import. */
function baseInput(): {
  files: ScopeFile[];
  tests: ScopeTestEntry[];
  exemptions: { path: string; reason: string }[];
} {
  return {
    files: [
      { path: 'packages/retrieval/src/fusion.ts', content: 'export const fuse = 1;\n' },
      { path: 'packages/retrieval/src/fusion.test.ts', content: pure },
      {
        path: 'packages/store/src/store.native.test.ts',
        content: "import Database from 'better-sqlite3';\nimport * as vec from 'sqlite-vec';\n",
      },
      { path: 'packages/store/src/search.eval.test.ts', content: "import Database from 'better-sqlite3';\n" },
      { path: 'packages/store/src/bulk.perf.test.ts', content: "import Database from 'better-sqlite3';\n" },
      { path: 'apps/demo/src/cli.test.ts', content: "import { it } from 'vitest';\n" },
      { path: 'packages/store/src/types.test-d.ts', content: "import { expectTypeOf } from 'vitest';\n" },
    ],
    tests: [
      { path: 'packages/retrieval/src/fusion.test.ts', tier: 'behavior', package: '@engram/retrieval' },
      { path: 'packages/store/src/store.native.test.ts', tier: 'native', package: '@engram/store' },
      { path: 'packages/store/src/search.eval.test.ts', tier: 'eval', package: '@engram/store' },
      { path: 'packages/store/src/bulk.perf.test.ts', tier: 'perf', package: '@engram/store' },
      { path: 'apps/demo/src/cli.test.ts', tier: 'behavior', package: '@engram/demo' },
    ],
    exemptions: [
      { path: 'packages/store/src/types.test-d.ts', reason: 'type test, checked by pnpm typecheck' },
    ],
  };
}

function run(mutate: (base: ReturnType<typeof baseInput>) => void = () => {}): CheckScopeResult {
  const base = baseInput();
  mutate(base);
  const input: CheckScopeInput = {
    manifest: { version: 1, tests: base.tests, exemptions: base.exemptions },
    files: base.files,
    packages,
  };
  return checkScope(input);
}

function rules(result: CheckScopeResult): { rule: ScopeRule; path: string }[] {
  return result.ok ? [] : result.errors.map(({ rule, path }) => ({ rule, path }));
}

describe('checkScope on a valid repository', () => {
  it('passes and counts tests per tier', () => {
    expect(run()).toEqual({
      ok: true,
      summary: {
        testFiles: 5,
        packages: 3,
        byTier: { behavior: 2, native: 1, eval: 1, perf: 1 },
        exemptions: 1,
      },
    });
  });
});

describe('INVALID_MANIFEST', () => {
  const invalid = (manifest: unknown): CheckScopeResult => checkScope({ manifest, files: [], packages });

  it('accepts an empty version-1 manifest', () => {
    expect(invalid({ version: 1, tests: [], exemptions: [] }).ok).toBe(true);
  });

  it.each([
    ['not an object', '(root)'],
    [{ version: 2, tests: [], exemptions: [] }, 'version'],
    [{ version: 1, tests: [] }, 'exemptions'],
    [
      {
        version: 1,
        tests: [{ path: 'packages/a/src/x.test.ts', tier: 'unit', package: '@a/a' }],
        exemptions: [],
      },
      'tier',
    ],
    [
      { version: 1, tests: [{ path: 'packages/a/src/x.test.ts', tier: 'behavior' }], exemptions: [] },
      'package',
    ],
    [
      { version: 1, tests: [{ path: '../x.test.ts', tier: 'behavior', package: '@a/a' }], exemptions: [] },
      'path',
    ],
    [
      { version: 1, tests: [{ path: '/abs/x.test.ts', tier: 'behavior', package: '@a/a' }], exemptions: [] },
      'path',
    ],
    [{ version: 1, tests: [], exemptions: [], extra: true }, 'extra'],
  ])('rejects %j', (manifest, field) => {
    const result = invalid(manifest);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.every((error) => error.rule === 'INVALID_MANIFEST')).toBe(true);
    expect(result.errors.every((error) => error.path === 'memory-test-scope.json')).toBe(true);
    expect(result.errors.map((error) => error.message).join('\n')).toContain(field);
  });
});

describe('MISSING_PATH', () => {
  it('fails for a listed test that does not exist', () => {
    const result = run((b) => {
      b.files = b.files.filter((f) => f.path !== 'apps/demo/src/cli.test.ts');
    });
    expect(rules(result)).toEqual([{ rule: 'MISSING_PATH', path: 'apps/demo/src/cli.test.ts' }]);
  });

  it('fails for an exemption that does not exist', () => {
    const result = run((b) => {
      b.exemptions.push({ path: 'packages/store/src/gone.test-d.ts', reason: 'type test' });
    });
    expect(rules(result)).toEqual([{ rule: 'MISSING_PATH', path: 'packages/store/src/gone.test-d.ts' }]);
  });
});

describe('DUPLICATE', () => {
  it('fails for a test listed twice', () => {
    const result = run((b) => {
      b.tests.push({
        path: 'packages/retrieval/src/fusion.test.ts',
        tier: 'behavior',
        package: '@engram/retrieval',
      });
    });
    expect(rules(result)).toEqual([{ rule: 'DUPLICATE', path: 'packages/retrieval/src/fusion.test.ts' }]);
  });

  it('fails for a file both tested and exempted', () => {
    const result = run((b) => {
      b.exemptions.push({ path: 'apps/demo/src/cli.test.ts', reason: 'manual' });
    });
    expect(rules(result)).toEqual([{ rule: 'DUPLICATE', path: 'apps/demo/src/cli.test.ts' }]);
  });
});

describe('UNLISTED', () => {
  it('ignores test-looking files in node_modules and dist, and non-test files', () => {
    const result = run((b) => {
      b.files.push(
        { path: 'packages/store/node_modules/x/a.test.ts', content: '' },
        { path: 'packages/store/dist/store.test.ts', content: '' },
        { path: 'packages/store/src/testing.ts', content: '' },
        { path: 'scripts/tool.test.ts', content: '' },
      );
    });
    expect(result.ok).toBe(true);
  });

  it.each([
    'packages/store/src/new.test.ts',
    'packages/store/src/ui.test.tsx',
    'packages/store/src/esm.test.mts',
    'packages/store/src/api.test-d.ts',
    'apps/demo/test/e2e.native.test.ts',
  ])('fails for an unlisted %s', (path) => {
    const result = run((b) => {
      b.files.push({ path, content: '' });
    });
    expect(rules(result)).toEqual([{ rule: 'UNLISTED', path }]);
  });
});

describe('NATIVE_IN_BEHAVIOR', () => {
  const fusionTest = 'packages/retrieval/src/fusion.test.ts';
  const withFusionTest = (content: string, extra: ScopeFile[] = []): CheckScopeResult =>
    run((b) => {
      b.files = b.files.map((f) => (f.path === fusionTest ? { path: f.path, content } : f));
      b.files.push(...extra);
    });

  it('allows type-only imports, comments and strings that mention native modules', () => {
    const content = [
      "import type Database from 'better-sqlite3';",
      "import type { Statement } from 'better-sqlite3';",
      "export type { Database } from 'better-sqlite3';",
      "// import Database from 'better-sqlite3';",
      "/* require('sqlite-vec') */",
      'const text = "import(\'better-sqlite3\')";',
      "const tpl = `require('sqlite-vec')`;",
      "const re = /require\\('sqlite-vec'\\)/;",
    ].join('\n');
    expect(withFusionTest(content).ok).toBe(true);
  });

  it.each([
    ['a static import', "import Database from 'better-sqlite3';", 'better-sqlite3'],
    ['a side-effect import', "import 'sqlite-vec';", 'sqlite-vec'],
    [
      'an inline type import (kept by verbatimModuleSyntax)',
      "import { type Database } from 'better-sqlite3';",
      'better-sqlite3',
    ],
    ['a dynamic import', "it('x', async () => { await import('sqlite-vec'); });", 'sqlite-vec'],
    [
      'a require',
      "const Db = require('better-sqlite3-multiple-ciphers');",
      'better-sqlite3-multiple-ciphers',
    ],
    ['a re-export', "export { default } from 'better-sqlite3';", 'better-sqlite3'],
    ['the native harness', "import { openTemp } from '../test/native-harness.js';", 'native-harness'],
    ['the native gate', "import gate from '../../../scripts/native-gate.ts';", '/scripts/native-gate'],
  ])('fails for %s', (_name, content, specifier) => {
    const result = withFusionTest(content);
    expect(rules(result)).toEqual([{ rule: 'NATIVE_IN_BEHAVIOR', path: fusionTest }]);
    if (!result.ok) expect(result.errors[0]?.message).toContain(specifier);
  });

  it('fails when a relative import loads a native module transitively', () => {
    const result = withFusionTest("import { open } from './db.js';", [
      { path: 'packages/retrieval/src/db.ts', content: "export { open } from './sqlite/open.js';" },
      { path: 'packages/retrieval/src/sqlite/open.ts', content: "import Database from 'better-sqlite3';" },
    ]);
    expect(rules(result)).toEqual([{ rule: 'NATIVE_IN_BEHAVIOR', path: fusionTest }]);
    if (!result.ok) {
      expect(result.errors[0]?.message).toContain(
        'packages/retrieval/src/fusion.test.ts -> packages/retrieval/src/db.ts -> packages/retrieval/src/sqlite/open.ts -> better-sqlite3',
      );
    }
  });

  it('fails when a workspace package import loads a native module at top level', () => {
    const result = withFusionTest("import { MEMORY_KINDS } from '@engram/store';", [
      { path: 'packages/store/src/index.ts', content: "export { openStore } from './sqlite.js';" },
      {
        path: 'packages/store/src/sqlite.ts',
        content:
          "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nconst Db = require('better-sqlite3');",
      },
    ]);
    expect(rules(result)).toEqual([{ rule: 'NATIVE_IN_BEHAVIOR', path: fusionTest }]);
  });

  it('passes when a reached module loads the native module lazily inside a function', () => {
    const result = withFusionTest("import { MEMORY_KINDS } from '@engram/store';", [
      { path: 'packages/store/src/index.ts', content: "export { openStore } from './sqlite.js';" },
      {
        path: 'packages/store/src/sqlite.ts',
        content:
          "export async function openStore() {\n  const { default: Db } = await import('better-sqlite3');\n  return Db;\n}",
      },
    ]);
    expect(result.ok).toBe(true);
  });

  it('passes when only a type is imported from a module that loads native code', () => {
    const result = withFusionTest("import type { Store } from '@engram/store';", [
      { path: 'packages/store/src/index.ts', content: "import Database from 'better-sqlite3';" },
    ]);
    expect(result.ok).toBe(true);
  });

  it('does not apply to native-tier files', () => {
    expect(run().ok).toBe(true); // the base store.native.test.ts imports better-sqlite3
  });
});

describe('TIER_SUFFIX', () => {
  it.each([
    ['packages/store/src/store.native.test.ts', 'behavior', 'native'],
    ['packages/store/src/search.eval.test.ts', 'perf', 'eval'],
    ['packages/store/src/bulk.perf.test.ts', 'native', 'perf'],
    ['apps/demo/src/cli.test.ts', 'native', 'behavior'],
  ] as const)('fails when %s is listed as %s', (path, tier, claimed) => {
    const result = run((b) => {
      b.tests = b.tests.map((t) => (t.path === path ? { ...t, tier } : t));
    });
    expect(rules(result)).toContainEqual({ rule: 'TIER_SUFFIX', path });
    if (!result.ok)
      expect(result.errors.find((e) => e.rule === 'TIER_SUFFIX')?.message).toContain(`"${claimed}"`);
  });
});

describe('NOT_RUN', () => {
  it.each([
    ['packages/store/src/ui.test.tsx', 'behavior'],
    ['packages/store/src/api.test-d.ts', 'behavior'],
    ['packages/store/test/outside.test.ts', 'behavior'],
  ] as const)('fails when %s is listed in a tier', (path, tier) => {
    const result = run((b) => {
      b.files.push({ path, content: '' });
      b.tests.push({ path, tier, package: '@engram/store' });
    });
    expect(rules(result)).toEqual([{ rule: 'NOT_RUN', path }]);
  });

  it('passes when such a file is exempted with a reason', () => {
    const result = run((b) => {
      b.files.push({ path: 'packages/store/src/ui.test.tsx', content: '' });
      b.exemptions.push({ path: 'packages/store/src/ui.test.tsx', reason: 'no tier runs tsx yet' });
    });
    expect(result.ok).toBe(true);
  });
});

describe('EMPTY_REASON', () => {
  it.each(['', '   '])('fails for the reason %j', (reason) => {
    const result = run((b) => {
      b.exemptions = b.exemptions.map((e) => ({ ...e, reason }));
    });
    expect(rules(result)).toEqual([{ rule: 'EMPTY_REASON', path: 'packages/store/src/types.test-d.ts' }]);
  });
});

describe('WRONG_OWNER', () => {
  it('fails when the package is not the one whose directory holds the file', () => {
    const result = run((b) => {
      b.tests = b.tests.map((t) =>
        t.path === 'apps/demo/src/cli.test.ts' ? { ...t, package: '@engram/store' } : t,
      );
    });
    expect(rules(result)).toEqual([{ rule: 'WRONG_OWNER', path: 'apps/demo/src/cli.test.ts' }]);
  });

  it('fails when no package directory holds the file', () => {
    const path = 'packages/orphan/src/x.test.ts';
    const result = run((b) => {
      b.files.push({ path, content: '' });
      b.tests.push({ path, tier: 'behavior', package: '@engram/orphan' });
    });
    expect(rules(result)).toEqual([{ rule: 'WRONG_OWNER', path }]);
  });

  it('does not confuse a directory with a longer sibling name', () => {
    const path = 'packages/store-extra/src/x.test.ts';
    const result = run((b) => {
      b.files.push({ path, content: '' });
      b.tests.push({ path, tier: 'behavior', package: '@engram/store' });
    });
    expect(rules(result)).toEqual([{ rule: 'WRONG_OWNER', path }]);
  });
});

describe('SKIPPED_TEST', () => {
  const nativeTest = 'packages/store/src/store.native.test.ts';
  const withNativeTest = (content: string): CheckScopeResult =>
    run((b) => {
      b.files = b.files.map((f) => (f.path === nativeTest ? { path: f.path, content } : f));
    });

  it.each([
    ["it.skip('x', () => {});", 'it.skip'],
    ["test.skipIf(!process.env.ENGRAM_REQUIRE_NATIVE)('x', () => {});", 'test.skipIf'],
    ["describe.runIf(hasNative)('native', () => {});", 'describe.runIf'],
    ["it.todo('later');", 'it.todo'],
    ["describe.only('focus', () => {});", 'describe.only'],
    ["it.concurrent.skip('x', async () => {});", 'it.concurrent.skip'],
    ["suite.skip('x', () => {});", 'suite.skip'],
    ["it('x', (ctx) => {\n  if (!loaded) ctx.skip();\n});", 'ctx.skip'],
    ["it('x', ({ skip }) => { context?.skip('no binding'); });", '.skip'],
  ])('fails for %s', (content, marker) => {
    const result = withNativeTest(content);
    expect(rules(result)).toEqual([{ rule: 'SKIPPED_TEST', path: nativeTest }]);
    if (!result.ok) expect(result.errors[0]?.message).toContain(marker);
  });

  it('applies to every tier, behavior included', () => {
    const result = run((b) => {
      b.files = b.files.map((f) =>
        f.path === 'apps/demo/src/cli.test.ts' ? { path: f.path, content: "it.skip('x', () => {});" } : f,
      );
    });
    expect(rules(result)).toEqual([{ rule: 'SKIPPED_TEST', path: 'apps/demo/src/cli.test.ts' }]);
  });

  it('allows the words in comments, strings, regexes, and unrelated members', () => {
    const content = [
      "// it.skip('x') would hide a failure",
      "/* describe.only('y') */",
      "const text = 'it.skip(\\'z\\')';",
      'const tpl = `test.todo(name)`;',
      'const re = /it\\.skip\\(/;',
      "it.each([1, 2])('runs %i', (n) => {});",
      'const page = { skip: 10, only: true };',
      'const offset = page.skip;',
      "it('reads options.todo', () => { expect(options.todo).toBe(false); });",
    ].join('\n');
    expect(withNativeTest(content).ok).toBe(true);
    expect(findSkipMarkers(content)).toEqual([]);
  });

  it('does not apply to exempted files, which no tier runs', () => {
    const result = run((b) => {
      b.files = b.files.map((f) =>
        f.path === 'packages/store/src/types.test-d.ts' ? { path: f.path, content: "it.skip('x');" } : f,
      );
    });
    expect(result.ok).toBe(true);
  });
});

describe('error reporting', () => {
  it('reports every violation, sorted by path then rule', () => {
    const result = run((b) => {
      b.tests.push({
        path: 'packages/store/src/zz.native.test.ts',
        tier: 'behavior',
        package: '@engram/retrieval',
      });
      b.exemptions.push({ path: 'packages/store/src/aa.test-d.ts', reason: '' });
    });
    expect(rules(result)).toEqual([
      { rule: 'EMPTY_REASON', path: 'packages/store/src/aa.test-d.ts' },
      { rule: 'MISSING_PATH', path: 'packages/store/src/aa.test-d.ts' },
      { rule: 'MISSING_PATH', path: 'packages/store/src/zz.native.test.ts' },
      { rule: 'TIER_SUFFIX', path: 'packages/store/src/zz.native.test.ts' },
      { rule: 'WRONG_OWNER', path: 'packages/store/src/zz.native.test.ts' },
    ]);
  });
});
