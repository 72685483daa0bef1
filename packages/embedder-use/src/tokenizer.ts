/*
 * The SentencePiece unigram encoder of the Universal Sentence Encoder lite, ported to TypeScript from the
 * tokenizer of `@tensorflow-models/universal-sentence-encoder` 1.3.3 (Copyright 2019 Google LLC, Apache
 * License 2.0; see the NOTICE file of this package). That code is itself a port of `EncodeAsIds` of the
 * SentencePiece library: a Viterbi search for the most likely segmentation of the input into vocabulary
 * pieces. Changes from the original: typed, a `Map`-based trie, and the prefix search walks the symbol array
 * from an offset instead of copying its tail (the original is quadratic in the input length). The ids it
 * returns are the same, including the original's tie-breaking and the merging of consecutive unknown pieces.
 */

/** One vocabulary entry: the piece (`▁` marks a word start) and its log probability. */
export type VocabularyEntry = readonly [piece: string, score: number];

/** The word-start marker of SentencePiece (U+2581 LOWER ONE EIGHTH BLOCK). */
const SEPARATOR = '\u2581';

/** The first vocabulary entries are reserved (unknown, control and user-defined symbols) and never matched. */
const RESERVED_SYMBOLS_COUNT = 6;

/** The id of the unknown piece. */
const UNKNOWN_ID = 0;

interface TrieNode {
  readonly children: Map<string, TrieNode>;
  /** Vocabulary id when a piece ends here, otherwise -1. */
  id: number;
  score: number;
  /** Length of the piece in symbols (code points). */
  readonly length: number;
}

function newNode(length: number): TrieNode {
  return { children: new Map(), id: -1, score: 0, length };
}

interface Match {
  readonly id: number;
  readonly score: number;
  readonly length: number;
}

/** Splits a string into code points (the symbols of the lattice). */
function toSymbols(text: string): string[] {
  return Array.from(text);
}

/**
 * SentencePiece unigram tokenizer over a fixed vocabulary.
 *
 * Contract: `encode` is pure and synchronous; its input is expected to be already normalised by the caller
 * (it only applies NFKC and marks word starts on U+0020 spaces, like the original).
 */
export class SentencePieceTokenizer {
  readonly #vocabulary: readonly VocabularyEntry[];
  readonly #root: TrieNode = newNode(0);

  constructor(vocabulary: readonly VocabularyEntry[]) {
    this.#vocabulary = vocabulary;
    for (let id = RESERVED_SYMBOLS_COUNT; id < vocabulary.length; id += 1) {
      const entry = vocabulary[id];
      if (entry === undefined) continue;
      this.#insert(entry[0], entry[1], id);
    }
  }

  /** Number of vocabulary entries. */
  get size(): number {
    return this.#vocabulary.length;
  }

  #insert(piece: string, score: number, id: number): void {
    let node = this.#root;
    const symbols = toSymbols(piece);
    for (let i = 0; i < symbols.length; i += 1) {
      const symbol = symbols[i] as string;
      let child = node.children.get(symbol);
      if (child === undefined) {
        child = newNode(i + 1);
        node.children.set(symbol, child);
      }
      node = child;
    }
    node.id = id;
    node.score = score;
  }

  /** Every piece that starts at `start` (shortest first); the unknown piece of length 1 when none does. */
  #prefixMatches(symbols: readonly string[], start: number): Match[] {
    const output: Match[] = [];
    let node = this.#root.children.get(symbols[start] as string);
    for (let i = start; i < symbols.length && node !== undefined; i += 1) {
      if (node.id >= 0) output.push({ id: node.id, score: node.score, length: node.length });
      const next = symbols[i + 1];
      node = next === undefined ? undefined : node.children.get(next);
    }
    if (output.length === 0) output.push({ id: UNKNOWN_ID, score: 0, length: 1 });
    return output;
  }

  /** Encodes a text into vocabulary ids (an empty text gives no ids). */
  encode(text: string): number[] {
    const normalized = text.normalize('NFKC');
    if (normalized.length === 0) return [];
    const symbols = toSymbols(SEPARATOR + normalized.replace(/ /g, SEPARATOR));
    const n = symbols.length;
    // endings[end] lists the pieces ending at `end`, grouped by start position in ascending order.
    const endings: Map<number, Match[]>[] = [];
    for (let i = 0; i <= n; i += 1) endings.push(new Map());
    for (let start = 0; start < n; start += 1) {
      for (const match of this.#prefixMatches(symbols, start)) {
        const byStart = endings[start + match.length] as Map<number, Match[]>;
        const list = byStart.get(start);
        if (list === undefined) byStart.set(start, [match]);
        else list.push(match);
      }
    }
    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    for (let end = 0; end <= n; end += 1) {
      // Starts were inserted in ascending order, the order in which the original visits them.
      for (const list of (endings[end] as Map<number, Match[]>).values()) {
        for (const match of list) {
          const score = match.score + (best[end - match.length] as number);
          if (best[end] === 0 || score >= (best[end] as number)) {
            best[end] = score;
            words[end] = match.id;
          }
        }
      }
    }
    // Backward pass; like the original, it steps back by the chosen piece's length in UTF-16 units (the
    // vocabulary has no astral characters, so this equals its length in code points).
    const reversed: number[] = [];
    let position = n;
    while (position > 0) {
      const id = words[position] as number;
      reversed.push(id);
      position -= (this.#vocabulary[id] as VocabularyEntry)[0].length;
    }
    const merged: number[] = [];
    let previousUnknown = false;
    for (const id of reversed) {
      if (!(previousUnknown && id === UNKNOWN_ID)) merged.push(id);
      previousUnknown = id === UNKNOWN_ID;
    }
    return merged.reverse();
  }
}
