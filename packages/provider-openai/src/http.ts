import { z } from 'zod';
import { EngramProviderError, type ProviderOperation } from './errors.js';

/** Sleeps `ms` milliseconds; rejects early when `signal` aborts. Injected in tests so backoff never really waits. */
export type ProviderSleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The timer functions the per-attempt deadline uses; injected in tests so a deadline fires without waiting. */
export interface ProviderTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The default timers: the runtime's `setTimeout` / `clearTimeout`. */
const systemTimers: ProviderTimers = Object.freeze({
  setTimeout: (fn: () => void, ms: number): unknown => setTimeout(fn, ms),
  clearTimeout: (handle: unknown): void => clearTimeout(handle as ReturnType<typeof setTimeout>),
});

/** Connection, deadline and retry settings shared by the embeddings and chat adapters. */
export interface OpenAICompatibleHttpConfig {
  /** API root including the version segment, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:11434/v1`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` when set; local servers usually need none. */
  readonly apiKey?: string;
  /** Deadline of one HTTP attempt, response body included, in milliseconds. */
  readonly timeoutMs?: number;
  /** Retries after the first attempt on 429, 5xx and network errors (default 2). */
  readonly maxRetries?: number;
  /** First backoff delay in milliseconds before jitter (default 500). */
  readonly retryBaseDelayMs?: number;
  /** Largest backoff delay in milliseconds before jitter (default 8000). */
  readonly retryMaxDelayMs?: number;
  /** Largest wait a `Retry-After` header can ask for, in milliseconds (default 30000). */
  readonly retryAfterCapMs?: number;
  /** Largest accepted response body in bytes (default 64 MiB). */
  readonly maxResponseBytes?: number;
  /** Extra request headers (e.g. `OpenAI-Organization`); never echoed into errors. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The `fetch` implementation (default: the global `fetch` of Node 20). */
  readonly fetch?: typeof fetch;
  /** Backoff sleep (default: an abortable `setTimeout`). */
  readonly sleep?: ProviderSleep;
  /** Jitter source in [0, 1) (default `Math.random`). */
  readonly random?: () => number;
  /** Wall clock in epoch milliseconds, used for `Retry-After` dates (default `Date.now`). */
  readonly now?: () => number;
  /** Timers of the per-attempt deadline (default: the runtime's `setTimeout` / `clearTimeout`). */
  readonly timers?: ProviderTimers;
}

/** The resolved, frozen transport settings. */
export interface Transport {
  readonly operation: Exclude<ProviderOperation, 'config'>;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly retryBaseDelayMs: number;
  readonly retryMaxDelayMs: number;
  readonly retryAfterCapMs: number;
  readonly maxResponseBytes: number;
  readonly fetch: typeof fetch;
  readonly sleep: ProviderSleep;
  readonly random: () => number;
  readonly now: () => number;
  readonly timers: ProviderTimers;
}

const DEFAULTS = {
  maxRetries: 2,
  retryBaseDelayMs: 500,
  retryMaxDelayMs: 8_000,
  retryAfterCapMs: 30_000,
  maxResponseBytes: 64 * 1024 * 1024,
} as const;

const nonNegativeInt = (max: number) =>
  z
    .number({ error: 'must be a number' })
    .int({ error: 'must be an integer' })
    .min(0, { error: 'must not be negative' })
    .max(max, { error: `must be at most ${max}` });
const positiveInt = (max: number) =>
  z
    .number({ error: 'must be a number' })
    .int({ error: 'must be an integer' })
    .min(1, { error: 'must be at least 1' })
    .max(max, { error: `must be at most ${max}` });

const httpConfigSchema = z.object({
  baseUrl: z.string({ error: 'must be a string' }),
  apiKey: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).optional(),
  timeoutMs: positiveInt(3_600_000).optional(),
  maxRetries: nonNegativeInt(10).optional(),
  retryBaseDelayMs: nonNegativeInt(600_000).optional(),
  retryMaxDelayMs: nonNegativeInt(600_000).optional(),
  retryAfterCapMs: nonNegativeInt(600_000).optional(),
  maxResponseBytes: positiveInt(1024 * 1024 * 1024).optional(),
  headers: z.record(z.string(), z.string(), { error: 'must map header names to strings' }).optional(),
});

/** Throws `ENGRAM_PROVIDER_CONFIG` naming the first invalid setting of a zod result; never echoes a value. */
export function configErrorFrom(error: z.ZodError, what: string): EngramProviderError {
  const issue = error.issues[0];
  const setting = issue === undefined ? 'config' : issue.path.map(String).join('.') || 'config';
  const reason = issue?.message ?? 'is invalid';
  return new EngramProviderError(
    'ENGRAM_PROVIDER_CONFIG',
    `Invalid ${what} configuration: ${setting} ${reason}.`,
    {
      operation: 'config',
      setting,
    },
  );
}

function configError(setting: string, reason: string, what: string): EngramProviderError {
  return new EngramProviderError(
    'ENGRAM_PROVIDER_CONFIG',
    `Invalid ${what} configuration: ${setting} ${reason}.`,
    {
      operation: 'config',
      setting,
    },
  );
}

/** Parses and checks a base URL: http(s) only, no credentials, no fragment; the value never enters a message. */
export function parseBaseUrl(baseUrl: string, setting: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    throw configError(setting, 'must be an absolute http(s) URL', what);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw configError(setting, 'must use http or https', what);
  }
  if (url.username !== '' || url.password !== '') {
    throw configError(setting, 'must not contain credentials (use the API key setting)', what);
  }
  if (url.hash !== '') throw configError(setting, 'must not contain a fragment', what);
  return url;
}

/** Joins an endpoint path to a base URL, keeping the base path and any query (e.g. an `api-version`). */
function endpointUrl(base: URL, endpoint: string): string {
  const url = new URL(base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${endpoint}`;
  return url.href;
}

/** The default backoff sleep: an abortable timer. */
export const defaultSleep: ProviderSleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Builds a frozen transport from validated config; throws `ENGRAM_PROVIDER_CONFIG` on a bad function or URL. */
export function createTransport(
  config: OpenAICompatibleHttpConfig,
  operation: Transport['operation'],
  endpoint: string,
  defaultTimeoutMs: number,
  what: string,
): Transport {
  const parsed = httpConfigSchema.safeParse(config);
  if (!parsed.success) throw configErrorFrom(parsed.error, what);
  for (const key of ['fetch', 'sleep', 'random', 'now'] as const) {
    if (config[key] !== undefined && typeof config[key] !== 'function') {
      throw configError(key, 'must be a function', what);
    }
  }
  const timers = config.timers;
  if (
    timers !== undefined &&
    (typeof timers !== 'object' ||
      timers === null ||
      typeof timers.setTimeout !== 'function' ||
      typeof timers.clearTimeout !== 'function')
  ) {
    throw configError('timers', 'must provide setTimeout and clearTimeout functions', what);
  }
  const fetchImpl = config.fetch ?? globalThis.fetch;
  if (typeof fetchImpl !== 'function') throw configError('fetch', 'is not available in this runtime', what);
  const base = parseBaseUrl(config.baseUrl, 'baseUrl', what);
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...config.headers,
    'content-type': 'application/json',
  };
  if (config.apiKey !== undefined) headers.authorization = `Bearer ${config.apiKey}`;
  return Object.freeze({
    operation,
    url: endpointUrl(base, endpoint),
    headers: Object.freeze(headers),
    timeoutMs: config.timeoutMs ?? defaultTimeoutMs,
    maxRetries: config.maxRetries ?? DEFAULTS.maxRetries,
    retryBaseDelayMs: config.retryBaseDelayMs ?? DEFAULTS.retryBaseDelayMs,
    retryMaxDelayMs: config.retryMaxDelayMs ?? DEFAULTS.retryMaxDelayMs,
    retryAfterCapMs: config.retryAfterCapMs ?? DEFAULTS.retryAfterCapMs,
    maxResponseBytes: config.maxResponseBytes ?? DEFAULTS.maxResponseBytes,
    fetch: fetchImpl,
    sleep: config.sleep ?? defaultSleep,
    random: config.random ?? Math.random,
    now: config.now ?? Date.now,
    timers: timers ?? systemTimers,
  });
}

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
  const controller = new AbortController();
  // Which deadline ended the attempt decides the error: the caller's abort or this adapter's timeout.
  const state: { fired: 'caller' | 'timeout' | undefined } = { fired: undefined };
  const onCallerAbort = (): void => {
    state.fired ??= 'caller';
    controller.abort();
  };
  signal?.addEventListener('abort', onCallerAbort, { once: true });
  const timer = transport.timers.setTimeout(() => {
    state.fired ??= 'timeout';
    controller.abort();
  }, transport.timeoutMs);
  const { operation } = transport;
  try {
    const response = await transport.fetch(transport.url, {
      method: 'POST',
      headers: transport.headers,
      body,
      signal: controller.signal,
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
    if (state.fired === 'caller' && signal !== undefined) throw abortedError(transport, attemptNo, signal);
    if (state.fired === 'timeout') {
      throw new EngramProviderError(
        'ENGRAM_PROVIDER_TIMEOUT',
        `The provider's ${ENDPOINT_NAME[operation]} did not answer within ${transport.timeoutMs} ms.`,
        { operation, attempts: attemptNo },
      );
    }
    return { ok: false, failure: { code: 'ENGRAM_PROVIDER_UNAVAILABLE', cause: networkCause(error) } };
  } finally {
    transport.timers.clearTimeout(timer);
    signal?.removeEventListener('abort', onCallerAbort);
  }
}

function httpHint(status: number, operation: Transport['operation']): string {
  if (status === 401 || status === 403) return ': check the API key and its permissions.';
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
