/**
 * Chunking of long memories. Content longer than `CHUNK_BUDGET` UTF-16 code units is split at write time into
 * overlapping chunks, each with its own word-index row and its own vector; content at or under the budget is
 * one chunk, stored exactly as an unchunked memory (no chunk rows).
 *
 * The budget (1,000 code units, about 150–250 English words or 1,000 CJK characters) keeps a chunk within what
 * small sentence embedders read well (USE-lite and MiniLM-class models truncate or dilute past ~256 tokens) and
 * keeps a returned window readable in an agent's context. The overlap (150, 15%) lets a sentence cut by a
 * boundary appear whole in one of the two chunks. Both are fixed constants of the store, never per dataset.
 *
 * Boundaries prefer, in order, a paragraph break, a line break, a sentence end (Latin `.!?` followed by a
 * space, or CJK `。！？；`), then a space; CJK text (no spaces) falls back to any character boundary, and a
 * surrogate pair is never cut. Offsets are UTF-16 code units of the stored content: `content.slice(start, end)`.
 */

/** The chunk budget, in UTF-16 code units. */
export const CHUNK_BUDGET = 1000;
/** How far each chunk reaches back into the previous one, in UTF-16 code units (15% of the budget). */
export const CHUNK_OVERLAP = 150;
/** A boundary is searched in the last half of the budget; a chunk is never shorter than this share. */
const MIN_CHUNK_SHARE = 0.5;

/** Where one chunk sits in its memory's content. */
export interface ChunkSpan {
  /** 0-based chunk index. */
  readonly index: number;
  /** First code unit (inclusive). */
  readonly start: number;
  /** Last code unit (exclusive). */
  readonly end: number;
}

const SENTENCE_END_CJK = new Set(['。', '！', '？', '；', '．']);
const SENTENCE_END_LATIN = new Set(['.', '!', '?', ';']);

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** True when a cut at `i` would split a surrogate pair. */
function splitsPair(text: string, i: number): boolean {
  return i > 0 && i < text.length && isHighSurrogate(text.charCodeAt(i - 1));
}

/** The best cut in `(lo, hi]`: the end of a paragraph, line, sentence or word, else `hi` (pair-safe). */
function bestCut(text: string, lo: number, hi: number): number {
  let line = -1;
  let sentence = -1;
  let space = -1;
  for (let i = hi; i > lo; i -= 1) {
    const prev = text[i - 1] ?? '';
    const next = text[i] ?? '';
    if (prev === '\n') {
      if ((text[i - 2] ?? '') === '\n') return i;
      if (line < 0) line = i;
    } else if (sentence < 0 && SENTENCE_END_CJK.has(prev)) {
      sentence = i;
    } else if (sentence < 0 && SENTENCE_END_LATIN.has(prev) && /\s/u.test(next)) {
      sentence = i;
    } else if (space < 0 && /\s/u.test(prev)) {
      space = i;
    }
  }
  if (line >= 0) return line;
  if (sentence >= 0) return sentence;
  if (space >= 0) return space;
  return splitsPair(text, hi) ? hi - 1 : hi;
}

/** Where the next chunk starts: `overlap` back from `cut`, moved forward to a word start when one is near. */
function nextStart(text: string, prevStart: number, cut: number, overlap: number): number {
  let start = Math.max(prevStart + 1, cut - overlap);
  for (let i = start; i < cut; i += 1) {
    if (/\s/u.test(text[i - 1] ?? ' ') && !/\s/u.test(text[i] ?? ' ')) {
      start = i;
      break;
    }
  }
  if (splitsPair(text, start)) start += 1;
  return start;
}

/**
 * The chunks of `content`: one span `[0, length)` when it fits the budget, else overlapping spans that cover
 * it, in order. Pure and deterministic.
 */
export function chunkSpans(
  content: string,
  budget: number = CHUNK_BUDGET,
  overlap: number = CHUNK_OVERLAP,
): readonly ChunkSpan[] {
  const length = content.length;
  if (length <= budget) return [{ index: 0, start: 0, end: length }];
  const spans: ChunkSpan[] = [];
  let start = 0;
  for (;;) {
    const hardEnd = start + budget;
    if (hardEnd >= length) {
      spans.push({ index: spans.length, start, end: length });
      return spans;
    }
    const cut = bestCut(content, start + Math.floor(budget * MIN_CHUNK_SHARE), hardEnd);
    spans.push({ index: spans.length, start, end: cut });
    start = nextStart(content, start, cut, overlap);
  }
}

/** The largest content cap a store accepts (its `maxContentLength` setting), in UTF-16 code units. */
export const MAX_CONTENT_LENGTH_CAP = 10_000_000;

/**
 * The most chunks a stored memory can have: every chunk but the last ends at least half a budget after it
 * starts, and the next one reaches back at most the overlap, so each advances at least 350 code units.
 */
export const MAX_CHUNKS: number =
  Math.ceil(MAX_CONTENT_LENGTH_CAP / (CHUNK_BUDGET * MIN_CHUNK_SHARE - CHUNK_OVERLAP)) + 1;

/**
 * A memory's chunk count as read back from a store (untrusted: a damaged file can hold any value): an integer
 * from 1 to {@link MAX_CHUNKS}. A value that is not a positive integer reads as 1, a larger one as the most a
 * memory can have, so no loop over a memory's chunks runs longer than its content allows.
 */
export function storedChunkCount(value: unknown): number {
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) return 1;
  return Math.min(n, MAX_CHUNKS);
}

/** 2^40: the key span of one chunk index (row ids stay below it). */
export const CHUNK_KEY_SPAN = 1_099_511_627_776;

/**
 * The key of chunk `index` of the memory `rid` in a store's derived rows (lexical units, vectors): `rid + index ·
 * 2^40`. Chunk 0 keeps the memory's `rid`; the memory of a key is `key % 2^40`, its chunk `key / 2^40`.
 */
export function chunkKey(rid: number, index: number): number {
  return rid + index * CHUNK_KEY_SPAN;
}

/** Chunk vector states in a store's chunk rows: waiting for its vector. */
export const CHUNK_VEC_PENDING = 0;
/** The chunk's vector is stored. */
export const CHUNK_VEC_READY = 1;
/** The chunk embeds to nothing usable (the zero vector): it is searched lexically only. */
export const CHUNK_VEC_NONE = 2;
