/**
 * Text bound for a terminal. Stored content, ids and arguments may hold control characters; printed raw, an
 * ESC or a C1 CSI would let them recolour, move or rewrite the user's screen. Every C0 control character,
 * DEL and every C1 control character becomes `?` — except line feeds and tabs where the text keeps its lines.
 * So does every bidirectional control (the embeddings U+202A–U+202E, the isolates U+2066–U+2069 and the marks
 * U+200E, U+200F, U+061C): printed raw, an override reorders the rest of the line, so a stored memory could
 * make an id, a path or a score read as another.
 */

/** The bidirectional formatting characters: marks, embeddings, overrides and isolates. */
const BIDI = '\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069';
/** C0 controls (U+0000–U+001F), DEL (U+007F), C1 controls (U+0080–U+009F) and the bidi controls. */
const CONTROLS = new RegExp(`[\u0000-\u001f\u007f-\u009f${BIDI}]`, 'g');
/** The same set without line feed and tab. */
const CONTROLS_BUT_LINES = new RegExp(`[\u0000-\u0008\u000b-\u001f\u007f-\u009f${BIDI}]`, 'g');

/**
 * Makes text safe to print: `line` mode (the default) replaces every control character, line breaks and tabs
 * included; `lines` mode keeps line feeds and tabs (a CR-LF pair becomes one line feed).
 */
export function printable(text: string, mode: 'line' | 'lines' = 'line'): string {
  if (mode === 'line') return text.replace(CONTROLS, '?');
  return text.replace(/\r\n/g, '\n').replace(CONTROLS_BUT_LINES, '?');
}

/** One printable line of at most 40 characters, ending with `…` when cut (for echoing user input). */
export function clip(text: string): string {
  const flat = printable(text);
  return flat.length <= 40 ? flat : `${flat.slice(0, 39)}…`;
}
