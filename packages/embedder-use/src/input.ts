import type { SentencePieceTokenizer } from './tokenizer.js';

/** UTF-16 code units read from an input before normalisation (bounds the cost of a huge input). */
export const MAX_RAW_INPUT_UNITS = 16_384;

/** Code points kept after normalisation (bounds the cost of tokenisation). */
export const MAX_INPUT_CODE_POINTS = 4_096;

/**
 * Token ids passed to the model: the graph itself only reads positions below 128 (its `ClipToMaxLength`
 * step), so cutting here changes no vector and saves the work of the dropped tokens.
 */
export const MAX_INPUT_TOKENS = 128;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * The deterministic preparation of one input, part of the `use-lite-512-v1` profile: keep the first
 * {@link MAX_RAW_INPUT_UNITS} UTF-16 units (never splitting a surrogate pair), Unicode NFKC, every run of
 * white space to one space, trim, keep the first {@link MAX_INPUT_CODE_POINTS} code points. The white-space
 * step matches what the SentencePiece normaliser did when the model was trained; without it a newline or a
 * tab would become an unknown piece.
 */
export function normalizeInput(text: string): string {
  let raw = text;
  if (raw.length > MAX_RAW_INPUT_UNITS) {
    const cut = isHighSurrogate(raw.charCodeAt(MAX_RAW_INPUT_UNITS - 1))
      ? MAX_RAW_INPUT_UNITS - 1
      : MAX_RAW_INPUT_UNITS;
    raw = raw.slice(0, cut);
  }
  const normalized = raw.normalize('NFKC').replace(/\s+/gu, ' ').trim();
  if (normalized.length <= MAX_INPUT_CODE_POINTS) return normalized;
  let kept = 0;
  let end = 0;
  for (const symbol of normalized) {
    if (kept === MAX_INPUT_CODE_POINTS) break;
    kept += 1;
    end += symbol.length;
  }
  return normalized.slice(0, end);
}

/** Normalises and tokenises one input: at most {@link MAX_INPUT_TOKENS} ids, none for a blank text. */
export function encodeInput(tokenizer: SentencePieceTokenizer, text: string): number[] {
  const normalized = normalizeInput(text);
  if (normalized.length === 0) return [];
  const ids = tokenizer.encode(normalized);
  return ids.length > MAX_INPUT_TOKENS ? ids.slice(0, MAX_INPUT_TOKENS) : ids;
}
