/**
 * The identifier rules: agent ids (also session ids) and memory ids. The store enforces them on every write
 * and read; the retriever, the tools, the collector and the CLI check them with these same functions, and
 * each turns a problem into its own typed error.
 */
import { hasControlCharacter, isWellFormedText } from './text.js';

/** Maximum length of an agent id or a session id, in UTF-16 code units. */
export const MAX_AGENT_ID_LENGTH = 256;
/** Maximum length of a memory id, in UTF-16 code units. */
export const MAX_MEMORY_ID_LENGTH = 128;

/** Why an identifier is refused. */
export const IDENTIFIER_PROBLEMS = [
  'notString',
  'blank',
  'tooLong',
  'controlCharacter',
  'loneSurrogate',
] as const;
/** An identifier problem. */
export type IdentifierProblem = (typeof IDENTIFIER_PROBLEMS)[number];

function checkIdentifier(value: unknown, maxLength: number): IdentifierProblem | null {
  if (typeof value !== 'string') return 'notString';
  if (value.trim().length === 0) return 'blank';
  if (value.length > maxLength) return 'tooLong';
  if (hasControlCharacter(value)) return 'controlCharacter';
  if (!isWellFormedText(value)) return 'loneSurrogate';
  return null;
}

/**
 * Checks an agent id (or a session id): a non-blank string of at most {@link MAX_AGENT_ID_LENGTH} code units,
 * without control characters (NUL included) or lone surrogates. Returns the problem, or null when valid.
 */
export function checkAgentId(value: unknown): IdentifierProblem | null {
  return checkIdentifier(value, MAX_AGENT_ID_LENGTH);
}

/** True when {@link checkAgentId} finds no problem. */
export function isValidAgentId(value: unknown): value is string {
  return checkAgentId(value) === null;
}

/** Checks a memory id: the agent-id rule with a limit of {@link MAX_MEMORY_ID_LENGTH} code units. */
export function checkMemoryId(value: unknown): IdentifierProblem | null {
  return checkIdentifier(value, MAX_MEMORY_ID_LENGTH);
}
