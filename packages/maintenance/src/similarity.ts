import { CJK_CLASS_SOURCE } from '@engram/contracts';
import { canMergeFacts } from '@engram/tools';

/** A run of CJK characters (the contracts class). */
const CJK_RUN = new RegExp(`${CJK_CLASS_SOURCE}+`, 'gu');
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

/**
 * The merge guard: two memories that differ in a number, a negation or a named entity ("port 8080" /
 * "port 3000", "use pnpm" / "don't use pnpm", "English" / "Spanish", `src/a.ts` / `src/b.ts`) are never
 * merged, whatever their similarity. It is `@engram/tools`' `canMergeFacts`, the same rule
 * `memory_remember` applies, so the heavy phase can never merge what the hot path keeps apart.
 */
export function mayMerge(a: string, b: string): boolean {
  return canMergeFacts(a, b).ok;
}
