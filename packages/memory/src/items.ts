/** Input checks of the facade (a caller's mistake is a typed error before anything is read) and row mapping. */
import { checkAgentId, checkAgentIdForm, checkTag, MAX_TAGS, toWellFormedText } from '@engram/contracts';
import type { MemoryRecord } from '@engram/store';
import { MAX_METADATA_CHARS } from '@engram/store';
import { invalidInput } from './errors.js';
import type { ChatMessage, MemoryItem } from './types.js';

/** The facade's view of a stored row. */
export function toItem(record: MemoryRecord): MemoryItem {
  return {
    id: record.id,
    agentId: record.agentId,
    kind: record.kind,
    content: record.content,
    tags: record.tags,
    importance: record.importance,
    lifecycle: record.lifecycle,
    supersededBy: record.supersededBy,
    sessionId: record.sessionId,
    userId: record.userId,
    metadata: record.metadata,
    validFrom: record.validFrom,
    validTo: record.validTo,
    embedded: record.embeddingState === 'ready',
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/**
 * An options argument: undefined or a plain object with only `known` keys. An unknown key is refused naming it
 * and the option most likely meant (`aliases` first: a caller's own names for its options).
 */
export function checkOptions<T extends object>(
  options: T | undefined,
  name: string,
  known: readonly (keyof T & string)[],
  aliases: Readonly<Record<string, string>> = {},
): Partial<T> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidInput(`${name} must be an object`);
  }
  for (const key of Object.keys(options)) {
    if ((known as readonly string[]).includes(key)) continue;
    const meant = optionMeant(key, known, aliases);
    throw invalidInput(
      `${name} has an unknown option "${printableKey(key)}"${meant === null ? '' : ` (did you mean "${meant}"?)`}`,
    );
  }
  return options;
}

/** Names other memory libraries use for an option of ours. */
const OPTION_ALIASES: Readonly<Record<string, string>> = {
  user_id: 'userId',
  userid: 'userId',
  user: 'userId',
  agent_id: 'agentId',
  agentid: 'agentId',
  agent: 'agentId',
  session_id: 'sessionId',
  sessionid: 'sessionId',
  run_id: 'sessionId',
  thread_id: 'sessionId',
  threadid: 'sessionId',
  runid: 'sessionId',
  session: 'sessionId',
  filters: 'filter',
  where: 'filter',
  threshold: 'minScore',
  min_score: 'minScore',
  score_threshold: 'minScore',
  top_k: 'limit',
  topk: 'limit',
  k: 'limit',
  max_results: 'limit',
  as_of: 'asOf',
  include_history: 'includeHistory',
  include_inactive: 'includeInactive',
  after_id: 'afterId',
};

/** The known option an unknown key most likely meant: a known alias, the same word in another case, or one edit away. */
function optionMeant(
  key: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>>,
): string | null {
  const alias = aliases[key] ?? aliases[key.toLowerCase()] ?? OPTION_ALIASES[key.toLowerCase()];
  if (alias !== undefined && known.includes(alias)) return alias;
  const folded = key.toLowerCase().replace(/[_-]/g, '');
  const same = known.find((k) => k.toLowerCase() === folded);
  if (same !== undefined) return same;
  return known.find((k) => editDistanceAtMostOne(k.toLowerCase(), key.toLowerCase())) ?? null;
}

function editDistanceAtMostOne(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  let j = 0;
  let edits = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      i += 1;
      j += 1;
      continue;
    }
    edits += 1;
    if (edits > 1) return false;
    if (a.length > b.length) i += 1;
    else if (b.length > a.length) j += 1;
    else {
      i += 1;
      j += 1;
    }
  }
  return edits + (a.length - i) + (b.length - j) <= 1;
}

/** An option's name as an error may show it: the caller's key, bounded and stripped of controls. */
function printableKey(key: string): string {
  const clean = key.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

/** The agent a call acts for: the one it names, else the memory's; the store's agent-id rule applies. */
export function agentOf(options: { readonly agentId?: unknown } | undefined, fallback: string): string {
  const agentId = options?.agentId ?? fallback;
  const problem = checkAgentId(agentId) ?? checkAgentIdForm(agentId as string);
  if (problem !== null) throw invalidInput(`agentId is invalid (${problem})`);
  return agentId as string;
}

/** A non-empty string argument (ids, queries, texts). */
export function checkText(value: unknown, name: string): string {
  if (typeof value !== 'string') throw invalidInput(`${name} must be a string`);
  if (value.trim() === '') throw invalidInput(`${name} is empty`);
  return value;
}

/** A session id: a non-empty string of at most 256 characters without control characters. */
export function checkSession(value: unknown): string {
  if (value === undefined) return 'default';
  if (typeof value !== 'string' || value.trim() === '' || value.length > 256 || /\p{Cc}/u.test(value)) {
    throw invalidInput('sessionId must be a non-empty string of at most 256 characters');
  }
  return value;
}

const ROLES: ReadonlySet<string> = new Set(['user', 'assistant', 'system', 'tool']);
const TYPES: ReadonlySet<string> = new Set(['message', 'tool_call', 'tool_result']);
/** The role each entry type is logged with (a message takes any role). */
const TOOL_ROLE: Readonly<Record<string, string>> = { tool_call: 'assistant', tool_result: 'tool' };

/** A short name (tool name, id): a non-empty string of at most 256 characters without control characters. */
function isShortName(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '' && value.length <= 256 && !/\p{Cc}/u.test(value);
}

/**
 * A list of chat messages: each `{ role, content }` with a known role and string content; a tool call or result
 * has its type's role, a tool call names its tool, a message names none; ids and tool names are short names.
 */
export function checkMessages(value: readonly unknown[]): readonly ChatMessage[] {
  if (value.length === 0) throw invalidInput('messages is empty');
  value.forEach((message, i) => {
    if (typeof message !== 'object' || message === null)
      throw invalidInput(`messages[${i}] must be an object`);
    const { role, content, type, toolName, id } = message as Record<string, unknown>;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw invalidInput(`messages[${i}].role must be user, assistant, system or tool`);
    }
    if (typeof content !== 'string') throw invalidInput(`messages[${i}].content must be a string`);
    if (type !== undefined && (typeof type !== 'string' || !TYPES.has(type))) {
      throw invalidInput(`messages[${i}].type must be message, tool_call or tool_result`);
    }
    const expectedRole = typeof type === 'string' ? TOOL_ROLE[type] : undefined;
    if (expectedRole !== undefined && role !== expectedRole) {
      throw invalidInput(`messages[${i}].role must be ${expectedRole} for a ${String(type)}`);
    }
    if (toolName !== undefined && !isShortName(toolName)) {
      throw invalidInput(`messages[${i}].toolName must be a non-empty string of at most 256 characters`);
    }
    if (type === 'tool_call' && toolName === undefined)
      throw invalidInput(`messages[${i}].toolName is missing`);
    if ((type === undefined || type === 'message') && toolName !== undefined) {
      throw invalidInput(`messages[${i}].toolName is only for a tool call or result`);
    }
    if (id !== undefined && !isShortName(id)) {
      throw invalidInput(`messages[${i}].id must be a non-empty string of at most 256 characters`);
    }
  });
  return value as readonly ChatMessage[];
}

/**
 * The messages with each content cut to `max` UTF-16 units (never inside a surrogate pair) and every lone
 * surrogate replaced, or as given when `max` is undefined. A recorder that must never fail a model call asks
 * for this rather than a refusal of a long message.
 */
export function cutMessages(messages: readonly ChatMessage[], max: unknown): readonly ChatMessage[] {
  if (max === undefined) return messages;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 65_536) {
    throw invalidInput('maxContentChars must be an integer from 1 to 65536');
  }
  return messages.map((message) => {
    let content = message.content;
    if (content.length > max) {
      content = content.slice(0, max);
      const last = content.charCodeAt(content.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) content = content.slice(0, -1);
    }
    content = toWellFormedText(content);
    return content === message.content ? message : { ...message, content };
  });
}

/** What the log's tail holds of an entry, to compare a resent one with. */
export interface LoggedEntry {
  readonly role: string;
  readonly content: string;
  readonly type?: string;
  readonly toolName?: string | null;
  readonly id?: string | null;
}

/** The same entry: the same type and id when both carry an id, else the same type, role, tool and content. */
export function sameEntry(stored: LoggedEntry, next: ChatMessage): boolean {
  const storedType = stored.type ?? 'message';
  if (storedType !== (next.type ?? 'message')) return false;
  if (stored.id != null && next.id !== undefined) return stored.id === next.id;
  return (
    stored.role === next.role &&
    stored.content === next.content &&
    (stored.toolName ?? null) === (next.toolName ?? null)
  );
}

/**
 * How many of `incoming`'s first messages repeat the end of the stored log — a chat application that sends the
 * whole conversation every turn appends only what is new. The longest overlap wins.
 */
export function overlapWithTail(tail: readonly LoggedEntry[], incoming: readonly ChatMessage[]): number {
  for (let k = Math.min(tail.length, incoming.length); k > 0; k -= 1) {
    let same = true;
    for (let i = 0; i < k && same; i += 1) {
      const stored = tail[tail.length - k + i];
      const next = incoming[i];
      same = stored !== undefined && next !== undefined && sameEntry(stored, next);
    }
    if (same) return k;
  }
  return 0;
}

/**
 * Tag prefixes Engram writes itself and reads as instructions or keys: a challenger's `challenges:<id>`
 * (maintenance settles the conflict it names) and what the ingestor derives from an event (its `seq:` range,
 * `hash:`, `type:`, `role:`, `tool:`). A caller's tags never forge them.
 */
const RESERVED_PREFIXES: readonly string[] = ['challenges:', 'seq:', 'hash:', 'type:', 'role:', 'tool:'];

/** A caller's tag that forges one Engram writes itself, else null. */
export function reservedTag(tags: readonly unknown[] | undefined, forMessages: boolean): number | null {
  const prefixes = forMessages ? RESERVED_PREFIXES : RESERVED_PREFIXES.slice(0, 1);
  const i = (tags ?? []).findIndex((t) => typeof t === 'string' && prefixes.some((p) => t.startsWith(p)));
  return i === -1 ? null : i;
}

/** Tags a call asks every logged entry and extracted memory to carry: valid tags, not reserved, at most 32. */
export function checkEntryTags(tags: unknown): readonly string[] {
  if (!Array.isArray(tags)) throw invalidInput('tags must be an array of tags');
  if (tags.length > MAX_TAGS / 2)
    throw invalidInput(`tags of messages has more than ${MAX_TAGS / 2} entries`);
  for (const [i, tag] of tags.entries()) {
    const problem = checkTag(tag);
    if (problem !== null) throw invalidInput(`tags[${i}] is invalid (${problem})`);
  }
  const reserved = reservedTag(tags, true);
  if (reserved !== null) throw invalidInput(`tags[${reserved}] uses a prefix Engram reserves`);
  return tags as readonly string[];
}

/** Metadata a call asks every logged entry and extracted memory to carry: a plain JSON object within the cap. */
export function checkEntryMetadata(metadata: unknown): Readonly<Record<string, unknown>> {
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) {
    throw invalidInput('metadata must be a plain object');
  }
  let json: string | undefined;
  try {
    json = JSON.stringify(metadata);
  } catch {
    json = undefined;
  }
  if (json === undefined) throw invalidInput('metadata must be JSON');
  if (json.length > MAX_METADATA_CHARS)
    throw invalidInput(`metadata is over ${MAX_METADATA_CHARS} characters`);
  return JSON.parse(json) as Readonly<Record<string, unknown>>;
}
