/**
 * The read slice (row reads): one row, listing, rows by content hash, and the authoritative re-read of search
 * candidates. The search arms live in `search-lexical.ts` and `search-vector.ts`.
 */

import { LIFECYCLES, MEMORY_KINDS, type MemoryKind } from '@engram/contracts';
import {
  callRules,
  checkOptionsUser,
  checkSessionWindows,
  checkUserScope,
  invalidInput,
  type ListMemoriesOptions,
  MAX_SESSION_ROWS,
  type MemoryBrief,
  type MemoryRecord,
  type RevalidateOptions,
  type RevalidationCandidate,
  type SessionWindow,
  type UserScope,
  validateAgentId,
  validateId,
  validateLifecycle,
  validateLimit,
} from '@engram/store/port-kit';
import { ACTIVE_CONTENT_WHERE, HASH_PREFIX_LENGTH, OTHER_CONTENT_WHERE } from '../schema.js';
import type { StoreContext } from './context.js';
import {
  filterParams,
  filterSql,
  includeArchived,
  kindsFilter,
  tagsFilter,
  tagsSql,
  timeParams,
  timeSql,
} from './filters.js';
import { selectRow } from './memory-rows.js';
import {
  BRIEF_COLUMNS,
  BRIEF_REVISION_VALUE,
  type BriefValues,
  briefFromValues,
  type MemoryRow,
  RECORD_COLUMNS,
  REVISION_VALUE,
  type RecordValues,
  recordFromValues,
  toRecord,
} from './rows.js';

/** Reads one row of an agent (any lifecycle), or null (also when it is another user's than `scope.forUser`). */
export function getMemory(
  ctx: StoreContext,
  agentId: string,
  id: string,
  scope?: UserScope,
): Promise<MemoryRecord | null> {
  return ctx.op('getMemory', () => {
    validateAgentId(agentId);
    validateId(id);
    const row = selectRow(ctx, agentId, id, checkUserScope(scope));
    return row === undefined ? null : toRecord(row);
  });
}

/** Lists an agent's rows in id order (all kinds and lifecycles unless filtered), keyset-paginated by `afterId`. */
export function listMemories(
  ctx: StoreContext,
  agentId: string,
  options: ListMemoriesOptions = {},
): Promise<readonly MemoryRecord[]> {
  return ctx.op('listMemories', () => {
    validateAgentId(agentId);
    const kinds = kindsFilter(options.kinds, MEMORY_KINDS);
    let lifecycles: string = JSON.stringify(LIFECYCLES);
    if (options.lifecycles !== undefined) {
      if (!Array.isArray(options.lifecycles)) throw invalidInput('lifecycles must be an array');
      lifecycles = JSON.stringify(options.lifecycles.map((l) => validateLifecycle(l, 'lifecycles entry')));
    }
    const tags = tagsFilter(options.tags);
    const limit = validateLimit(options.limit, 'limit', 10_000, 100);
    const afterId = options.afterId === undefined ? '' : validateId(options.afterId, 'afterId');
    const scope = filterParams(options.filter);
    const rows = ctx
      .stmt(
        'read',
        `SELECT * FROM memories m
         WHERE m.agent_id = @agent AND m.id > @after
           AND m.kind IN (SELECT value FROM json_each(@kinds))
           AND m.lifecycle IN (SELECT value FROM json_each(@lifecycles))
           ${tagsSql(tags)}
           AND ${filterSql(scope)}
         ORDER BY m.id LIMIT @limit`,
      )
      .all<MemoryRow>({ agent: agentId, after: afterId, kinds, lifecycles, tags, limit, ...scope });
    return rows.map((r) => toRecord(r));
  });
}

/**
 * The lookup by content hash. Each row is in one of the two content-hash indexes (see
 * `CONTENT_HASH_INDEXES_SQL`): one seek in the unique index of the active non-event rows, one in the prefix index
 * of the others (the prefix term is its indexed expression; the full hash decides).
 */
export const FIND_BY_CONTENT_HASH_SQL: string = `SELECT * FROM memories WHERE agent_id = @agent AND content_hash = @hash
   AND (@kind IS NULL OR kind = @kind) AND ${ACTIVE_CONTENT_WHERE}
 UNION ALL
 SELECT * FROM memories WHERE agent_id = @agent
   AND substr(content_hash, 1, ${HASH_PREFIX_LENGTH}) = substr(@hash, 1, ${HASH_PREFIX_LENGTH})
   AND content_hash = @hash AND (@kind IS NULL OR kind = @kind) AND ${OTHER_CONTENT_WHERE}
 ORDER BY created_at, id`;

/** Rows of an agent with this content hash (every lifecycle, oldest first), optionally of one kind. */
export function findByContentHash(
  ctx: StoreContext,
  agentId: string,
  hash: string,
  kind?: MemoryKind,
): Promise<readonly MemoryRecord[]> {
  return ctx.op('findByContentHash', () => {
    const k = callRules.validateContentHashArgs(agentId, hash, kind);
    const rows = ctx.stmt('read', FIND_BY_CONTENT_HASH_SQL).all<MemoryRow>({ agent: agentId, hash, kind: k });
    return rows.map((r) => toRecord(r));
  });
}

/**
 * Re-reads candidates: only this agent's rows in the time scope (default: `active`), of the expected revision
 * where given, in input order.
 */
export function revalidate(
  ctx: StoreContext,
  agentId: string,
  candidates: readonly RevalidationCandidate[],
  options?: RevalidateOptions,
): Promise<readonly MemoryRecord[]> {
  return ctx.op('revalidate', () =>
    reread<RecordValues, MemoryRecord>(ctx, agentId, candidates, options, {
      shape: 'full',
      columns: RECORD_COLUMNS,
      revisionAt: REVISION_VALUE,
      convert: recordFromValues,
    }),
  );
}

/** {@link revalidate} returning the fields ranking and filtering read: the same rows, in the same order. */
export function revalidateBrief(
  ctx: StoreContext,
  agentId: string,
  candidates: readonly RevalidationCandidate[],
  options?: RevalidateOptions,
): Promise<readonly MemoryBrief[]> {
  return ctx.op('revalidate', () =>
    reread<BriefValues, MemoryBrief>(ctx, agentId, candidates, options, {
      shape: 'brief',
      columns: BRIEF_COLUMNS,
      revisionAt: BRIEF_REVISION_VALUE,
      convert: briefFromValues,
    }),
  );
}

function reread<V extends readonly unknown[], R>(
  ctx: StoreContext,
  agentId: string,
  candidates: readonly RevalidationCandidate[],
  options: RevalidateOptions | undefined,
  read: {
    readonly shape: string;
    readonly columns: string;
    readonly revisionAt: number;
    readonly convert: (row: V) => R;
  },
): R[] {
  const { shape, columns, revisionAt, convert } = read;
  validateAgentId(agentId);
  const scope = timeParams(options, 0, includeArchived(options?.includeArchived));
  const forUser = checkOptionsUser(options);
  const ids = callRules.candidateIds(candidates);
  if (ids.length === 0) return [];
  // Driven by the id list (CROSS JOIN fixes the join order): one index lookup per candidate. Filtering the
  // agent's rows by the list instead walks every active row of the agent (linear in its size). Rows come as
  // arrays of the columns: a search revalidates hundreds of candidates, and an object per wide row cost more
  // than the statement.
  const rows = ctx
    .variant(
      'read',
      `revalidate:${shape}:${scope.tMode}:${forUser === null ? 0 : 1}`,
      () => `SELECT ${columns} FROM json_each(@ids) j CROSS JOIN memories m ON m.id = j.value
         WHERE m.agent_id = @agent AND ${timeSql(scope)}
         ${forUser === null ? '' : 'AND (m.user_id IS NULL OR m.user_id = @forUser)'}`,
    )
    .values<V>({ ids: JSON.stringify(ids), agent: agentId, forUser, ...scope });
  const byId = new Map(rows.map((r) => [r[0] as string, r]));
  return callRules.inCandidateOrder(candidates, byId, (row) => Number(row[revisionAt]), convert);
}

/**
 * The briefs of the agent's rows next to positions of their sessions (see `SessionReadSlice`): one seek per
 * window in the `(agent_id, session_id)` index, under `revalidate`'s rules.
 */
export function sessionNeighbours(
  ctx: StoreContext,
  agentId: string,
  windows: readonly SessionWindow[],
  options?: RevalidateOptions,
): Promise<readonly MemoryBrief[]> {
  return ctx.op('revalidate', () => {
    const checked = checkSessionWindows(agentId, windows);
    const scope = timeParams(options, 0, includeArchived(options?.includeArchived));
    const forUser = checkOptionsUser(options);
    if (checked.length === 0) return [];
    const rows = ctx
      .variant(
        'read',
        `sessionNeighbours:${scope.tMode}:${forUser === null ? 0 : 1}`,
        () => `SELECT DISTINCT ${BRIEF_COLUMNS} FROM json_each(@windows) w CROSS JOIN memories m
           ON m.agent_id = @agent AND m.session_id = json_extract(w.value, '$[0]')
          AND m.seq_from <= json_extract(w.value, '$[2]')
          AND coalesce(m.seq_to, m.seq_from) >= json_extract(w.value, '$[1]')
         WHERE ${timeSql(scope)}
         ${forUser === null ? '' : 'AND (m.user_id IS NULL OR m.user_id = @forUser)'}
         ORDER BY m.session_id, m.seq_from, m.id LIMIT ${MAX_SESSION_ROWS}`,
      )
      .values<BriefValues>({
        windows: JSON.stringify(checked.map((w) => [w.sessionId, w.from, w.to])),
        agent: agentId,
        forUser,
        ...scope,
      });
    return rows.map(briefFromValues);
  });
}
