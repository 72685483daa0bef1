import { buildConceptIndex, CONCEPT_GROUPS_V1 } from './concepts.js';

/** Options of {@link extractFeatures}. */
export interface ExtractFeaturesOptions {
  /** Add `c:<concept>` features for synonym-table terms (default `true`; `false` is the ablation). */
  readonly conceptFeatures?: boolean;
}

const TOKEN = /[a-z0-9_./:@#+-]+/g;
const PART_SEPARATOR = /[./:@#+-]/;
// check-shape: not the CJK rule — the run class is part of the versioned profile deterministic-lexicon-v1
// (pinned by the golden vectors); following a changed shared class would silently change its vectors.
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
const CJK_WINDOW = 3;

const conceptIndex = buildConceptIndex(CONCEPT_GROUPS_V1);

/** Normalises text the way the embedder sees it: Unicode NFKC, then lower case. */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/**
 * Lists the deduplicated features of a text in first-seen order.
 *
 * Prefixes: `t:` token, `p:` token part, `c:` synonym concept, `k:` CJK window.
 */
export function extractFeatures(text: string, options: ExtractFeaturesOptions = {}): readonly string[] {
  const withConcepts = options.conceptFeatures ?? true;
  const normalized = normalizeText(text);
  const features = new Set<string>();

  for (const match of normalized.matchAll(TOKEN)) {
    const token = match[0];
    features.add(`t:${token}`);
    const concepts: string[] = [];
    const tokenConcept = conceptIndex.get(token);
    if (tokenConcept !== undefined) concepts.push(tokenConcept);
    for (const part of token.split(PART_SEPARATOR)) {
      if (part === '' || part === token) continue;
      features.add(`p:${part}`);
      const partConcept = conceptIndex.get(part);
      if (partConcept !== undefined) concepts.push(partConcept);
    }
    if (withConcepts) {
      for (const concept of concepts) features.add(`c:${concept}`);
    }
  }

  for (const match of normalized.matchAll(CJK_RUN)) {
    const chars = Array.from(match[0]);
    if (chars.length <= CJK_WINDOW) {
      features.add(`k:${chars.join('')}`);
      continue;
    }
    for (let i = 0; i + CJK_WINDOW <= chars.length; i += 1) {
      features.add(`k:${chars.slice(i, i + CJK_WINDOW).join('')}`);
    }
  }

  return [...features];
}
