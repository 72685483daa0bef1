/**
 * The user scope of a call (issue: users are boundaries). A memory without a user is the agent's own, shared
 * by all its users; a call made for a user sees those and that user's own, never another user's, and changes
 * only that user's own. Reads with a filter say it with `MemoryFilter.forUser`; reads and writes by id take a
 * {@link UserScope}: another user's memory is then not found, and so is, for a write, the agent's shared one.
 */
import { invalidInput } from './errors.js';
import { validateAgentId } from './validate.js';

/** The user a call acts for. */
export interface UserScope {
  /**
   * Visibility for this user: the agent's own memories (no user) and this user's; another user's memory is
   * not found. Without it the call acts for the whole agent.
   */
  readonly forUser?: string;
}

/** The checked user of a scope: null for the whole agent; invalid input throws. */
export function checkUserScope(scope: unknown): string | null {
  if (scope === undefined) return null;
  if (typeof scope !== 'object' || scope === null) throw invalidInput('scope must be an object');
  const forUser = (scope as UserScope).forUser;
  return forUser === undefined ? null : validateAgentId(forUser, 'forUser');
}

/**
 * The checked user of call options that may carry `forUser` (revalidate's, forget's): null for the whole
 * agent; invalid input throws (options that are not an object are left to the call's own option check).
 */
export function checkOptionsUser(options: UserScope | undefined): string | null {
  if (typeof options !== 'object' || options === null || options.forUser === undefined) return null;
  return checkUserScope({ forUser: options.forUser });
}

/** Whether a row of this user is visible to a call for `forUser` (null: the whole agent). */
export function visibleToUser(rowUserId: string | null, forUser: string | null): boolean {
  return forUser === null || rowUserId === null || rowUserId === forUser;
}

/**
 * Whether a call for `forUser` may change a row of this user (null: the whole agent may change any row). A
 * user changes only that user's own memories: the agent's own, shared by all its users, are read-only to it
 * (not found), so one user's call can never rewrite or forget what every other user sees.
 */
export function writableByUser(rowUserId: string | null, forUser: string | null): boolean {
  return forUser === null || rowUserId === forUser;
}

/**
 * The checked user of a scoped write that also writes a new row (a supersede's replacement, a merge's result):
 * the new row may be the agent's own or that user's only, never another user's; invalid input otherwise.
 */
export function checkWriteScope(scope: unknown, newUserId: string | null, field: string): string | null {
  const forUser = checkUserScope(scope);
  if (forUser !== null && newUserId !== null && newUserId !== forUser) {
    throw invalidInput(`${field}.userId must be the user of the scope`);
  }
  return forUser;
}
