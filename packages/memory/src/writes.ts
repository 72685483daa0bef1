/** The facade's writes: deduplicated texts, messages appended to a session's log, extraction over them. */
import { contentHash } from '@engram/contracts';
import type { ExtractionTurn } from '@engram/maintenance';
import type { EventInput, MemoryRecord, NewMemory } from '@engram/store';
import { contradiction } from '@engram/tools';
import type { Engine } from './engine.js';
import {
  clearMarker,
  type EntryScope,
  entryEvent,
  ID_WINDOW,
  idOf,
  isClearMarker,
  latestEvents,
  sinceClear,
} from './entries.js';
import { overlapWithTail } from './items.js';
import type { ChatMessage } from './types.js';

/** Rows per insert transaction of a bulk write. */
const INSERT_BATCH = 500;

/** How a text is stored. */
export interface TextShape {
  readonly kind: 'fact' | 'semantic' | 'episodic';
  readonly importance: number;
  readonly tags?: readonly string[];
  readonly userId?: string;
  /** The session the text came from. */
  readonly sessionId?: string;
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** The time the text is about (default: when it is written). */
  readonly validFrom?: number;
}

/**
 * Stores texts the scope does not hold yet: a text whose normalised form (case, width, spacing) matches a
 * current memory of the agent and the same user (none: the agent's own), or an earlier text of the same call,
 * is not written again — the same text from two users is two memories. All of a batch or none of it.
 */
export async function writeTexts(
  engine: Engine,
  agentId: string,
  texts: readonly string[],
  shape: TextShape,
): Promise<{ readonly added: readonly MemoryRecord[]; readonly unchanged: readonly MemoryRecord[] }> {
  const unchanged: MemoryRecord[] = [];
  const fresh: NewMemory[] = [];
  const seen = new Set<string>();
  for (const raw of texts) {
    const content = raw.trim();
    const hash = contentHash(content);
    if (seen.has(hash)) continue;
    seen.add(hash);
    const existing = (await engine.store.findByContentHash(agentId, hash)).find(
      (r) => r.lifecycle === 'active' && r.userId === (shape.userId ?? null),
    );
    if (existing !== undefined) {
      unchanged.push(existing);
      continue;
    }
    fresh.push({
      agentId,
      kind: shape.kind,
      content,
      importance: shape.importance,
      ...(shape.tags === undefined ? {} : { tags: shape.tags }),
      ...(shape.userId === undefined ? {} : { userId: shape.userId }),
      ...(shape.sessionId === undefined ? {} : { sessionId: shape.sessionId }),
      ...(shape.metadata === undefined ? {} : { metadata: shape.metadata }),
      ...(shape.validFrom === undefined ? {} : { validFrom: shape.validFrom }),
    });
  }
  const added: MemoryRecord[] = [];
  for (let i = 0; i < fresh.length; i += INSERT_BATCH) {
    added.push(...(await engine.store.insertMemories(fresh.slice(i, i + INSERT_BATCH))));
  }
  return { added, unchanged };
}

/** Messages appended to a session's log. */
export interface LoggedMessages {
  /** How many were appended (the rest repeated the log's tail). */
  readonly appended: number;
  /** The appended messages and their sequence numbers. */
  readonly messages: readonly { readonly seq: number; readonly message: ChatMessage }[];
  /** The `event` memories ingested from them (only when asked for). */
  readonly rows: readonly MemoryRecord[];
}

/**
 * Appends messages to the session's event log — skipping those that repeat the log's tail, so a chat that sends
 * its whole history every turn logs each message once, and those whose id the session logged since its last
 * clear — and ingests them as `event` memories.
 */
export async function appendMessages(
  engine: Engine,
  agentId: string,
  sessionId: string,
  messages: readonly ChatMessage[],
  options: { readonly rows: boolean; readonly skipLogged: boolean; readonly scope: EntryScope },
): Promise<LoggedMessages> {
  const userId = options.scope.userId;
  const { store, ingestor } = engine;
  const session = (await store.listSessions(agentId)).find((s) => s.sessionId === sessionId);
  const lastSeq = session?.lastSeq ?? 0;
  // New entries follow the highest position the session reached: events erased by a user's deleteAll leave
  // the ingestion cursor past the last stored one, and an entry at a position before it would never be ingested.
  const top = Math.max(lastSeq, session?.cursor ?? 0);
  const keyed = messages.some((m) => m.id !== undefined);
  const window = (keyed ? ID_WINDOW : 0) + (options.skipLogged ? messages.length : 0);
  // What this user logged (a session another user also writes to never hides this user's messages).
  const recent =
    lastSeq === 0 || window === 0
      ? []
      : sinceClear(
          await latestEvents(store, agentId, sessionId, lastSeq, window, (e) => e.userId === userId),
          userId,
        );
  const tail = options.skipLogged ? recent.slice(-messages.length) : [];
  const skip = overlapWithTail(
    tail.map((e) => ({ role: e.role, content: e.content, type: e.type, toolName: e.toolName, id: idOf(e) })),
    messages,
  );
  const logged = new Set<string>();
  for (const e of recent) {
    const id = idOf(e);
    if (id !== null) logged.add(`${e.type} ${id}`);
  }
  const fresh = messages.slice(skip).filter((m) => {
    if (m.id === undefined) return true;
    const key = `${m.type ?? 'message'} ${m.id}`;
    if (logged.has(key)) return false;
    logged.add(key);
    return true;
  });
  const appended = fresh.map((message, i) => ({ seq: top + 1 + i, message }));
  if (appended.length === 0) return { appended: 0, messages: [], rows: [] };
  const events: EventInput[] = appended.map(({ seq, message }) => entryEvent(message, seq, options.scope));
  const result = await ingestor.appendAndIngest(agentId, sessionId, events);
  let more = result.ingest.more;
  while (more) more = (await ingestor.ingest(agentId, sessionId)).more;
  if (!options.rows) return { appended: result.appended, messages: appended, rows: [] };
  const rows: MemoryRecord[] = [];
  for (const { seq } of appended) {
    const found = await store.listMemories(agentId, {
      kinds: ['event'],
      tags: [`seq:${seq}-${seq}`],
      limit: 100,
    });
    rows.push(...found.filter((r) => r.sessionId === sessionId));
  }
  return { appended: result.appended, messages: appended, rows };
}

/** Ends the session's history with a clear marker (nothing when it is empty or just cleared). */
export async function clearSession(
  engine: Engine,
  agentId: string,
  sessionId: string,
  userId: string | null,
): Promise<void> {
  const { store, ingestor } = engine;
  const session = (await store.listSessions(agentId)).find((s) => s.sessionId === sessionId);
  const lastSeq = session?.lastSeq ?? 0;
  if (lastSeq === 0) return;
  const [last] = await latestEvents(
    store,
    agentId,
    sessionId,
    lastSeq,
    1,
    (e) => userId === null || e.userId === userId,
  );
  if (last === undefined || (isClearMarker(last) && last.userId === userId)) return;
  const top = Math.max(lastSeq, session?.cursor ?? 0);
  await ingestor.appendAndIngest(agentId, sessionId, [clearMarker(top + 1, userId)]);
}

/** Extraction over the appended messages with the configured model: the rows it wrote, or its error code. */
export async function extractMessages(
  engine: Engine,
  agentId: string,
  sessionId: string,
  logged: LoggedMessages,
  scope: EntryScope,
): Promise<{ readonly rows: readonly MemoryRecord[]; readonly errorCode?: string }> {
  const turns: ExtractionTurn[] = logged.messages
    .filter(({ message }) => message.content.trim() !== '')
    .map(({ message }) => ({
      role: message.role,
      content: message.type === 'tool_call' ? `tool ${message.toolName} ${message.content}` : message.content,
    }));
  const first = logged.messages[0];
  const last = logged.messages[logged.messages.length - 1];
  if (turns.length === 0 || first === undefined || last === undefined) return { rows: [] };
  const result = await engine.extractor.extract({
    agentId,
    sessionId,
    turns,
    seqFrom: first.seq,
    seqTo: last.seq,
    ...(scope.userId === null ? {} : { userId: scope.userId }),
    ...(scope.tags === undefined ? {} : { tags: scope.tags }),
    ...(scope.metadata === undefined ? {} : { metadata: scope.metadata }),
  });
  const rows: MemoryRecord[] = [];
  for (const applied of result.applied) {
    if (applied.id === null) continue;
    const row = await engine.store.getMemory(
      agentId,
      applied.id,
      scope.userId === null ? undefined : { forUser: scope.userId },
    );
    if (row !== null && row.lifecycle === 'active' && !rows.some((r) => r.id === row.id)) rows.push(row);
  }
  return result.errorCode === undefined ? { rows } : { rows, errorCode: result.errorCode };
}

/** A current fact that a new one contradicts (same subject, another value). */
export interface ConflictNote {
  /** The older fact. */
  readonly id: string;
  /** What differs: `number`, `negation` or `entity`. */
  readonly reason: string;
}

/**
 * Links a new fact to the current facts it contradicts — the same subject with another value, by the rule
 * `memory_remember` uses — so both stay, marked conflicting, until a correction or maintenance settles it.
 * Only facts of the same user (none: the agent's own) are compared: settling a conflict supersedes one side,
 * and one user's fact never retires another's or the agent's shared one.
 */
export async function linkContradictions(
  engine: Engine,
  fact: MemoryRecord,
): Promise<readonly ConflictNote[]> {
  const neighbours = await engine.retriever.decision(fact.agentId, fact.content, {
    kinds: ['fact'],
    limit: 5,
    ...(fact.userId === null ? {} : { filter: { userId: fact.userId } }),
  });
  const linked: ConflictNote[] = [];
  for (const { record } of neighbours.results) {
    if (record.id === fact.id || record.userId !== fact.userId) continue;
    const reason = contradiction(record.content, fact.content);
    if (reason === null) continue;
    await engine.store.linkConflict(fact.agentId, record.id, fact.id, reason);
    linked.push({ id: record.id, reason });
  }
  return linked;
}
