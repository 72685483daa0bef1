import { EngramError, hasEngramErrorShape } from '@engram/contracts/errors';

/** Stable codes of {@link EngramEvalError}. */
export const ENGRAM_EVAL_ERROR_CODES: readonly [
  'ENGRAM_EVAL_INVALID_FIXTURE',
  'ENGRAM_EVAL_NO_RELEVANT_IDS',
  'ENGRAM_EVAL_INVALID_METRIC_ARGUMENT',
  'ENGRAM_EVAL_INVALID_DATASET',
  'ENGRAM_EVAL_INVALID_ARGUMENTS',
  'ENGRAM_EVAL_RETRIEVAL_FAILED',
  'ENGRAM_EVAL_EMBEDDER_UNAVAILABLE',
  'ENGRAM_EVAL_RERANKER_UNAVAILABLE',
] = [
  'ENGRAM_EVAL_INVALID_FIXTURE',
  'ENGRAM_EVAL_NO_RELEVANT_IDS',
  'ENGRAM_EVAL_INVALID_METRIC_ARGUMENT',
  'ENGRAM_EVAL_INVALID_DATASET',
  'ENGRAM_EVAL_INVALID_ARGUMENTS',
  'ENGRAM_EVAL_RETRIEVAL_FAILED',
  'ENGRAM_EVAL_EMBEDDER_UNAVAILABLE',
  'ENGRAM_EVAL_RERANKER_UNAVAILABLE',
] as const;

/** One stable error code of this package. */
export type EngramEvalErrorCode = (typeof ENGRAM_EVAL_ERROR_CODES)[number];

/**
 * The one error type of this package.
 *
 * Messages name what is wrong (a field path, an id, a count) and never quote memory text or query text.
 * `issues` lists every problem found when validation collects more than one.
 */
export class EngramEvalError extends EngramError<EngramEvalErrorCode> {
  /** Every problem found, for validation errors (empty otherwise). */
  readonly issues: readonly string[];

  constructor(
    code: EngramEvalErrorCode,
    message: string,
    options: { readonly cause?: unknown; readonly issues?: readonly string[] } = {},
  ) {
    super('EngramEvalError', code, message, options);
    this.issues = Object.freeze([...(options.issues ?? [])]);
  }
}

/** Guard for {@link EngramEvalError} that checks `code` and `name`, not `instanceof`. */
export function isEngramEvalError(value: unknown): value is EngramEvalError {
  return hasEngramErrorShape(value, ['EngramEvalError'], ENGRAM_EVAL_ERROR_CODES);
}
