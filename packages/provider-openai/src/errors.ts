import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramProviderError}. */
export const ENGRAM_PROVIDER_ERROR_CODES = [
  'ENGRAM_PROVIDER_HTTP',
  'ENGRAM_PROVIDER_RATE_LIMITED',
  'ENGRAM_PROVIDER_UNAVAILABLE',
  'ENGRAM_PROVIDER_MALFORMED_RESPONSE',
  'ENGRAM_PROVIDER_DIMENSIONS',
  'ENGRAM_PROVIDER_TIMEOUT',
  'ENGRAM_PROVIDER_ABORTED',
  'ENGRAM_PROVIDER_CONFIG',
] as const;

/** One stable error code of this package. */
export type EngramProviderErrorCode = (typeof ENGRAM_PROVIDER_ERROR_CODES)[number];

/** Which endpoint of the OpenAI-compatible API an error comes from (`config` for construction errors). */
export type ProviderOperation = 'embeddings' | 'chat.completions' | 'rerank' | 'config';

/** Content-free details attached to an {@link EngramProviderError}; every field is a number, boolean or closed name. */
export interface EngramProviderErrorDetails {
  /** The endpoint the failing call went to. */
  readonly operation: ProviderOperation;
  /** The last HTTP status the provider answered, when there was one. */
  readonly status?: number;
  /** How many HTTP requests the call made (0 when it failed before sending one). */
  readonly attempts?: number;
  /** For `ENGRAM_PROVIDER_DIMENSIONS`: the configured vector length. */
  readonly expectedDimensions?: number;
  /** For `ENGRAM_PROVIDER_DIMENSIONS`: the vector length the provider returned. */
  readonly receivedDimensions?: number;
  /** For `ENGRAM_PROVIDER_CONFIG`: the name of the offending setting or environment variable (never its value). */
  readonly setting?: string;
  /** The sanitised cause (never a raw driver error, body or URL). */
  readonly cause?: unknown;
}

const RETRYABLE_CODES: ReadonlySet<EngramProviderErrorCode> = new Set([
  'ENGRAM_PROVIDER_RATE_LIMITED',
  'ENGRAM_PROVIDER_UNAVAILABLE',
  'ENGRAM_PROVIDER_TIMEOUT',
]);

/**
 * The one error type of this package.
 *
 * A caller abort has `name === 'AbortError'` (like `fetch`), so generic abort checks recognise it and a gateway never
 * counts it as a provider failure; every other error has `name === 'EngramProviderError'`. Messages and fields never
 * contain the API key, a request or response body, a URL or any text that was sent to the model.
 */
export class EngramProviderError extends EngramError<EngramProviderErrorCode> {
  /** The endpoint the failing call went to. */
  readonly operation: ProviderOperation;
  /** The last HTTP status the provider answered, when there was one. */
  readonly status: number | undefined;
  /** How many HTTP requests the call made. */
  readonly attempts: number;
  /** For `ENGRAM_PROVIDER_DIMENSIONS`: the configured vector length. */
  readonly expectedDimensions: number | undefined;
  /** For `ENGRAM_PROVIDER_DIMENSIONS`: the vector length the provider returned. */
  readonly receivedDimensions: number | undefined;
  /** For `ENGRAM_PROVIDER_CONFIG`: the name of the offending setting or environment variable. */
  readonly setting: string | undefined;

  constructor(code: EngramProviderErrorCode, message: string, details: EngramProviderErrorDetails) {
    // `retryable`: whether trying again later may succeed (rate limiting, unavailability, timeouts).
    super(code === 'ENGRAM_PROVIDER_ABORTED' ? 'AbortError' : 'EngramProviderError', code, message, {
      cause: details.cause,
      retryable: RETRYABLE_CODES.has(code),
    });
    this.operation = details.operation;
    this.status = details.status;
    this.attempts = details.attempts ?? 0;
    this.expectedDimensions = details.expectedDimensions;
    this.receivedDimensions = details.receivedDimensions;
    this.setting = details.setting;
  }
}

/** Guard for {@link EngramProviderError} that checks `code` and `name`, not `instanceof`. */
export function isEngramProviderError(value: unknown): value is EngramProviderError {
  return hasEngramErrorShape(value, ['EngramProviderError', 'AbortError'], ENGRAM_PROVIDER_ERROR_CODES);
}
