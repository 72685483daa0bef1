/**
 * The page's reads of its JSON API (`./api/agents`, `./api/health`): no caching, and every failure mapped to
 * the message key the page shows. The response body of an error is read only for its wire error code.
 */

/** The message key of a failed request. */
export type ErrorKey =
  | 'error.unavailable'
  | 'error.badRequest'
  | 'error.notFound'
  | 'error.internal'
  | 'error.network'
  | 'error.invalid';

const API_ERRORS: Readonly<Record<string, ErrorKey>> = {
  unavailable: 'error.unavailable',
  badRequest: 'error.badRequest',
  notFound: 'error.notFound',
  internal: 'error.internal',
};

/** GETs a JSON endpoint of the handler; failures become the message key of what the user should read. */
export async function fetchJson(
  path: string,
): Promise<{ ok: true; body: unknown } | { ok: false; error: ErrorKey }> {
  let response: Response;
  try {
    response = await fetch(path, { cache: 'no-store', headers: { accept: 'application/json' } });
  } catch {
    return { ok: false, error: 'error.network' };
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return { ok: false, error: response.ok ? 'error.invalid' : 'error.internal' };
  }
  if (!response.ok) {
    const code = (body as { error?: unknown } | null)?.error;
    return {
      ok: false,
      error: (typeof code === 'string' ? API_ERRORS[code] : undefined) ?? 'error.internal',
    };
  }
  return { ok: true, body };
}
