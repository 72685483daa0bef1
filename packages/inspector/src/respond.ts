/** How the inspector answers: its security headers, a page, a redirect. */
import type { IncomingMessage, ServerResponse } from 'node:http';

// No script at all: the pages are HTML and forms. Styles and the icon from the page's own origin only.
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The headers every answer carries (the health page's, with a CSP that allows no script at all). */
export function securityHeaders(res: ServerResponse): void {
  res.setHeader('x-content-type-options', 'nosniff');
  // `same-origin`, not the health page's `no-referrer`: under `no-referrer` a browser sends `Origin: null` on
  // the page's own form POSTs, which the origin check must refuse. Nothing is sent to another origin either way.
  res.setHeader('referrer-policy', 'same-origin');
  res.setHeader('content-security-policy', CONTENT_SECURITY_POLICY);
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('cross-origin-opener-policy', 'same-origin');
  res.setHeader('cross-origin-resource-policy', 'same-origin');
}

/** Sends a page (never cached: it holds memory content). */
export function sendHtml(req: IncomingMessage, res: ServerResponse, status: number, html: string): void {
  const body = Buffer.from(html, 'utf8');
  res.statusCode = status;
  securityHeaders(res);
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.setHeader('cache-control', 'no-store');
  res.setHeader('content-length', body.byteLength);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Redirects with 303 (after a POST or the token's first visit). */
export function redirect(res: ServerResponse, location: string, cookies: readonly string[] = []): void {
  res.statusCode = 303;
  securityHeaders(res);
  res.setHeader('cache-control', 'no-store');
  if (cookies.length > 0) res.setHeader('set-cookie', [...cookies]);
  res.setHeader('location', location);
  res.end();
}
