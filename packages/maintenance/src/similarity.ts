const CJK_RUN =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30FC\u3005\u3006]+/gu;
const WORD = /[\p{L}\p{N}_]+/gu;

/** The token set of a text: lower-cased NFKC words, and character bigrams of CJK runs (single characters whole). */
export function tokenSet(text: string): Set<string> {
  const normalized = text.normalize('NFKC').toLowerCase();
  const out = new Set<string>();
  for (const run of normalized.match(CJK_RUN) ?? []) {
    const chars = [...run];
    if (chars.length === 1) out.add(run);
    for (let i = 0; i + 1 < chars.length; i += 1) out.add(`${chars[i]}${chars[i + 1]}`);
  }
  for (const word of normalized.replace(CJK_RUN, ' ').match(WORD) ?? []) out.add(word);
  return out;
}

/** Jaccard similarity of two texts' token sets (1 for two empty texts). */
export function textSimilarity(a: string, b: string): number {
  const sa = tokenSet(a);
  const sb = tokenSet(b);
  if (sa.size === 0 && sb.size === 0) return 1;
  let inter = 0;
  for (const t of sa) if (sb.has(t)) inter += 1;
  return inter / (sa.size + sb.size - inter);
}

const NUMBER = /\d+(?:[.,]\d+)*/g;
const NEGATION =
  /\b(?:not|no|never|none|nobody|nothing|without|don't|doesn't|didn't|isn't|aren't|wasn't|weren't|won't|can't|cannot|shouldn't|mustn't|dont|doesnt|isnt|cant)\b|[不没沒別别勿非無无]/giu;

function numbers(text: string): string {
  return [...new Set(text.normalize('NFKC').match(NUMBER) ?? [])].sort().join('|');
}

function negations(text: string): number {
  return (text.normalize('NFKC').toLowerCase().replace(/[’]/g, "'").match(NEGATION) ?? []).length;
}

/**
 * The merge guard: two memories that differ in a number or in negation ("port 8080" / "port 3000",
 * "use pnpm" / "don't use pnpm") are never merged, whatever the similarity.
 */
export function mayMerge(a: string, b: string): boolean {
  return numbers(a) === numbers(b) && negations(a) % 2 === negations(b) % 2;
}
