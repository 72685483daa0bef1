/**
 * Chat entries (messages, tool calls, tool results) as events of a session's log, and back. An entry's id is kept
 * in the event's metadata (`id`); a tool call's arguments too (`input`, when they are a JSON object), so the
 * ingested memory is rendered `tool <name> <arguments>` and the paths it names become tags. A clear marker is an
 * empty system message whose metadata says `clear`: it ends the history `messages` reads, and is never shown.
 */
import type { EventInput, EventRecord, MemoryStore } from '@engram/store';
import type { ChatMessage, LoggedMessage } from './types.js';

/** Entries of the log's tail searched for an id already logged. */
export const ID_WINDOW = 1000;

/**
 * What a call writes on each entry it logs: its user, and the tags and metadata the entry's memory carries
 * (kept in the event's metadata as `memory`, which the ingestor copies to the `event` memory).
 */
export interface EntryScope {
  readonly userId: string | null;
  readonly tags?: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** The event a chat entry is logged as, at `seq`. */
export function entryEvent(message: ChatMessage, seq: number, scope?: EntryScope): EventInput {
  const type = message.type ?? 'message';
  const metadata: Record<string, unknown> = {};
  if (message.id !== undefined) metadata.id = message.id;
  if (type === 'tool_call') metadata.input = argumentsObject(message.content);
  if (scope?.tags !== undefined || scope?.metadata !== undefined) {
    metadata.memory = {
      ...(scope.tags === undefined ? {} : { tags: scope.tags }),
      ...(scope.metadata === undefined ? {} : { metadata: scope.metadata }),
    };
  }
  return {
    seq,
    type,
    role: message.role,
    content: message.content,
    ...(message.toolName === undefined ? {} : { toolName: message.toolName }),
    ...(Object.keys(metadata).length === 0 ? {} : { metadata }),
    ...(scope?.userId == null ? {} : { userId: scope.userId }),
  };
}

/** Longest tool-call arguments also kept as an object in the metadata (the content keeps them whole). */
const MAX_INPUT_CHARS = 16_000;

/** A tool call's arguments as an object ({} when they are not a JSON object, or too long to copy). */
function argumentsObject(content: string): Record<string, unknown> {
  if (content.length > MAX_INPUT_CHARS) return {};
  try {
    const parsed: unknown = JSON.parse(content);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The marker `clearMessages` appends at `seq` (for a user: it clears that user's view of the session). */
export function clearMarker(seq: number, userId: string | null): EventInput {
  return {
    seq,
    type: 'message',
    role: 'system',
    content: '',
    metadata: { clear: true },
    ...(userId === null ? {} : { userId }),
  };
}

/** True for a clear marker. */
export function isClearMarker(event: EventRecord): boolean {
  return event.type === 'message' && event.content === '' && event.metadata.clear === true;
}

/** The id an event was logged with, else null. */
export function idOf(event: EventRecord): string | null {
  return typeof event.metadata.id === 'string' ? event.metadata.id : null;
}

/** The events after the last clear marker that applies to the view of `userId` (null: the whole agent). */
export function sinceClear(events: readonly EventRecord[], userId: string | null): readonly EventRecord[] {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const event = events[i];
    // A user's clear starts that user's view afresh; the whole agent's view starts afresh on its own clears.
    if (event !== undefined && isClearMarker(event) && (event.userId === null || event.userId === userId))
      return events.slice(i + 1);
  }
  return events;
}

/** A logged event as the facade returns it. */
export function loggedEntry(event: EventRecord): LoggedMessage {
  return {
    seq: event.seq,
    type: event.type,
    role: event.role as LoggedMessage['role'],
    content: event.content,
    toolName: event.toolName,
    id: idOf(event),
    userId: event.userId,
    createdAt: event.createdAt,
  };
}

/** Events read per page when looking back through a session for one user's entries. */
const PAGE = 1000;
/** Most events looked back through for one user's latest entries (a session many users write to). */
const MAX_LOOK_BACK = 20_000;

/**
 * The latest `count` events of a session that `visible` keeps, oldest first, from the session's events up to
 * `lastSeq`: read backwards a page at a time, so another user's entries interleaved in the session never push
 * this user's out of the window (at most {@link MAX_LOOK_BACK} events are looked at).
 */
export async function latestEvents(
  store: Pick<MemoryStore, 'readEvents'>,
  agentId: string,
  sessionId: string,
  lastSeq: number,
  count: number,
  visible: (event: EventRecord) => boolean,
): Promise<readonly EventRecord[]> {
  const kept: EventRecord[] = [];
  let to = lastSeq;
  while (to >= 1 && kept.length < count && lastSeq - to < MAX_LOOK_BACK) {
    const from = Math.max(1, to - PAGE + 1);
    const page = (await store.readEvents(agentId, sessionId, from, to)).filter(visible);
    kept.unshift(...page);
    to = from - 1;
  }
  return kept.slice(-count);
}
