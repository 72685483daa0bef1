/**
 * The one error type of `@engram/maintenance`. Messages are fixed per code: they never carry memory content,
 * prompts, model output, vectors or provider error text. The underlying error, when there is one, is kept as
 * `cause` only.
 */
import { checkAgentId, checkAgentIdForm } from '@engram/contracts';
import { EngramError, engramErrorCode, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable error codes of background memory work. */
export const ENGRAM_MAINTENANCE_ERROR_CODES = [
  'ENGRAM_MAINTENANCE_RATE_LIMITED',
  'ENGRAM_MAINTENANCE_CAPACITY',
  'ENGRAM_MAINTENANCE_DEADLINE',
  'ENGRAM_MAINTENANCE_QUEUE_TIMEOUT',
  'ENGRAM_MAINTENANCE_ABORTED',
  'ENGRAM_MAINTENANCE_INVALID_MODEL_OUTPUT',
  'ENGRAM_MAINTENANCE_PROVIDER_FAILED',
  'ENGRAM_MAINTENANCE_RETRIEVAL_FAILED',
  'ENGRAM_MAINTENANCE_PROFILE_MISMATCH',
  'ENGRAM_MAINTENANCE_INVALID_CONFIG',
  'ENGRAM_MAINTENANCE_CLOSED',
  'ENGRAM_MAINTENANCE_INVALID_INPUT',
] as const;

/** A stable maintenance error code. */
export type EngramMaintenanceErrorCode = (typeof ENGRAM_MAINTENANCE_ERROR_CODES)[number];

const CODE_SET: ReadonlySet<string> = new Set<string>(ENGRAM_MAINTENANCE_ERROR_CODES);

/**
 * Codes of local rejections (the request never reached the provider, or the caller gave up): never provider
 * failures. `QUEUE_TIMEOUT` is a deadline that fired while the request still waited for a gateway slot.
 */
export const LOCAL_REJECTION_CODES: readonly EngramMaintenanceErrorCode[] = Object.freeze([
  'ENGRAM_MAINTENANCE_RATE_LIMITED',
  'ENGRAM_MAINTENANCE_CAPACITY',
  'ENGRAM_MAINTENANCE_QUEUE_TIMEOUT',
  'ENGRAM_MAINTENANCE_ABORTED',
  'ENGRAM_MAINTENANCE_CLOSED',
]);

/** The base error of `@engram/maintenance`: an `EngramError` with a stable `code` and a `cause`. */
export class EngramMaintenanceError extends EngramError<EngramMaintenanceErrorCode> {
  constructor(code: EngramMaintenanceErrorCode, message: string, options: { readonly cause?: unknown } = {}) {
    super('EngramMaintenanceError', code, message, options);
  }
}

/** True when `value` is an `EngramMaintenanceError` (checked by `name` and `code`, so it works across copies). */
export function isEngramMaintenanceError(value: unknown): value is EngramMaintenanceError {
  return hasEngramErrorShape(value, ['EngramMaintenanceError'], CODE_SET);
}

/** True when the error is a local rejection (rate limit, capacity, queue timeout, abort, closed) rather than a provider failure. */
export function isLocalRejection(value: unknown): boolean {
  return isEngramMaintenanceError(value) && LOCAL_REJECTION_CODES.includes(value.code);
}

/** True when the error is the store's compare-and-set conflict (`ENGRAM_STORE_REVISION_CONFLICT`). */
export function isRevisionConflict(value: unknown): boolean {
  return engramErrorCode(value) === 'ENGRAM_STORE_REVISION_CONFLICT';
}

/**
 * Checks an agent, session or user id a caller passed, by the contracts rules the store enforces: well formed and
 * in normal form (NFC, no surrounding whitespace). A caller's mistake is an `ENGRAM_MAINTENANCE_INVALID_INPUT`
 * naming the argument and the problem, never the value, and is thrown before anything is read or written.
 */
export function checkIdArgument(value: unknown, argument: 'agentId' | 'sessionId' | 'userId'): void {
  const problem = checkAgentId(value) ?? checkAgentIdForm(value);
  if (problem !== null) {
    throw new EngramMaintenanceError('ENGRAM_MAINTENANCE_INVALID_INPUT', `Invalid ${argument}: ${problem}.`);
  }
}

/** An `ENGRAM_MAINTENANCE_ABORTED` error carrying the signal's reason as cause. */
export function abortedError(signal?: AbortSignal): EngramMaintenanceError {
  return new EngramMaintenanceError('ENGRAM_MAINTENANCE_ABORTED', 'The operation was aborted.', {
    cause: signal?.reason,
  });
}
