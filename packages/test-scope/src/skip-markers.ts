import { type Token, tokenize } from './module-references.js';

/** The test-API roots whose modifiers skip or narrow what runs. */
const TEST_ROOTS: ReadonlySet<string> = new Set(['it', 'test', 'describe', 'suite', 'bench']);
/** Modifiers that make a test not run (or make every other test not run). */
const SKIP_MODIFIERS: ReadonlySet<string> = new Set(['skip', 'skipIf', 'runIf', 'todo', 'only']);

function isPunct(token: Token | undefined, value: string): boolean {
  return token?.type === 'punct' && token.value === value;
}

/** The identifiers of a member chain ending at `end` (`it.concurrent.skip` → it, concurrent, skip). */
function memberChain(tokens: readonly Token[], end: number): string[] {
  const chain = [tokens[end]?.value ?? ''];
  let j = end;
  while (isPunct(tokens[j - 1], '.') && tokens[j - 2]?.type === 'id') {
    j -= 2;
    chain.unshift(tokens[j]?.value ?? '');
  }
  // Preceded by `.` still (e.g. `ctx?.skip`, `f().skip`): the root is not a plain identifier.
  if (isPunct(tokens[j - 1], '.')) chain.unshift('');
  return chain;
}

/**
 * Finds the places where a test file skips tests instead of running them: `.skip`, `.skipIf`, `.runIf`,
 * `.todo` or `.only` on `it`/`test`/`describe`/`suite`/`bench` (any chain, e.g. `it.concurrent.skip`), and a
 * runtime skip call on a test context (`ctx.skip()`). Returns the chains as written; comments, strings, template
 * text and regex literals never match.
 */
export function findSkipMarkers(source: string): readonly string[] {
  const tokens = tokenize(source);
  const found: string[] = [];
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i];
    if (token?.type !== 'id' || !SKIP_MODIFIERS.has(token.value) || !isPunct(tokens[i - 1], '.')) continue;
    const chain = memberChain(tokens, i);
    const root = chain[0] ?? '';
    if (TEST_ROOTS.has(root) || (token.value === 'skip' && isPunct(tokens[i + 1], '('))) {
      found.push(chain.join('.'));
    }
  }
  return found;
}
