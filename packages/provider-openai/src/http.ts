/**
 * The request loop of the OpenAI-compatible adapters: one POST per attempt under a per-attempt deadline,
 * retries of 429, 5xx and network errors with backoff (or `Retry-After`), a capped response body, and typed,
 * content-free errors.
 */
import { createDeadline } from '@engram/contracts';
import type { z } from 'zod';
import { EngramProviderError } from './errors.js';
import type { Transport } from './transport.js';

/** The result of one attempt that may be retried. */
interface RetryableFailure {
  readonly code: 'ENGRAM_PROVIDER_RATE_LIMITED' | 'ENGRAM_PROVIDER_UNAVAILABLE';
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
}

type AttemptResult =
  | { readonly ok: true; readonly json: unknown }
  | { readonly ok: false; readonly failure: RetryableFailure };

const ENDPOINT_NAME: Record<Transport['operation'], string> = {
  embeddings: 'embeddings endpoint',
  'chat.completions': 'chat completions endpoint',
  rerank: 'rerank endpoint',
};

function abortedError(transport: Transport, attempts: number, signal: AbortSignal): EngramProviderError {
  return new EngramProviderError(
    'ENGRAM_PROVIDER_ABORTED',
    `The call to the provider's ${ENDPOINT_NAME[transport.operation]} was aborted by the caller.`,
    { operation: transport.operation, attempts, cause: signal.reason },
  );
}

/** Parses `retry-after-ms` / `Retry-After` (seconds or an HTTP date) into a capped delay. */
export function retryAfterDelayMs(headers: Headers, now: number, capMs: number): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Math.min(capMs, Math.ceil(Number(ms)));
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.min(capMs, Math.ceil(Number(value) * 1000));
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.min(capMs, Math.max(0, date - now));
}

/** Exponential backoff with jitter: `min(max, base · 2^(retry-1)) · (0.5 + 0.5 · random)`. */
export function backoffDelayMs(retry: number, baseMs: number, maxMs: number, random: number): number {
  const exponential = Math.min(maxMs, baseMs * 2 ** (retry - 1));
  return Math.round(exponential * (0.5 + 0.5 * Math.min(1, Math.max(0, random))));
}

/** A short, content-free description of a network failure: only a system error code such as `ECONNREFUSED`. */
function networkCause(error: unknown): Error {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return new Error(codes.length > 0 ? `Network error (${codes.join(', ')}).` : 'Network error.');
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // The body is of no interest; a failure to discard it changes nothing.
  }
}

async function readBody(response: Response, maxBytes: number, transport: Transport): Promise<string> {
  const tooLarge = (): EngramProviderError =>
    new EngramProviderError(
      'ENGRAM_PROVIDER_MALFORMED_RESPONSE',
      `The provider's ${ENDPOINT_NAME[transport.operation]} sent a response body larger than ${maxBytes} bytes.`,
      { operation: transport.operation, status: response.status },
    );
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await discard(response);
    throw tooLarge();
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder('utf-8');
  let total = 0;
  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

async function attempt(
  transport: Transport,
  body: string,
  signal: AbortSignal | undefined,
  attemptNo: number,
): Promise<AttemptResult> {
  // One deadline races the caller's abort and this adapter's timeout; which one ended the attempt decides the
  // error.
  const deadline = createDeadline({ ms: transport.timeoutMs, timers: transport.timers, signals: [signal] });
  const { operation } = transport;
  try {
    const response = await transport.fetch(transport.url, {
      method: 'POST',
      headers: transport.headers,
      body,
      signal: deadline.signal,
    });
    const { status } = response;
    if (status === 429 || (status >= 500 && status <= 599)) {
      const retryAfterMs = retryAfterDelayMs(response.headers, transport.now(), transport.retryAfterCapMs);
      await discard(response);
      return {
        ok: false,
        failure: {
          code: status === 429 ? 'ENGRAM_PROVIDER_RATE_LIMITED' : 'ENGRAM_PROVIDER_UNAVAILABLE',
          status,
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        },
      };
    }
    if (status < 200 || status > 299) {
      await discard(response);
      throw new EngramProviderError(
        'ENGRAM_PROVIDER_HTTP',
        `The provider's ${ENDPOINT_NAME[operation]} answered HTTP ${status}${httpHint(status, operation)}`,
        { operation, status, attempts: attemptNo },
      );
    }
    const text = await readBody(response, transport.maxResponseBytes, transport);
    try {
      return { ok: true, json: JSON.parse(text) as unknown };
    } catch {
      // The SyntaxError quotes the body, so it is replaced by a content-free cause.
      throw new EngramProviderError(
        'ENGRAM_PROVIDER_MALFORMED_RESPONSE',
        `The provider's ${ENDPOINT_NAME[operation]} answered with a body that is not valid JSON.`,
        { operation, status, attempts: attemptNo, cause: new Error('Response body is not valid JSON.') },
      );
    }
  } catch (error) {
    if (error instanceof EngramProviderError) throw error;
    if (deadline.expired === 'aborted' && signal !== undefined)
      throw abortedError(transport, attemptNo, signal);
    if (deadline.expired === 'deadline') {
      throw new EngramProviderError(
        'ENGRAM_PROVIDER_TIMEOUT',
        `The provider's ${ENDPOINT_NAME[operation]} did not answer within ${transport.timeoutMs} ms.`,
        { operation, attempts: attemptNo },
      );
    }
    return { ok: false, failure: { code: 'ENGRAM_PROVIDER_UNAVAILABLE', cause: networkCause(error) } };
  } finally {
    deadline.settle();
  }
}

function httpHint(status: number, operation: Transport['operation']): string {
  if (status === 401 || status === 403) return ': check the API key and its permissions.';
  if (status === 404 && operation === 'rerank')
    return ': check the base URL, the endpoint and the model name.';
  if (status === 404) return ': check the base URL (it usually ends in /v1) and the model name.';
  if (status === 400 && operation === 'chat.completions') {
    return ': the server may not support structured output; try jsonMode "json_object".';
  }
  if (status === 400) return ': the server rejected the request (model, input or dimensions).';
  return '.';
}

/** Reads `aborted` through a call, so narrowing from an earlier check never survives an `await`. */
function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

/** A parsed 2xx answer and how many HTTP requests it took. */
export interface PostResult {
  readonly json: unknown;
  readonly attempts: number;
}

/**
 * POSTs a JSON body and returns the parsed JSON answer, retrying 429, 5xx and network errors with backoff.
 *
 * Rejects with an {@link EngramProviderError}: `ABORTED` on a caller abort (before, during or between attempts),
 * `TIMEOUT` when one attempt exceeds its deadline (not retried), `RATE_LIMITED`/`UNAVAILABLE` once retries are spent,
 * `HTTP` on any other non-2xx status and `MALFORMED_RESPONSE` on a body that is not JSON.
 */
export async function postJson(
  transport: Transport,
  payload: unknown,
  signal: AbortSignal | undefined,
): Promise<PostResult> {
  const body = JSON.stringify(payload);
  let attempts = 0;
  for (;;) {
    if (signal !== undefined && isAborted(signal)) throw abortedError(transport, attempts, signal);
    attempts += 1;
    const result = await attempt(transport, body, signal, attempts);
    if (result.ok) return { json: result.json, attempts };
    const { failure } = result;
    if (attempts > transport.maxRetries) {
      const { operation } = transport;
      const what = ENDPOINT_NAME[operation];
      const message =
        failure.code === 'ENGRAM_PROVIDER_RATE_LIMITED'
          ? `The provider's ${what} kept rate limiting (HTTP 429) after ${attempts} attempts.`
          : failure.status === undefined
            ? `The provider's ${what} was unreachable after ${attempts} attempts.`
            : `The provider's ${what} kept answering HTTP ${failure.status} after ${attempts} attempts.`;
      throw new EngramProviderError(failure.code, message, {
        operation,
        attempts,
        ...(failure.status === undefined ? {} : { status: failure.status }),
        ...(failure.cause === undefined ? {} : { cause: failure.cause }),
      });
    }
    const delay =
      failure.retryAfterMs ??
      backoffDelayMs(attempts, transport.retryBaseDelayMs, transport.retryMaxDelayMs, transport.random());
    try {
      await transport.sleep(delay, signal);
    } catch (error) {
      if (signal !== undefined && isAborted(signal)) throw abortedError(transport, attempts, signal);
      throw error;
    }
  }
}

/** Builds a `MALFORMED_RESPONSE` error from a zod failure, naming only the paths of the first issues. */
export function malformedFrom(
  transport: Transport,
  attempts: number,
  error: z.ZodError,
  what: string,
): EngramProviderError {
  const paths = error.issues
    .slice(0, 3)
    .map((issue) => issue.path.map(String).join('.') || '(root)')
    .join(', ');
  return new EngramProviderError(
    'ENGRAM_PROVIDER_MALFORMED_RESPONSE',
    `The provider's ${ENDPOINT_NAME[transport.operation]} answered with ${what}.`,
    { operation: transport.operation, attempts, cause: new Error(`Schema mismatch at ${paths}.`) },
  );
}

/** Builds a `MALFORMED_RESPONSE` error with a fixed, content-free message. */
export function malformed(transport: Transport, attempts: number, what: string): EngramProviderError {
  return new EngramProviderError(
    'ENGRAM_PROVIDER_MALFORMED_RESPONSE',
    `The provider's ${ENDPOINT_NAME[transport.operation]} answered with ${what}.`,
    { operation: transport.operation, attempts },
  );
}
