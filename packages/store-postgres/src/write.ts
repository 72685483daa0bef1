/**
 * The write and lifecycle slices: inserts, the compare-and-set update, access counts, deletes, archive,
 * supersede and lifecycle moves. Every write validates first (nothing is sent on bad input) and runs in one
 * transaction. Compare-and-set is the `WHERE revision = expected` of the `UPDATE` itself, on a row locked
 * `FOR UPDATE`, so two writers holding one revision can never both succeed; ids are unique by constraint.
 */

import { contentHash, hasCjk } from '@engram/contracts';
import {
  type EmbeddingState,
  EngramStoreError,
  type InsertedMemory,
  type Lifecycle,
  type MemoryPatch,
  type MemoryRecord,
  type NewMemory,
  type UserScope,
} from '@engram/store';
import {
  callRules,
  checkUserScope,
  chunkSpans,
  lifecycleRules,
  likeText,
  type PreparedMemory,
  storedRows,
  validateAgentId,
  validateId,
  writableByUser,
} from '@engram/store/port-kit';
import type { PgContext, Queryable } from './context.js';
import { type IndexItem, indexContents, unindexContent, type VectorItem, writeVectors } from './derived.js';
import { recordHistory } from './history.js';
import { MEMORY_COLUMNS, type MemoryRow, num, toRecord } from './rows.js';
import { ACTIVE_CONTENT_WHERE, USER_KEY } from './schema.js';

/** Validates a new memory (and its vector against the bound profile); `field` names it in errors. */
export const prepareInsert: (ctx: PgContext, input: NewMemory, field: string) => PreparedMemory =
  lifecycleRules.prepareMemoryInsert;

/** One validated memory on its way in, with every value the insert writes. */
interface InsertRow {
  readonly p: PreparedMemory;
  readonly id: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly validFrom: number;
  readonly hash: string;
  readonly spans: ReturnType<typeof chunkSpans>;
  readonly withVector: boolean;
  readonly state: EmbeddingState;
  readonly fingerprint: string | null;
  /** The exact-duplicate key (agent, kind, hash, user key), or null for an event (never deduplicated). */
  readonly dupKey: string | null;
}

const dupKeyOf = (agentId: string, kind: string, hash: string, userId: string | null): string =>
  JSON.stringify([agentId, kind, hash, userId ?? '']);

/**
 * Inserts validated memories with their derived rows; must run inside a transaction. As in the SQLite store, a
 * vector given with content longer than the chunk budget is not stored (the drain embeds the chunks).
 *
 * The whole batch is written with a fixed number of multi-row statements (`INSERT … SELECT FROM unnest(…)`):
 * the rows, then their chunks, BM25 units and postings, then their vectors — not a statement per memory, so a
 * bulk load runs at the speed of the server rather than of the round trips.
 *
 * An exact duplicate (an active non-event row of the same agent, user and kind with the same content hash) is never
 * stored twice: the insert is `ON CONFLICT … DO NOTHING` on the partial unique index, so it holds for concurrent
 * writers too (the second waits for the first to commit), and the existing row comes back with `created: false`.
 * Within one batch the first of several duplicates is written and the later ones resolve to it, as when they
 * are inserted one by one.
 */
export async function insertPrepared(
  ctx: PgContext,
  db: Queryable,
  list: readonly PreparedMemory[],
  now: number,
): Promise<InsertedMemory[]> {
  const rows: InsertRow[] = list.map((p) => {
    const id = p.id ?? validateId(ctx.idFactory(), 'generated id');
    const createdAt = p.createdAt ?? now;
    const hash = contentHash(p.content);
    const spans = chunkSpans(p.content);
    const withVector = p.vector !== undefined && ctx.profile !== null && spans.length === 1;
    return {
      p,
      id,
      createdAt,
      // When the row was written: a backdated insert (imported history) records its write time here.
      updatedAt: Math.max(createdAt, now),
      validFrom: p.validFrom ?? createdAt,
      hash,
      spans,
      withVector,
      state: withVector ? 'ready' : 'pending',
      fingerprint: withVector ? ctx.fingerprint : null,
      dupKey: p.kind === 'event' ? null : dupKeyOf(p.agentId, p.kind, hash, p.userId),
    };
  });
  // Only the first of the batch's exact duplicates is sent; the others resolve to it below.
  const firstOfKey = new Set<string>();
  const sent = new Set(
    rows.filter((r) => {
      if (r.dupKey === null) return true;
      if (firstOfKey.has(r.dupKey)) return false;
      firstOfKey.add(r.dupKey);
      return true;
    }),
  );
  const col = <T>(f: (r: InsertRow) => T): T[] => Array.from(sent, f);
  const returned = await ctx.q<{ rid: string; id: string }>(
    db,
    'write',
    `INSERT INTO memories(id, agent_id, kind, content, content_hash, importance, confidence, tags, session_id,
       seq_from, seq_to, created_at, updated_at, embedding_state, embedding_fingerprint, has_cjk, like_text, chunk_count,
       user_id, metadata, valid_from)
     SELECT id, a, k, c, h, imp, conf, ARRAY(SELECT jsonb_array_elements_text(t::jsonb)), sid, sf, st, ca, ua, es,
       ef, cjk, lt, cc, uid, md::jsonb, vf
     FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::float8[], $8::text[],
       $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], $14::text[], $15::text[],
       $16::boolean[], $17::text[], $18::int[], $19::text[], $20::text[], $21::bigint[])
       AS u(id, a, k, c, h, imp, conf, t, sid, sf, st, ca, ua, es, ef, cjk, lt, cc, uid, md, vf)
     ON CONFLICT (agent_id, kind, content_hash, (${USER_KEY})) WHERE ${ACTIVE_CONTENT_WHERE}
     DO NOTHING RETURNING rid, id`,
    [
      col((r) => r.id),
      col((r) => r.p.agentId),
      col((r) => r.p.kind),
      col((r) => r.p.content),
      col((r) => r.hash),
      col((r) => r.p.importance),
      col((r) => r.p.confidence),
      col((r) => JSON.stringify(r.p.tags)),
      col((r) => r.p.sessionId),
      col((r) => r.p.seqFrom),
      col((r) => r.p.seqTo),
      col((r) => r.createdAt),
      col((r) => r.updatedAt),
      col((r) => r.state),
      col((r) => r.fingerprint),
      col((r) => hasCjk(r.p.content.normalize('NFKC'))),
      col((r) => likeText(r.p.content)),
      col((r) => r.spans.length),
      col((r) => r.p.userId),
      col((r) => r.p.metadataJson),
      col((r) => r.validFrom),
    ],
  );
  const ridOf = new Map(returned.map((x) => [x.id, Number(x.rid)]));
  // The rows not written: each is an exact duplicate of a stored row (or of an earlier one of this batch).
  const written = (r: InsertRow): number | undefined => (sent.has(r) ? ridOf.get(r.id) : undefined);
  const skipped = rows.filter((r) => written(r) === undefined);
  const existing = await resolveDuplicates(ctx, db, skipped);
  const out: InsertedMemory[] = [];
  const items: IndexItem[] = [];
  const vectors: VectorItem[] = [];
  for (const r of rows) {
    const rid = written(r);
    if (rid === undefined) {
      const dup = r.dupKey === null ? undefined : existing.get(r.dupKey);
      if (dup === undefined) {
        throw new EngramStoreError('ENGRAM_STORE_UNKNOWN', 'an insert was skipped without a duplicate row');
      }
      out.push({ record: toRecord(dup), created: false });
      continue;
    }
    items.push({ rid, agentId: r.p.agentId, content: r.p.content, spans: r.spans });
    if (r.withVector && r.p.vector !== undefined) {
      vectors.push({ key: rid, rid, agentId: r.p.agentId, vector: r.p.vector });
    }
    const record = storedRows.newMemoryRecord(r.p, {
      id: r.id,
      contentHash: r.hash,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      validFrom: r.validFrom,
      embeddingState: r.state,
      embeddingFingerprint: r.fingerprint,
    });
    out.push({ record, created: true });
  }
  await indexContents(ctx, db, items);
  await writeVectors(ctx, db, vectors);
  return out;
}

/**
 * The stored rows the skipped inserts resolve to, by duplicate key. A caller-chosen id that is taken stays a
 * conflict, as without the duplicate (as in the SQLite store).
 */
async function resolveDuplicates(
  ctx: PgContext,
  db: Queryable,
  skipped: readonly InsertRow[],
): Promise<Map<string, MemoryRow>> {
  const found = new Map<string, MemoryRow>();
  if (skipped.length === 0) return found;
  const chosen = skipped.filter((r) => r.p.id !== undefined).map((r) => r.id);
  if (
    chosen.length > 0 &&
    (await ctx.q(db, 'read', 'SELECT 1 AS x FROM memories WHERE id = ANY($1::text[]) LIMIT 1', [chosen]))
      .length > 0
  ) {
    throw new EngramStoreError('ENGRAM_STORE_CONFLICT', 'a memory with this id already exists');
  }
  const keyed = skipped.filter((r) => r.dupKey !== null);
  if (keyed.length === 0) return found;
  const rows = await ctx.q<MemoryRow>(
    db,
    'read',
    `SELECT ${MEMORY_COLUMNS} FROM memories
     WHERE (agent_id, kind, content_hash, ${USER_KEY}) IN (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])) AND ${ACTIVE_CONTENT_WHERE}`,
    [
      keyed.map((r) => r.p.agentId),
      keyed.map((r) => r.p.kind),
      keyed.map((r) => r.hash),
      keyed.map((r) => r.p.userId ?? ''),
    ],
  );
  for (const row of rows) {
    found.set(dupKeyOf(row.agent_id, row.kind, row.content_hash, row.user_id), row);
  }
  return found;
}

/** One row of an agent by id, locked for the rest of the transaction. */
async function lockRow(
  ctx: PgContext,
  db: Queryable,
  agentId: string,
  id: string,
): Promise<MemoryRow | undefined> {
  const rows = await ctx.q<MemoryRow>(
    db,
    'read',
    `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = $1 AND agent_id = $2 FOR UPDATE`,
    [id, agentId],
  );
  return rows[0];
}

/**
 * Reads and locks a row for a compare-and-set write (visible to `forUser`, a checked user scope); NOT_FOUND /
 * REVISION_CONFLICT otherwise.
 */
export async function rowForWrite(
  ctx: PgContext,
  db: Queryable,
  agentId: string,
  id: string,
  expectedRevision: number | undefined,
  forUser: string | null = null,
): Promise<MemoryRow> {
  const row = await lockRow(ctx, db, agentId, id);
  if (row === undefined || !writableByUser(row.user_id, forUser)) {
    throw new EngramStoreError('ENGRAM_STORE_NOT_FOUND', 'no memory with this id for this agent');
  }
  if (expectedRevision !== undefined && Number(row.revision) !== expectedRevision) {
    throw new EngramStoreError(
      'ENGRAM_STORE_REVISION_CONFLICT',
      `the memory changed meanwhile (expected revision ${expectedRevision}, stored ${Number(row.revision)})`,
    );
  }
  return row;
}

/** Moves a row's lifecycle, compare-and-set on the revision it was read with. */
export async function casLifecycle(
  ctx: PgContext,
  db: Queryable,
  row: MemoryRow,
  lifecycle: Lifecycle,
  supersededBy: string | null,
  now: number,
): Promise<MemoryRecord> {
  // Superseding closes the fact's validity at the supersede time; reactivating it opens it again. Back to
  // `active` beside an active exact duplicate violates the unique index: `ENGRAM_STORE_CONFLICT`.
  const validTo =
    lifecycle === 'superseded'
      ? (num(row.valid_to) ?? now)
      : lifecycle === 'active'
        ? null
        : num(row.valid_to);
  const rows = await ctx.q<MemoryRow>(
    db,
    'write',
    `UPDATE memories SET lifecycle = $1, superseded_by = $2, revision = revision + 1, updated_at = $3,
       valid_to = $6 WHERE rid = $4 AND revision = $5 RETURNING ${MEMORY_COLUMNS}`,
    [lifecycle, supersededBy, now, row.rid, row.revision, validTo],
  );
  const next = rows[0];
  if (next === undefined) {
    throw new EngramStoreError('ENGRAM_STORE_REVISION_CONFLICT', 'the memory changed meanwhile');
  }
  return toRecord(next);
}

/** Inserts one memory (row, derived rows and optional vector in one transaction), or finds its duplicate. */
export function insertUniqueMemory(ctx: PgContext, input: NewMemory): Promise<InsertedMemory> {
  return ctx.op('insertMemory', async () => {
    const prepared = prepareInsert(ctx, input, 'memory');
    const now = ctx.now();
    const [inserted] = await ctx.tx((db) => insertPrepared(ctx, db, [prepared], now));
    if (inserted?.created === true) await ctx.noteInserted(1);
    return inserted as InsertedMemory;
  });
}

/** Inserts several memories, all or nothing. */
export function insertMemories(
  ctx: PgContext,
  inputs: readonly NewMemory[],
): Promise<readonly MemoryRecord[]> {
  return ctx.op('insertMemories', async () => {
    const prepared = callRules.prepareInsertBatch(ctx, inputs);
    if (prepared.length === 0) return [];
    const now = ctx.now();
    const inserted = await ctx.tx((db) => insertPrepared(ctx, db, prepared, now));
    await ctx.noteInserted(inserted.filter((i) => i.created).length);
    return inserted.map((i) => i.record);
  });
}

/**
 * Compare-and-set update. A content change bumps the hash, re-indexes, drops the vectors and resets the row to
 * `pending`. `event` rows only take tag, importance, confidence and lifecycle changes.
 */
export function updateMemory(
  ctx: PgContext,
  agentId: string,
  id: string,
  expectedRevision: number,
  patch: MemoryPatch,
  scope?: UserScope,
): Promise<MemoryRecord> {
  return ctx.op('updateMemory', async () => {
    const p = callRules.validateUpdateArgs(ctx, agentId, id, expectedRevision, patch);
    const forUser = checkUserScope(scope);
    const now = ctx.now();
    return ctx.tx(async (db) => {
      const row = await rowForWrite(ctx, db, agentId, id, expectedRevision, forUser);
      const contentChanged = callRules.checkEventEdit(row, p);
      const content = contentChanged && p.content !== undefined ? p.content : row.content;
      const spans = chunkSpans(content);
      const rows = await ctx.q<MemoryRow>(
        db,
        'write',
        `UPDATE memories SET kind = $1, importance = $2, confidence = $3, tags = $4, lifecycle = $5,
           revision = revision + 1, updated_at = $6, content = $7,
           content_hash = CASE WHEN $8 THEN $9 ELSE content_hash END,
           has_cjk = CASE WHEN $8 THEN $10 ELSE has_cjk END,
           like_text = CASE WHEN $8 THEN $11 ELSE like_text END,
           embedding_state = CASE WHEN $8 THEN 'pending' ELSE embedding_state END,
           embedding_fingerprint = CASE WHEN $8 THEN NULL ELSE embedding_fingerprint END,
           embedding_attempts = CASE WHEN $8 THEN 0 ELSE embedding_attempts END,
           chunk_count = CASE WHEN $8 THEN $12 ELSE chunk_count END,
           metadata = coalesce($15::jsonb, metadata), valid_to = $16
         WHERE rid = $13 AND revision = $14 RETURNING ${MEMORY_COLUMNS}`,
        [
          p.kind ?? row.kind,
          p.importance ?? row.importance,
          p.confidence ?? row.confidence,
          p.tags ?? row.tags,
          p.lifecycle ?? row.lifecycle,
          now,
          content,
          contentChanged,
          contentHash(content),
          hasCjk(content.normalize('NFKC')),
          likeText(content),
          spans.length,
          row.rid,
          expectedRevision,
          p.metadataJson ?? null,
          // A lifecycle move closes (superseded) or reopens (active) the fact's validity, as `setLifecycle` does.
          p.lifecycle === 'superseded'
            ? (num(row.valid_to) ?? now)
            : p.lifecycle === 'active'
              ? null
              : num(row.valid_to),
        ],
      );
      const next = rows[0];
      if (next === undefined) {
        throw new EngramStoreError('ENGRAM_STORE_REVISION_CONFLICT', 'the memory changed meanwhile');
      }
      if (contentChanged) {
        const rid = Number(row.rid);
        await unindexContent(ctx, db, rid);
        await indexContents(ctx, db, [{ rid, agentId, content, spans }]);
        // The lineage keeps the text this update replaced (erased again if the memory is forgotten).
        await recordHistory(ctx, db, {
          agentId,
          memoryId: id,
          action: 'updated',
          at: now,
          revision: Number(next.revision),
          content: row.content,
          userId: row.user_id,
        });
      }
      return toRecord(next);
    });
  });
}

/** Bumps `lastAccessedAt` and `accessCount` of the agent's rows; the revision is unchanged. */
export function recordAccess(
  ctx: PgContext,
  agentId: string,
  ids: readonly string[],
  at?: number,
): Promise<void> {
  return ctx.op('recordAccess', async () => {
    const when = callRules.validateAccessArgs(agentId, ids, at, ctx.now);
    if (ids.length === 0) return;
    await ctx.run(
      ctx.pool,
      'write',
      `UPDATE memories SET last_accessed_at = $1, access_count = access_count + 1
       WHERE agent_id = $2 AND id = ANY($3::text[])`,
      [when, agentId, [...new Set(ids)]],
    );
  });
}

/**
 * Deletes the row; its chunks, BM25 units, postings and vectors go with it (foreign keys, cascade). False when
 * it did not exist or is another user's than `scope.forUser`.
 */
export function deleteMemory(
  ctx: PgContext,
  agentId: string,
  id: string,
  scope?: UserScope,
): Promise<boolean> {
  return ctx.op('deleteMemory', async () => {
    validateAgentId(agentId);
    validateId(id);
    const forUser = checkUserScope(scope);
    const n = await ctx.run(
      ctx.pool,
      'write',
      `DELETE FROM memories WHERE id = $1 AND agent_id = $2
         AND ($3::text IS NULL OR user_id = $3::text)`,
      [id, agentId, forUser],
    );
    return n > 0;
  });
}
