/**
 * Connection URLs in anything a user may see. A database URL (`postgres://user:password@host/db`) may carry
 * a password, in its authority or as a `password=` parameter; every summary, error, log line and health
 * field that names a database prints it through {@link redactConnectionUrl} (one value) or
 * {@link redactConnectionUrls} (free text), so the password never reaches a terminal, a log or a file.
 */

/** What a hidden password (or an unreadable URL's remainder) is replaced with. */
export const REDACTED = '***';

/** `scheme://user:password@` inside any text: the password ends at the authority's last `@`. */
const AUTHORITY_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:/?#@]*):([^\s/?#]*)@/gi;
/** A `password=` (or `sslpassword=`, `pass=`) query parameter. */
const PARAMETER_PASSWORD = /([?&](?:ssl)?pass(?:word)?=)[^&#\s]*/gi;

/**
 * One database location as a user may see it: a URL with its password (authority or parameter) replaced by
 * `***`; a string that is not a URL (a file path) is returned as is; a URL that does not parse keeps its
 * scheme only (whatever follows may be a password).
 */
export function redactConnectionUrl(db: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(db);
  if (scheme === null) return db;
  let parsed: URL;
  try {
    parsed = new URL(db);
  } catch {
    return `${scheme[1]}://${REDACTED}`;
  }
  let changed = false;
  if (parsed.password !== '') {
    parsed.password = REDACTED;
    changed = true;
  }
  for (const key of [...parsed.searchParams.keys()]) {
    if (/^(ssl)?pass(word)?$/i.test(key)) {
      parsed.searchParams.set(key, REDACTED);
      changed = true;
    }
  }
  return changed ? parsed.toString() : db;
}

/** Free text with the password of every connection URL in it replaced by `***` (user names and hosts stay). */
export function redactConnectionUrls(text: string): string {
  if (!text.includes('://') && !/pass/i.test(text)) return text;
  return text
    .replace(AUTHORITY_PASSWORD, (_all, scheme: string, user: string) => `${scheme}${user}:${REDACTED}@`)
    .replace(PARAMETER_PASSWORD, (_all, key: string) => `${key}${REDACTED}`);
}
