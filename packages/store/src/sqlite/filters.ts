/**
 * Filter arguments shared by listing and search: kinds and tags, validated and encoded as JSON arrays for
 * `json_each`.
 */
import { invalidInput } from '../errors.js';
import type { MemoryKind } from '../types.js';
import { validateKind, validateTag } from '../validate.js';

/** The kinds filter as a JSON array (deduplicated); `fallback` when omitted. */
export function kindsFilter(
  kinds: readonly MemoryKind[] | undefined,
  fallback: readonly MemoryKind[],
): string {
  if (kinds === undefined) return JSON.stringify(fallback);
  if (!Array.isArray(kinds)) throw invalidInput('kinds must be an array');
  return JSON.stringify([...new Set(kinds.map((k) => validateKind(k, 'kinds entry')))]);
}

/** The tags filter (every tag required) as a JSON array (deduplicated, at most 64); `[]` when omitted. */
export function tagsFilter(tags: readonly string[] | undefined): string {
  if (tags === undefined) return '[]';
  if (!Array.isArray(tags)) throw invalidInput('tags must be an array');
  if (tags.length > 64) throw invalidInput('tags filter has more than 64 entries');
  return JSON.stringify([...new Set(tags.map((t) => validateTag(t, 'tags filter entry')))]);
}
