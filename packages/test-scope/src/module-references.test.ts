import { describe, expect, it } from 'vitest';
import { findModuleReferences } from './index.js';

describe('findModuleReferences', () => {
  it('finds static, side-effect, re-export, dynamic and require references', () => {
    const source = [
      "import a from 'a';",
      "import * as b from 'b';",
      "import { c, type C } from 'c';",
      "import d, { e } from 'd';",
      "import 'side-effect';",
      "export { f } from 'f';",
      "export * from 'g';",
      "export * as h from 'h';",
      "const i = require('i');",
      "async function later() { return import('j'); }",
      'import {',
      '  k,',
      "} from 'k';",
    ].join('\n');
    expect(findModuleReferences(source)).toEqual([
      { specifier: 'a', kind: 'static', topLevel: true },
      { specifier: 'b', kind: 'static', topLevel: true },
      { specifier: 'c', kind: 'static', topLevel: true },
      { specifier: 'd', kind: 'static', topLevel: true },
      { specifier: 'side-effect', kind: 'static', topLevel: true },
      { specifier: 'f', kind: 'static', topLevel: true },
      { specifier: 'g', kind: 'static', topLevel: true },
      { specifier: 'h', kind: 'static', topLevel: true },
      { specifier: 'i', kind: 'require', topLevel: true },
      { specifier: 'j', kind: 'dynamic', topLevel: false },
      { specifier: 'k', kind: 'static', topLevel: true },
    ]);
  });

  it('skips type-only imports and exports but keeps a default import named type', () => {
    const source = [
      "import type A from 'a';",
      "import type { B } from 'b';",
      "export type { C } from 'c';",
      "import type from 'kept';",
    ].join('\n');
    expect(findModuleReferences(source).map((r) => r.specifier)).toEqual(['kept']);
  });

  it('ignores comments, strings, template text, regex literals and member calls', () => {
    const source = [
      "// import a from 'a';",
      "/* import('b') */",
      'const s = \'require("c")\';',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the string is source code under test
      "const t = `import('d') ${x} require('e')`;",
      "const r = /import('f')/g;",
      'const m = import.meta.url;',
      "loader.require('g');",
      "const u = 'http://example.com'; import h from 'h';",
    ].join('\n');
    expect(findModuleReferences(source).map((r) => r.specifier)).toEqual(['h']);
  });

  it('finds code inside template expressions and tracks block depth', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the string is source code under test
    const source = "const t = `${await import('a')}`;\nif (x) {\n  require('b');\n}\nrequire('c');";
    expect(findModuleReferences(source)).toEqual([
      { specifier: 'a', kind: 'dynamic', topLevel: true },
      { specifier: 'b', kind: 'require', topLevel: false },
      { specifier: 'c', kind: 'require', topLevel: true },
    ]);
  });
});
