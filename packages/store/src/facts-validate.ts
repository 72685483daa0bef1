/**
 * The input rules of the facts slice (forget options, conflict states and reasons), shared by every store
 * that implements the port: a store validates with these, so the SQLite and the PostgreSQL store refuse the
 * same input with the same message.
 */
import { hasControlCharacter, isWellFormedText } from '@engram/contracts/rules';
import { invalidInput } from './errors.js';
import type { ForgetOptions } from './facts-types.js';

/** The states of a conflict link. */
export const CONFLICT_STATES: ReadonlySet<string> = new Set(['open', 'resolved', 'dismissed']);
/** Why two facts contradict each other. */
export const CONFLICT_REASONS: ReadonlySet<string> = new Set(['number', 'negation', 'entity']);

function boundedText(value: unknown, field: string, max: number): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > max) {
    throw invalidInput(`${field} must be a non-empty string of at most ${max} characters`);
  }
  if (hasControlCharacter(value.replace(/[\n\t]/g, ' ')) || !isWellFormedText(value)) {
    throw invalidInput(`${field} contains control characters or a lone surrogate`);
  }
  return value;
}

/** Who forgets and why (`caller` and no reason by default); throws invalid input otherwise. */
export function forgetOptions(options: ForgetOptions | undefined): { actor: string; reason: string | null } {
  if (options === undefined) return { actor: 'caller', reason: null };
  if (typeof options !== 'object' || options === null) throw invalidInput('options must be an object');
  return {
    actor: boundedText(options.actor, 'options.actor', 64) ?? 'caller',
    reason: boundedText(options.reason, 'options.reason', 500),
  };
}
