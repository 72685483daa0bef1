/**
 * HTML building for the inspector's server-rendered pages. Stored text is untrusted: {@link userText} escapes
 * it and turns every bidirectional override or isolate and every control character into a visible marker, so
 * a memory can neither inject markup nor reorder what the page shows around it.
 */

/** Escapes text for an HTML text node or a double-quoted attribute value. */
export function esc(value: string | number): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Bidirectional formatting characters: marks, embeddings, overrides and isolates. */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
/** C0 and C1 controls (tab and line feed are kept: they lay text out), DEL, and the line/paragraph separators. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

function codePointLabel(code: number): string {
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Stored text as safe HTML: escaped, each bidi control or control character shown as a visible `U+XXXX`
 * marker instead of acting, lone surrogates replaced by U+FFFD, and the whole isolated in a `<bdi>` so
 * right-to-left text cannot spill into the page around it.
 */
export function userText(value: string, className = 'ut'): string {
  let out = '';
  let plain = '';
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        plain += value[i] ?? '';
        plain += value[i + 1] ?? '';
        i++;
      } else plain += '\ufffd';
      continue;
    }
    if (code >= 0xdc00 && code <= 0xdfff) {
      plain += '\ufffd';
      continue;
    }
    const ch = value[i] ?? '';
    if (BIDI.test(ch) || CONTROL.test(ch)) {
      out += `${esc(plain)}<span class="ctl" title="control character">${codePointLabel(code)}</span>`;
      plain = '';
      continue;
    }
    plain += ch;
  }
  out += esc(plain);
  return `<bdi class="${esc(className)}">${out}</bdi>`;
}

/** Plain text of stored content for a form field's value (escaped; controls and bidi characters dropped). */
export function fieldText(value: string): string {
  return esc(
    value
      .replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '')
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, ''),
  );
}

/** A relative link to a page of the inspector with query parameters (empty values left out), escaped. */
export function href(
  path: string,
  params: Readonly<Record<string, string | number | null | undefined>>,
): string {
  const query = Object.entries(params)
    .filter(
      (entry): entry is [string, string | number] =>
        entry[1] !== null && entry[1] !== undefined && entry[1] !== '',
    )
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
    .join('&');
  return esc(`./${path}${query === '' ? '' : `?${query}`}`);
}

/** A timestamp (epoch ms) as `YYYY-MM-DD HH:MM:SS UTC`, the same in every language. */
export function when(ms: number): string {
  if (!Number.isFinite(ms)) return '—';
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A score or rank with at most four decimals. */
export function num(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  return Number.isInteger(value) ? String(value) : value.toFixed(4);
}
