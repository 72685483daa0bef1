/**
 * The read slice (row reads): one row, listing, rows by content hash, and the authoritative re-read of search
 * candidates. The search arms live in `search-lexical.ts` and `search-vector.ts`.
 */

import { LIFECYCLES, MEMORY_KINDS, type MemoryKind } from '@engram/contracts';
import type {
  ListMemoriesOptions,
  MemoryBrief,
  MemoryRecord,
  RevalidateOptions,
  RevalidationCandidate,
  SessionWindow,
  TimeScope,
  UserScope,
} from '@engram/store';
import {
  callRules,
  checkKinds,
  checkSessionWindows,
  checkTags,
  checkUserScope,
  invalidInput,
  MAX_SESSION_ROWS,
  validateAgentId,
  validateId,
  validateLifecycle,
  validateLimit,
} from '@engram/store/port-kit';
import type { PgContext } from './context.js';
import { filterSql, includeArchived, timeSql } from './filters.js';
import { BRIEF_COLUMNS, MEMORY_COLUMNS, type MemoryRow, toBrief, toRecord } from './rows.js';

/** The kinds filter (deduplicated); `fallback` when omitted. */
export function kindsFilter(
  kinds: readonly MemoryKind[] | undefined,
  fallback: readonly MemoryKind[],
): string[] {
  return checkKinds(kinds) ?? [...fallback];
}

/** The tags filter (every tag required; deduplicated, at most 64); `[]` when omitted. */
export function tagsFilter(tags: readonly string[] | undefined): string[] {
  return checkTags(tags);
}

/** Reads one row of an agent (any lifecycle), or null (also when it is another user's than `scope.forUser`). */
export function getMemory(
  ctx: PgContext,
  agentId: string,
  id: string,
  scope?: UserScope,
): Promise<MemoryRecord | null> {
  return ctx.op('getMemory', async () => {
    validateAgentId(agentId);
    validateId(id);
    const forUser = checkUserScope(scope);
    const rows = await ctx.q<MemoryRow>(
      ctx.pool,
      'read',
      `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = $1 AND agent_id = $2
         AND ($3::text IS NULL OR user_id IS NULL OR user_id = $3::text)`,
      [id, agentId, forUser],
    );
    return rows[0] === undefined ? null : toRecord(rows[0]);
  });
}

/** Lists an agent's rows in id order (all kinds and lifecycles unless filtered), keyset-paginated by `afterId`. */
export function listMemories(
  ctx: PgContext,
  agentId: string,
  options: ListMemoriesOptions = {},
): Promise<readonly MemoryRecord[]> {
  return ctx.op('listMemories', async () => {
    validateAgentId(agentId);
    const kinds = kindsFilter(options.kinds, MEMORY_KINDS);
    let lifecycles: string[] = [...LIFECYCLES];
    if (options.lifecycles !== undefined) {
      if (!Array.isArray(options.lifecycles)) throw invalidInput('lifecycles must be an array');
      lifecycles = options.lifecycles.map((l) => validateLifecycle(l, 'lifecycles entry'));
    }
    const tags = tagsFilter(options.tags);
    const limit = validateLimit(options.limit, 'limit', 10_000, 100);
    const afterId = options.afterId === undefined ? '' : validateId(options.afterId, 'afterId');
    const params: unknown[] = [agentId, afterId, kinds, lifecycles, tags, limit];
    const filter = filterSql(options.filter, params);
    const rows = await ctx.q<MemoryRow>(
      ctx.pool,
      'read',
      // COLLATE "C": ids sort by code point, as SQLite's BINARY collation sorts them.
      `SELECT ${MEMORY_COLUMNS} FROM memories m
       WHERE agent_id = $1 AND id COLLATE "C" > $2 AND kind = ANY($3::text[]) AND lifecycle = ANY($4::text[])
         AND tags @> $5::text[] AND ${filter}
       ORDER BY id COLLATE "C" LIMIT $6`,
      params,
    );
    return rows.map((r) => toRecord(r));
  });
}

/** Rows of an agent with this content hash (every lifecycle, oldest first), optionally of one kind. */
export function findByContentHash(
  ctx: PgContext,
  agentId: string,
  hash: string,
  kind?: MemoryKind,
): Promise<readonly MemoryRecord[]> {
  return ctx.op('findByContentHash', async () => {
    const k = callRules.validateContentHashArgs(agentId, hash, kind);
    const rows = await ctx.q<MemoryRow>(
      ctx.pool,
      'read',
      `SELECT ${MEMORY_COLUMNS} FROM memories WHERE agent_id = $1 AND content_hash = $2 AND ($3::text IS NULL OR kind = $3)
       ORDER BY created_at, id COLLATE "C"`,
      [agentId, hash, k],
    );
    return rows.map((r) => toRecord(r));
  });
}

/**
 * Re-reads candidates: only this agent's `active` rows (or, with a time scope, valid at `asOf` or superseded;
 * `archived` too with `includeArchived`), of the expected revision where given, in input order.
 */
export function revalidate(
  ctx: PgContext,
  agentId: string,
  candidates: readonly RevalidationCandidate[],
  options: RevalidateOptions = {},
): Promise<readonly MemoryRecord[]> {
  return ctx.op('revalidate', () => reread(ctx, agentId, candidates, options, MEMORY_COLUMNS, toRecord));
}

/** {@link revalidate} returning the fields ranking and filtering read: the same rows, in the same order. */
export function revalidateBrief(
  ctx: PgContext,
  agentId: string,
  candidates: readonly RevalidationCandidate[],
  options: RevalidateOptions = {},
): Promise<readonly MemoryBrief[]> {
  return ctx.op('revalidate', () => reread(ctx, agentId, candidates, options, BRIEF_COLUMNS, toBrief));
}

async function reread<R>(
  ctx: PgContext,
  agentId: string,
  candidates: readonly RevalidationCandidate[],
  options: RevalidateOptions,
  columns: string,
  convert: (row: MemoryRow) => R,
): Promise<R[]> {
  {
    validateAgentId(agentId);
    const ids = callRules.candidateIds(candidates);
    const params: unknown[] = [ids, agentId];
    const { time, user } = readScope(options, params);
    if (ids.length === 0) return [];
    const rows = await ctx.q<MemoryRow>(
      ctx.pool,
      'read',
      `SELECT ${columns} FROM memories m WHERE id = ANY($1::text[]) AND agent_id = $2 AND ${time} ${user}`,
      params,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return callRules.inCandidateOrder(candidates, byId, (row) => Number(row.revision), convert);
  }
}

/**
 * The time and user conditions of a re-read under `revalidate`'s rules on the memory row `m`, their values
 * appended to `params` (also the search arms' folded re-reads, `VectorQuery.briefs` and `LexicalQuery.briefs`).
 * Refuses bad options.
 */
export function readScope(
  options: RevalidateOptions,
  params: unknown[],
): { readonly time: string; readonly user: string } {
  if (typeof options !== 'object' || options === null) throw invalidInput('options must be an object');
  const archived = includeArchived(options.includeArchived);
  const forUser = checkUserScope({ forUser: options.forUser });
  const scope: TimeScope | undefined =
    options.asOf === undefined && options.includeHistory === undefined
      ? undefined
      : {
          ...(options.asOf === undefined ? {} : { asOf: options.asOf }),
          ...(options.includeHistory === undefined ? {} : { includeHistory: options.includeHistory }),
        };
  const time = timeSql(scope, params, 'current', archived);
  let user = '';
  if (forUser !== null) {
    params.push(forUser);
    user = `AND (m.user_id IS NULL OR m.user_id = $${params.length}::text)`;
  }
  return { time, user };
}

/** The briefs of the agent's rows next to positions of their sessions (see `SessionReadSlice`). */
export function sessionNeighbours(
  ctx: PgContext,
  agentId: string,
  windows: readonly SessionWindow[],
  options: RevalidateOptions = {},
): Promise<readonly MemoryBrief[]> {
  return ctx.op('revalidate', async () => {
    const checked = checkSessionWindows(agentId, windows);
    const params: unknown[] = [
      agentId,
      checked.map((w) => w.sessionId),
      checked.map((w) => w.from),
      checked.map((w) => w.to),
    ];
    const { time, user } = readScope(options, params);
    if (checked.length === 0) return [];
    const rows = await ctx.q<MemoryRow>(
      ctx.pool,
      'read',
      `SELECT ${BRIEF_COLUMNS} FROM memories m
       WHERE agent_id = $1 AND ${time} ${user} AND id IN (
         SELECT n.id FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS w(s, lo, hi)
         JOIN memories n ON n.agent_id = $1 AND n.session_id = w.s
          AND n.seq_from <= w.hi AND coalesce(n.seq_to, n.seq_from) >= w.lo)
       ORDER BY session_id COLLATE "C", seq_from, id COLLATE "C" LIMIT ${MAX_SESSION_ROWS}`,
      params,
    );
    return rows.map((r) => toBrief(r));
  });
}
