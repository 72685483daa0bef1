/**
 * What a framework adapter (the AI SDK middleware and tools, the LangChain retriever, history and tools) checks
 * its options and scopes with, so every adapter refuses the same mistakes with the facade's own codes and
 * messages: an unknown key or a value that is not a string is `ENGRAM_MEMORY_INVALID_INPUT` naming the key (never
 * its value), before anything is read or recorded.
 */
import { invalidInput } from './errors.js';
import { checkOptions } from './items.js';

export { invalidInput } from './errors.js';

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

/** The keys of a scope. */
export const SCOPE_KEYS: readonly (keyof EngramScope)[] = ['agentId', 'userId', 'sessionId'];

/**
 * An adapter's options object: a plain object with only the `known` keys (an unknown one is refused naming the
 * option most likely meant, `aliases` first).
 */
export function checkOptionKeys(
  value: unknown,
  name: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidInput(`${name} must be an object`);
  }
  return checkOptions(value as Record<string, unknown>, name, known, aliases);
}

/**
 * The scope an object names (its `agentId`, `userId` and `sessionId`), each a string when present. Its other
 * keys must be `known` (default: a scope's only); `null` when the caller checked them with
 * {@link checkOptionKeys} already (an adapter's options object that carries a scope).
 */
export function checkScope(
  value: unknown,
  name: string,
  known: readonly string[] | null = SCOPE_KEYS,
): EngramScope {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidInput(`${name} must be an object ({ agentId?, userId?, sessionId? })`);
  }
  if (known !== null) checkOptionKeys(value, name, known);
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
