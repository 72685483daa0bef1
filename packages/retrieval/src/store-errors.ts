import type { DegradationCause } from './execution.js';

/** The store-related causes a failed or degraded call can carry. */
export type StoreFailureCause = Extract<
  DegradationCause,
  'storeUnusable' | 'storeTimeout' | 'storeError' | 'ftsUnavailable' | 'vectorCold'
>;

const TIMEOUT = /BUSY|LOCKED|TIMEOUT|RETRYABLE/;
const UNUSABLE =
  /CLOSED|UNUSABLE|CORRUPT|NATIVE|SCHEMA|FINGERPRINT|MIGRATION|OPEN_FAILED|READONLY|ENCRYPTION/;

/** The stable `code` of an error-like value, or undefined. Never reads the message. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Classifies a store rejection by its stable code (never by its message): busy/locked → `storeTimeout`,
 * closed/corrupt/schema/fingerprint/native/encryption key → `storeUnusable`, a code naming FTS (a store port
 * whose full-text index is unavailable) → `ftsUnavailable`, an unavailable vector index → `vectorCold`,
 * anything else → `storeError`.
 */
export function classifyStoreError(error: unknown): StoreFailureCause {
  const code = errorCode(error) ?? '';
  if (code === 'ENGRAM_STORE_VECTOR_UNAVAILABLE') return 'vectorCold';
  if (code.includes('FTS')) return 'ftsUnavailable';
  if (TIMEOUT.test(code)) return 'storeTimeout';
  if (UNUSABLE.test(code)) return 'storeUnusable';
  return 'storeError';
}
