import { checkTag, MAX_TAGS } from '@engram/contracts';
import type { EventInput, EventRecord, NewMemory } from '@engram/store';
import { checkIdArgument, EngramMaintenanceError, isRevisionConflict } from './errors.js';
import type { IngestStore } from './store-ports.js';
import { deriveEventTags, eventMemoryContent } from './tags.js';

/** Construction of an event ingestor. */
export interface EventIngestorConfig {
  readonly store: IngestStore;
  /** Events read (and memories written) per batch (default 200, at most 1,000). */
  readonly batchSize?: number;
  /** Batches per `ingest` call when the call does not say (default 50). */
  readonly maxBatchesPerRun?: number;
  /** Importance of ingested `event` memories (default 0.3). */
  readonly importance?: number;
  /** Longest memory content in characters; longer event content is truncated (default 16,000). */
  readonly maxContentChars?: number;
}

/** Options of one ingestion call. */
export interface IngestOptions {
  readonly maxBatches?: number;
  readonly signal?: AbortSignal;
}

/** The answer of one ingestion call. */
export interface IngestResult {
  /** Events read past the cursor. */
  readonly events: number;
  /** `event` memories written. */
  readonly memories: number;
  readonly batches: number;
  /** The session cursor after the call. */
  readonly cursor: number;
  /** Cursor conflicts met (another ingestor moved the cursor first); each was resolved by re-reading it. */
  readonly conflicts: number;
  /** True when the call stopped at its batch bound with events left. */
  readonly more: boolean;
}

/** The answer of ingesting every pending session of an agent. */
export interface IngestPendingResult {
  /** Sessions ingested (their log was ahead of their cursor). */
  readonly sessions: number;
  readonly events: number;
  readonly memories: number;
  readonly batches: number;
  readonly conflicts: number;
  /** True when the batch bound stopped the call with events left. */
  readonly more: boolean;
}

/**
 * Incremental, idempotent ingestion of a session's archival events into `event` memories.
 *
 * Each batch of events after the stored cursor becomes `event` memories (one per event, with derived tags
 * and `sessionId`/`seqFrom`/`seqTo` provenance) written together with the cursor move in one compare-and-set
 * transaction, so ingesting the same events twice adds nothing. Concurrent calls for the same session in
 * this process join the one in flight.
 */
export interface EventIngestor {
  ingest(agentId: string, sessionId: string, options?: IngestOptions): Promise<IngestResult>;
  /** Appends events to the session's log (idempotent by `seq`) and ingests them. */
  appendAndIngest(
    agentId: string,
    sessionId: string,
    events: readonly EventInput[],
    options?: IngestOptions,
  ): Promise<{ readonly appended: number; readonly skipped: number; readonly ingest: IngestResult }>;
  /** Ingests every session of the agent whose log is ahead of its cursor (the batch bound is shared). */
  ingestPending(agentId: string, options?: IngestOptions): Promise<IngestPendingResult>;
}

function truncateCodePoints(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = text.slice(0, max);
  const last = out.charCodeAt(out.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) out = out.slice(0, -1);
  return out;
}

/**
 * What an event's writer asked its memory to carry (`metadata.memory`: `{ tags, metadata }`, the tags and
 * metadata a caller gave with the messages). Read back from the store, so untrusted: tags that are not valid
 * tags and metadata that is not a plain object are dropped, never thrown on.
 */
function carriedByEvent(metadata: Readonly<Record<string, unknown>>): {
  readonly tags: readonly string[];
  readonly metadata?: Readonly<Record<string, unknown>>;
} {
  const memory = metadata.memory;
  if (typeof memory !== 'object' || memory === null || Array.isArray(memory)) return { tags: [] };
  const { tags, metadata: carried } = memory as { tags?: unknown; metadata?: unknown };
  const valid = Array.isArray(tags)
    ? tags.filter((t): t is string => typeof t === 'string' && checkTag(t) === null)
    : [];
  const plain = typeof carried === 'object' && carried !== null && !Array.isArray(carried);
  return plain ? { tags: valid, metadata: carried as Readonly<Record<string, unknown>> } : { tags: valid };
}

/** Turns one event into an `event` memory (null when it has no content to remember). */
export function eventToMemory(
  event: EventRecord,
  options: { readonly importance: number; readonly maxContentChars: number },
): NewMemory | null {
  const content = truncateCodePoints(eventMemoryContent(event).trim(), options.maxContentChars);
  if (content === '') return null;
  const carried = carriedByEvent(event.metadata);
  const derived = deriveEventTags(event, content, event.seq, event.seq);
  return {
    agentId: event.agentId,
    kind: 'event',
    content,
    importance: options.importance,
    tags: [...new Set([...derived, ...carried.tags])].slice(0, MAX_TAGS),
    ...(carried.metadata === undefined ? {} : { metadata: carried.metadata }),
    sessionId: event.sessionId,
    seqFrom: event.seq,
    seqTo: event.seq,
    createdAt: event.createdAt,
    // The event's user is the memory's (an event without one is the agent's own).
    ...(event.userId == null ? {} : { userId: event.userId }),
  };
}

/** Creates an event ingestor. */
export function createEventIngestor(config: EventIngestorConfig): EventIngestor {
  const store = config.store;
  const batchSize = config.batchSize ?? 200;
  const maxBatchesPerRun = config.maxBatchesPerRun ?? 50;
  const importance = config.importance ?? 0.3;
  const maxContentChars = config.maxContentChars ?? 16_000;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000) {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_INVALID_CONFIG',
      'Invalid ingestion setting: batchSize.',
    );
  }
  if (!Number.isInteger(maxBatchesPerRun) || maxBatchesPerRun < 1) {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_INVALID_CONFIG',
      'Invalid ingestion setting: maxBatchesPerRun.',
    );
  }
  if (!(importance >= 0 && importance <= 1)) {
    throw new EngramMaintenanceError(
      'ENGRAM_MAINTENANCE_INVALID_CONFIG',
      'Invalid ingestion setting: importance.',
    );
  }
  const inFlight = new Map<string, Promise<IngestResult>>();

  async function ingestSession(
    agentId: string,
    sessionId: string,
    options: IngestOptions,
  ): Promise<IngestResult> {
    const maxBatches = options.maxBatches ?? maxBatchesPerRun;
    let cursor = await store.getCursor(agentId, sessionId);
    let events = 0;
    let memories = 0;
    let batches = 0;
    let conflicts = 0;
    let more = false;
    // Each conflict re-reads the cursor; bounded so a misbehaving store cannot spin forever.
    let attempts = 0;
    while (attempts < maxBatches * 2) {
      attempts += 1;
      if (options.signal?.aborted === true) break;
      if (batches >= maxBatches) {
        more = (await store.listEventsAfter(agentId, sessionId, cursor, 1)).length > 0;
        break;
      }
      const batch = await store.listEventsAfter(agentId, sessionId, cursor, batchSize);
      if (batch.length === 0) break;
      const rows: NewMemory[] = [];
      for (const event of batch) {
        const memory = eventToMemory(event, { importance, maxContentChars });
        if (memory !== null) rows.push(memory);
      }
      const nextCursor = batch[batch.length - 1]?.seq ?? cursor;
      try {
        await store.ingestBatch({ agentId, sessionId, expectedCursor: cursor, nextCursor, memories: rows });
      } catch (error) {
        if (!isRevisionConflict(error)) throw error;
        conflicts += 1;
        cursor = await store.getCursor(agentId, sessionId);
        continue;
      }
      cursor = nextCursor;
      events += batch.length;
      memories += rows.length;
      batches += 1;
    }
    return { events, memories, batches, cursor, conflicts, more };
  }

  function ingest(agentId: string, sessionId: string, options: IngestOptions = {}): Promise<IngestResult> {
    try {
      checkIdArgument(agentId, 'agentId');
      checkIdArgument(sessionId, 'sessionId');
    } catch (error) {
      return Promise.reject(error);
    }
    const key = JSON.stringify([agentId, sessionId]);
    const running = inFlight.get(key);
    if (running !== undefined) return running;
    const promise = ingestSession(agentId, sessionId, options).finally(() => inFlight.delete(key));
    inFlight.set(key, promise);
    return promise;
  }

  return {
    ingest,
    async appendAndIngest(agentId, sessionId, events, options = {}) {
      checkIdArgument(agentId, 'agentId');
      checkIdArgument(sessionId, 'sessionId');
      const appended = await store.appendEvents(agentId, sessionId, events);
      // A run already in flight may have read past its last batch: wait for it, then ingest what is new.
      const running = inFlight.get(JSON.stringify([agentId, sessionId]));
      if (running !== undefined) await running.catch(() => undefined);
      const result = await ingest(agentId, sessionId, options);
      return { appended: appended.appended, skipped: appended.skipped, ingest: result };
    },
    async ingestPending(agentId, options = {}) {
      checkIdArgument(agentId, 'agentId');
      const sessions = await store.listSessions(agentId);
      const total = { sessions: 0, events: 0, memories: 0, batches: 0, conflicts: 0, more: false };
      let budget = options.maxBatches ?? maxBatchesPerRun;
      for (const session of sessions) {
        if (session.lastSeq <= session.cursor) continue;
        if (budget <= 0 || options.signal?.aborted === true) {
          total.more = true;
          break;
        }
        const r = await ingest(agentId, session.sessionId, { ...options, maxBatches: budget });
        budget -= r.batches;
        total.events += r.events;
        total.memories += r.memories;
        total.batches += r.batches;
        total.conflicts += r.conflicts;
        total.more = total.more || r.more;
        total.sessions += 1;
      }
      return total;
    },
  };
}
