/**
 * For the tests of this package: the store error code `fn` throws (undefined when it returns, `NOT_A_STORE_ERROR`
 * for any other throw). Named `.test.util` so that the package never ships it.
 */
import { isEngramStoreError } from './errors.js';

export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isEngramStoreError(err) ? err.code : 'NOT_A_STORE_ERROR';
  }
  return undefined;
}
