/**
 * The query side of the composition: what searches and fact comparisons ask the embedder with, and when.
 */
import { CJK_CLASS_SOURCE } from '@engram/contracts';
import type { EmbedderPort } from '@engram/maintenance';
import type { Retriever } from '@engram/retrieval';

/** The CJK class (Han, kana, Hangul): scripts USE-lite's English vocabulary does not cover. */
const CJK = new RegExp(CJK_CLASS_SOURCE, 'gu');

/**
 * The query side of USE-lite: a text that is at least a third CJK gets the all-zero vector (no signal), so its
 * search is lexical only and fact comparison falls back to token overlap. USE-lite's vocabulary is English:
 * CJK text becomes unknown tokens, and every CJK text would look like every other one (cosine near 1). Stored
 * vectors are not changed (they stay the profile's own), only what the queries and comparisons ask with.
 */
export function englishQueries(embedder: EmbedderPort): EmbedderPort {
  return {
    profile: embedder.profile,
    async embed(texts, options) {
      const vectors = await embedder.embed(texts, options);
      return vectors.map((vector, i) => {
        const text = (texts[i] ?? '').replace(/\s+/g, '');
        const cjk = text.match(CJK)?.length ?? 0;
        return cjk > 0 && cjk * 3 >= text.length ? new Float32Array(vector.length) : vector;
      });
    },
  };
}

/** A retriever whose every search first waits for the embedder's model, outside the embedding deadline. */
export function gatedRetriever(inner: Retriever, ready: () => Promise<void>): Retriever {
  const gate =
    (run: Retriever['search']): Retriever['search'] =>
    async (...args) => {
      await ready();
      return run(...args);
    };
  return {
    recall: gate(inner.recall),
    search: gate(inner.search),
    decision: gate(inner.decision),
    injection: gate(inner.injection),
    async retrieve(...args) {
      await ready();
      return inner.retrieve(...args);
    },
    circuit: () => inner.circuit(),
    settings: inner.settings,
  };
}
