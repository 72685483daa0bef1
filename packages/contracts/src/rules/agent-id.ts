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

/** Why an agent id (or session id) is refused for its form, beyond {@link checkAgentId}. */
export const AGENT_ID_FORM_PROBLEMS = ['surroundingWhitespace', 'notNormalized'] as const;
/** An agent-id form problem. */
export type AgentIdFormProblem = (typeof AGENT_ID_FORM_PROBLEMS)[number];

/**
 * The normal-form rule of agent ids (and session ids): stores compare ids byte for byte, so `"alice "` and
 * `"alice"`, or the NFD and NFC spellings of `"é"`, would be different agents. An id with leading or trailing
 * whitespace (`surroundingWhitespace`) or not in Unicode NFC (`notNormalized`) is refused, never silently
 * normalised: an id already stored stays addressable exactly as it was written. Returns null for a string in
 * normal form and for anything {@link checkAgentId} refuses (check that first).
 */
export function checkAgentIdForm(value: unknown): AgentIdFormProblem | null {
  if (typeof value !== 'string' || !isWellFormedText(value)) return null;
  if (value.trim() !== value) return 'surroundingWhitespace';
  if (value.normalize('NFC') !== value) return 'notNormalized';
  return null;
}
