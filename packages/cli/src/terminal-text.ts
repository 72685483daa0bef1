/**
 * Text bound for a terminal. Stored content, ids and arguments may hold control characters; printed raw, an
 * ESC or a C1 CSI would let them recolour, move or rewrite the user's screen. Every C0 control character,
 * DEL and every C1 control character becomes `?` — except line feeds and tabs where the text keeps its lines.
 */

/** C0 controls (U+0000–U+001F), DEL (U+007F) and C1 controls (U+0080–U+009F): all of them, not the first. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
/** The same set without line feed and tab. */
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

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
