/** How a module is referenced: a static `import`/`export … from`, a dynamic `import(…)` or a `require(…)`. */
export type ModuleReferenceKind = 'static' | 'dynamic' | 'require';

/** One runtime module reference found in a source file (type-only imports are not listed). */
export interface ModuleReference {
  /** The module specifier exactly as written. */
  readonly specifier: string;
  /** The syntax that references the module. */
  readonly kind: ModuleReferenceKind;
  /** True when the reference is outside any `{ … }` block, so it runs when the module is loaded. */
  readonly topLevel: boolean;
}

/** One token of {@link tokenize}: identifiers, string literals, punctuation; comments and regexes are dropped. */
export interface Token {
  readonly type: 'id' | 'str' | 'punct' | 'other';
  readonly value: string;
  readonly depth: number;
}

const REGEX_AFTER_KEYWORDS = new Set([
  'return',
  'typeof',
  'case',
  'do',
  'else',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'instanceof',
  'yield',
  'await',
]);
const REGEX_AFTER_PUNCT = new Set('(,=:[!&|?{};+-*%<>~^'.split(''));

function isIdentifierStart(ch: string): boolean {
  return /[A-Za-z_$]/.test(ch);
}

function isIdentifierPart(ch: string): boolean {
  return /[\w$]/.test(ch);
}

/** Splits TypeScript/JavaScript source into the few token kinds import (and skip) detection needs. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  // Each open brace is either a block/object brace or the `${` of a template literal.
  const braces: ('brace' | 'template')[] = [];
  let i = 0;
  const n = source.length;

  const previousAllowsRegex = (): boolean => {
    const prev = tokens[tokens.length - 1];
    if (prev === undefined) return true;
    if (prev.type === 'punct') return REGEX_AFTER_PUNCT.has(prev.value);
    if (prev.type === 'id') return REGEX_AFTER_KEYWORDS.has(prev.value);
    return false;
  };

  /** Scans template text from `i` (just after '`' or '}'); returns true when it stopped at `${`. */
  const scanTemplate = (): boolean => {
    while (i < n) {
      const ch = source[i];
      if (ch === '\\') {
        i += 2;
      } else if (ch === '`') {
        i += 1;
        return false;
      } else if (ch === '$' && source[i + 1] === '{') {
        i += 2;
        return true;
      } else {
        i += 1;
      }
    }
    return false;
  };

  const enterTemplate = (): void => {
    tokens.push({ type: 'other', value: '`', depth: blockDepth(braces) });
    if (scanTemplate()) braces.push('template');
  };

  while (i < n) {
    const ch = source[i]!;
    const next = source[i + 1];
    if (/\s/.test(ch)) {
      i += 1;
    } else if (ch === '/' && next === '/') {
      while (i < n && source[i] !== '\n') i += 1;
    } else if (ch === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end === -1 ? n : end + 2;
    } else if (ch === "'" || ch === '"') {
      let value = '';
      i += 1;
      while (i < n && source[i] !== ch && source[i] !== '\n') {
        if (source[i] === '\\') {
          value += source[i + 1] ?? '';
          i += 2;
        } else {
          value += source[i];
          i += 1;
        }
      }
      i += 1;
      tokens.push({ type: 'str', value, depth: blockDepth(braces) });
    } else if (ch === '`') {
      i += 1;
      enterTemplate();
    } else if (ch === '{') {
      braces.push('brace');
      tokens.push({ type: 'punct', value: ch, depth: blockDepth(braces) - 1 });
      i += 1;
    } else if (ch === '}') {
      const kind = braces.pop();
      i += 1;
      if (kind === 'template') {
        if (scanTemplate()) braces.push('template');
      } else {
        tokens.push({ type: 'punct', value: ch, depth: blockDepth(braces) });
      }
    } else if (ch === '/' && previousAllowsRegex()) {
      // A regular-expression literal: skip it so quotes inside it are not taken for strings.
      i += 1;
      let inClass = false;
      while (i < n && source[i] !== '\n') {
        const c = source[i];
        if (c === '\\') {
          i += 2;
          continue;
        }
        if (c === '[') inClass = true;
        else if (c === ']') inClass = false;
        else if (c === '/' && !inClass) break;
        i += 1;
      }
      i += 1;
      while (i < n && isIdentifierPart(source[i]!)) i += 1;
      tokens.push({ type: 'other', value: '/re/', depth: blockDepth(braces) });
    } else if (isIdentifierStart(ch)) {
      const start = i;
      while (i < n && isIdentifierPart(source[i]!)) i += 1;
      tokens.push({ type: 'id', value: source.slice(start, i), depth: blockDepth(braces) });
    } else if (/[0-9]/.test(ch)) {
      while (i < n && /[\w.]/.test(source[i]!)) i += 1;
      tokens.push({ type: 'other', value: '0', depth: blockDepth(braces) });
    } else {
      tokens.push({ type: 'punct', value: ch, depth: blockDepth(braces) });
      i += 1;
    }
  }
  return tokens;
}

/** Number of open block/object braces; `${` of a template literal does not count. */
function blockDepth(braces: readonly ('brace' | 'template')[]): number {
  let depth = 0;
  for (const kind of braces) if (kind === 'brace') depth += 1;
  return depth;
}

function isPunct(token: Token | undefined, value: string): boolean {
  return token?.type === 'punct' && token.value === value;
}

function isId(token: Token | undefined, value: string): boolean {
  return token?.type === 'id' && token.value === value;
}

/** Finds the specifier of `… from '<specifier>'` after index `start`, within the statement. */
function findFromSpecifier(tokens: readonly Token[], start: number): string | undefined {
  for (let j = start; j < tokens.length; j += 1) {
    const token = tokens[j]!;
    if (isPunct(token, ';')) return undefined;
    const following = tokens[j + 1];
    if (isId(token, 'from') && following?.type === 'str') return following.value;
  }
  return undefined;
}

/**
 * Lists the runtime module references of a source file: static imports and re-exports, dynamic
 * `import()` and `require()` calls with a string literal. `import type` and `export type` are skipped
 * (erased at compile time); comments, strings, template text and regex literals never produce matches.
 */
export function findModuleReferences(source: string): readonly ModuleReference[] {
  const tokens = tokenize(source);
  const refs: ModuleReference[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    if (token.type !== 'id' || isPunct(tokens[i - 1], '.')) continue;
    const next = tokens[i + 1];
    const afterNext = tokens[i + 2];
    const topLevel = token.depth === 0;
    if (token.value === 'import') {
      if (isPunct(next, '(') && afterNext?.type === 'str') {
        refs.push({ specifier: afterNext.value, kind: 'dynamic', topLevel });
      } else if (next?.type === 'str') {
        refs.push({ specifier: next.value, kind: 'static', topLevel });
      } else if (next !== undefined && !isPunct(next, '.') && !isPunct(next, '(')) {
        const typeOnly =
          isId(next, 'type') &&
          !isId(afterNext, 'from') &&
          !isPunct(afterNext, ',') &&
          !isPunct(afterNext, '=');
        const specifier = findFromSpecifier(tokens, i + 1);
        if (specifier !== undefined && !typeOnly) refs.push({ specifier, kind: 'static', topLevel });
      }
    } else if (token.value === 'export') {
      if (isPunct(next, '*') || isPunct(next, '{')) {
        const specifier = findFromSpecifier(tokens, i + 1);
        if (specifier !== undefined) refs.push({ specifier, kind: 'static', topLevel });
      }
    } else if (token.value === 'require') {
      if (isPunct(next, '(') && afterNext?.type === 'str' && isPunct(tokens[i + 3], ')')) {
        refs.push({ specifier: afterNext.value, kind: 'require', topLevel });
      }
    }
  }
  return refs;
}
