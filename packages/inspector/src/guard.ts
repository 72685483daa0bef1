/**
 * The inspector's guards. It shows memory content, so every request must prove it came from whoever holds
 * the printed link: the Host header names this server (DNS rebinding), the request carries the token (in
 * `?token=` once, then in an HttpOnly SameSite=Strict cookie), and a write comes from the page itself
 * (Origin or Sec-Fetch-Site, plus a form token derived from the secret).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { EngramInspectorError } from './errors.js';

/** Bytes of a token {@link createInspectorToken} makes (256 bits). */
export const TOKEN_BYTES = 32;
/** Shortest token a handler accepts (a base64url string of 128 bits). */
export const MIN_TOKEN_LENGTH = 22;

/** A fresh secret for the inspector's link: 256 random bits (crypto.randomBytes), base64url. */
export function createInspectorToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** Checks a configured token: a base64url string of at least 128 bits. */
export function checkToken(token: unknown): string {
  if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) {
    throw new EngramInspectorError(
      'ENGRAM_INSPECTOR_INVALID_CONFIG',
      `token must be a base64url string of at least ${MIN_TOKEN_LENGTH} characters (createInspectorToken() makes one)`,
    );
  }
  return token;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Compares a presented secret with the expected one in constant time (over their digests). */
export function sameSecret(presented: string | null | undefined, expected: string): boolean {
  if (typeof presented !== 'string' || presented === '') return false;
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The form token of a secret: what every POST form carries, so a forged form without it is refused. */
export function formToken(token: string): string {
  return createHmac('sha256', token).update('engram-inspector-form').digest('base64url');
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['127.0.0.1', 'localhost', '[::1]']);
/** A Host header: a name (letters, digits, `.`, `-`, `_`) or a bracketed IPv6 address, and an optional port. */
const HOST_HEADER = /^([a-z0-9._-]+|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

/** Normalises `allowedHosts` as the health page does; throws on anything that is not a host[:port]. */
export function normaliseAllowedHosts(hosts: readonly string[] | undefined): ReadonlySet<string> {
  if (hosts === undefined) return new Set();
  if (
    !Array.isArray(hosts) ||
    hosts.some((h) => typeof h !== 'string' || !HOST_HEADER.test(h.toLowerCase()))
  ) {
    throw new EngramInspectorError(
      'ENGRAM_INSPECTOR_INVALID_CONFIG',
      'allowedHosts must be a list of host names, each with an optional :port',
    );
  }
  return new Set(hosts.map((h) => h.toLowerCase()));
}

/**
 * True when the Host header names this server: a loopback name on the port the request arrived on (no port
 * means 80), or an allowed host. The health page's rule.
 */
export function hostAllowed(req: IncomingMessage, allowed: ReadonlySet<string>): boolean {
  const header = req.headers.host;
  if (typeof header !== 'string') return false;
  const host = header.trim().toLowerCase();
  const match = HOST_HEADER.exec(host);
  if (match === null) return false;
  const name = match[1] ?? '';
  if (allowed.has(host) || allowed.has(name)) return true;
  if (!LOOPBACK_NAMES.has(name)) return false;
  const port = match[2] === undefined ? 80 : Number(match[2]);
  return port === req.socket?.localPort;
}

/** The cookie that carries the token: one per port, so two inspectors on one machine keep theirs apart. */
export function cookieName(req: IncomingMessage): string {
  return `engram_inspector_${req.socket?.localPort ?? 0}`;
}

/** The cookie that remembers the language choice. */
export const LANG_COOKIE = 'engram_inspector_lang';

/** Reads one cookie of the request (first occurrence), or null. */
export function readCookie(req: IncomingMessage, name: string): string | null {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** The Set-Cookie value that stores the token: HttpOnly, SameSite=Strict, on the inspector's path only. */
export function tokenCookie(req: IncomingMessage, token: string, path: string): string {
  return `${cookieName(req)}=${token}; HttpOnly; SameSite=Strict; Path=${path}`;
}

/**
 * True when a write comes from the inspector's own page: an `Origin` header, when sent, is this server's
 * origin (`http://` + the checked Host), and `Sec-Fetch-Site`, when sent, is `same-origin`. A browser sends at
 * least one of them on a form POST; a request with neither (a script on the machine) still needs the cookie or
 * token and the form token.
 */
export function sameOriginWrite(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  if (origin !== undefined) {
    if (typeof host !== 'string' || origin.toLowerCase() !== `http://${host.trim().toLowerCase()}`)
      return false;
  }
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  return true;
}
