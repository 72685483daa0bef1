/**
 * The transport settings of the OpenAI-compatible adapters: the HTTP config both adapters take, its
 * validation (every failure an `ENGRAM_PROVIDER_CONFIG` naming the setting, never the value), the base-URL
 * rules and the frozen {@link Transport} the request loop in `http.ts` runs on.
 */
import { systemTimers, type Timers } from '@engram/contracts';
import { z } from 'zod';
import { EngramProviderError, type ProviderOperation } from './errors.js';
/** Sleeps `ms` milliseconds; rejects early when `signal` aborts. Injected in tests so backoff never really waits. */
export type ProviderSleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The timer functions the per-attempt deadline uses; injected in tests so a deadline fires without waiting. */
export type ProviderTimers = Timers;

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

/**
 * A value built on its first use, then the same one every time: the zod schemas of this package are built when
 * a provider is configured, not when the package is imported (a process with no provider never builds them).
 */
export function once<T>(build: () => T): () => T {
  let value: { readonly built: T } | undefined;
  return () => {
    value ??= { built: build() };
    return value.built;
  };
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

const httpConfigSchema = once(() =>
  z.object({
    baseUrl: z.string({ error: 'must be a string' }),
    apiKey: z.string({ error: 'must be a string' }).min(1, { error: 'must not be empty' }).optional(),
    timeoutMs: positiveInt(3_600_000).optional(),
    maxRetries: nonNegativeInt(10).optional(),
    retryBaseDelayMs: nonNegativeInt(600_000).optional(),
    retryMaxDelayMs: nonNegativeInt(600_000).optional(),
    retryAfterCapMs: nonNegativeInt(600_000).optional(),
    maxResponseBytes: positiveInt(1024 * 1024 * 1024).optional(),
    headers: z.record(z.string(), z.string(), { error: 'must map header names to strings' }).optional(),
  }),
);

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
  const parsed = httpConfigSchema().safeParse(config);
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
