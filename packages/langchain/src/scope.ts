/**
 * The scope the retriever, the history and the tools act in: the agent, the end user the agent serves, and (for
 * the history) the conversation. Checked strictly, as the memory checks its own options: an unknown key or a value that
 * is not a string is `ENGRAM_MEMORY_INVALID_INPUT` naming the key (never its value), before anything is read or
 * recorded.
 */
import { EngramMemoryError } from '@engram/memory';

/**
 * Who a call is for. With a `userId` it sees the agent's own memories and that user's, never another user's, and
 * everything it writes carries that user; without one it acts for the whole agent. `sessionId` names a
 * conversation. Each is left out to take the default (the memory's agent and user); a key that is present must
 * be a string.
 */
export interface EngramScope {
  readonly agentId?: string;
  readonly userId?: string;
  readonly sessionId?: string;
}

export const SCOPE_KEYS: readonly (keyof EngramScope)[] = ['agentId', 'userId', 'sessionId'];

/** Other libraries' names for the scope's keys. */
const SCOPE_ALIASES: Readonly<Record<string, string>> = {
  user: 'userId',
  user_id: 'userId',
  agent: 'agentId',
  agent_id: 'agentId',
  session: 'sessionId',
  session_id: 'sessionId',
  thread_id: 'sessionId',
  threadid: 'sessionId',
  run_id: 'sessionId',
};

/** A caller's mistake: nothing was read or written. */
export function invalidInput(message: string, cause?: unknown): EngramMemoryError {
  return new EngramMemoryError(
    'ENGRAM_MEMORY_INVALID_INPUT',
    message,
    cause === undefined ? undefined : { cause },
  );
}

/** A key as it may appear in an error: an identifier-like key, else a placeholder (a key may be anything). */
function printable(key: string): string {
  return /^[A-Za-z_$][\w$-]{0,63}$/.test(key) ? key : '<unprintable key>';
}

/**
 * Refuses a key not in `known`, naming the key and the option most likely meant (an alias from `aliases`, or a
 * known key spelt in another case or with underscores).
 */
export function checkKeys(
  value: object,
  name: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const folded = key.toLowerCase().replaceAll('_', '');
    const meant =
      aliases[key] ?? aliases[key.toLowerCase()] ?? known.find((k) => k.toLowerCase() === folded) ?? null;
    throw invalidInput(
      `${name} has an unknown option "${printable(key)}"${meant === null ? '' : ` (did you mean "${meant}"?)`}`,
    );
  }
}

/** An options object: a plain object with only the `known` keys. */
export function checkOptions(
  value: unknown,
  name: string,
  known: readonly string[],
): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidInput(`${name} must be an object`);
  }
  checkKeys(value, name, known, SCOPE_ALIASES);
  return value as Record<string, unknown>;
}

/**
 * The scope named by an options object (its `agentId`, `userId` and `sessionId`; the other keys are checked by
 * {@link checkOptions}): each a string when present.
 */
export function checkScope(value: unknown, name: string): EngramScope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidInput(`${name} must be an object ({ agentId?, userId?, sessionId? })`);
  }
  const scope = value as Record<string, unknown>;
  const out: { agentId?: string; userId?: string; sessionId?: string } = {};
  for (const key of SCOPE_KEYS) {
    if (!(key in scope)) continue;
    const v = scope[key];
    // Present but not a string (undefined included): a scope function that lost the user must not act for all.
    if (typeof v !== 'string') {
      throw invalidInput(`${name}.${key} must be a string (leave the key out for the default)`);
    }
    // The memory refuses such an id only when it writes it: refused here, before the call reads or records.
    if (v.trim() !== v) throw invalidInput(`${name}.${key} must not start or end with whitespace`);
    if (v.normalize('NFC') !== v) throw invalidInput(`${name}.${key} must be in Unicode NFC`);
    out[key] = v;
  }
  return out;
}

/** The memory's options for a scope: `agentId` and `userId` where given. */
export function memoryScope(scope: EngramScope): { readonly agentId?: string; readonly userId?: string } {
  return {
    ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }),
    ...(scope.userId === undefined ? {} : { userId: scope.userId }),
  };
}
