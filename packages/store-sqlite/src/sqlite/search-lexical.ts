/**
 * The lexical arm of the read slice. `any` mode (OR, what retrieval uses) is exact BM25 over the store's own
 * index (`search-bm25.ts`). `all` mode (AND) uses the word index, the trigram index (CJK runs of 3 or more)
 * and a bounded LIKE scan (CJK runs of 1–2), planned by `planLexicalQuery` and merged per memory by summing
 * scores.
 */

import { RECALLABLE_KINDS } from '@engram/contracts';
import type { ChunkSpan, LexicalHit, LexicalQuery, LexicalResult } from '@engram/store/port-kit';
import {
  buildMatch,
  callRules,
  type LexicalPlan,
  planBm25Query,
  planLexicalQuery,
} from '@engram/store/port-kit';
import { CHUNK_KEY_SPAN, chunkSpan } from './chunks.js';
import type { StoreContext } from './context.js';
import {
  type FilterParams,
  filterParams,
  filterSql,
  includeArchived,
  scopeKey,
  type TimeParams,
  tagsSql,
  timeParams,
  timeSql,
} from './filters.js';
import { searchBm25 } from './search-bm25.js';

/** The span of the chunk an FTS row matched (for a chunked memory). */
function matchedChunk(ctx: StoreContext, agentId: string, row: FtsRow): ChunkSpan | undefined {
  return chunkSpan(ctx, agentId, row.rid, Math.floor(row.key / CHUNK_KEY_SPAN));
}

/** Score of one LIKE-path match (a small constant: the LIKE path has no ranking of its own). */
export const LIKE_MATCH_SCORE = 0.5;

type FtsRow = { id: string; revision: number; score: number; key: number; rid: number; chunks: number };
type LikeRow = { id: string; revision: number; hits: number };

/**
 * One FTS path over chunk rows, aggregated to the memory: the best chunk's score (max over chunks) and that
 * chunk's key. A short memory is one row keyed by its rid, so it scores exactly as an unchunked memory.
 */
function ftsSql(
  table: 'words' | 'trigram',
  filterOther: boolean,
  likeFilter: boolean,
  scope: FilterParams & TimeParams,
  tags: string,
): string {
  const t = table === 'words' ? 'memories_fts_words' : 'memories_fts_trigram';
  const other = table === 'words' ? 'memories_fts_trigram' : 'memories_fts_words';
  // MATERIALIZED: bm25() must run in the FTS query itself, never in a flattened aggregate.
  return `WITH hits AS MATERIALIZED (
      SELECT m.id AS id, m.revision AS revision, -bm25(${t}, 0.0, 1.0) AS score, f.rowid AS key, m.rid AS rid,
        m.chunk_count AS chunks
      FROM ${t} f CROSS JOIN memories m ON m.rid = f.rowid % ${CHUNK_KEY_SPAN}
      WHERE ${t} MATCH @match AND m.agent_id = @agent AND ${timeSql(scope)} AND ${filterSql(scope)}
        AND m.kind IN (SELECT value FROM json_each(@kinds))
        ${tagsSql(tags)}
        ${filterOther ? `AND m.rid IN (SELECT rowid % ${CHUNK_KEY_SPAN} FROM ${other} WHERE ${other} MATCH @other)` : ''}
        ${likeFilter ? `AND NOT EXISTS (SELECT 1 FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) NOT LIKE j.value ESCAPE '\\')` : ''}
    )
    SELECT id, revision, max(score) AS score, key, rid, chunks FROM hits
    GROUP BY rid ORDER BY score DESC, id ASC LIMIT @limit`;
}

function likeSql(scope: FilterParams & TimeParams, tags: string): string {
  const cond = `NOT EXISTS (SELECT 1 FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) NOT LIKE j.value ESCAPE '\\')`;
  return `SELECT m.id AS id, m.revision AS revision,
        (SELECT count(*) FROM json_each(@likes) j WHERE coalesce(m.like_text, m.content) LIKE j.value ESCAPE '\\') AS hits
      FROM memories m
      WHERE m.agent_id = @agent AND m.has_cjk = 1 AND ${timeSql(scope)} AND ${filterSql(scope)}
        AND m.kind IN (SELECT value FROM json_each(@kinds))
        ${tagsSql(tags)}
        AND ${cond}
      ORDER BY m.created_at DESC, m.rid DESC LIMIT @limit`;
}

/**
 * Lexical search of one agent's active rows: word index, trigram index (CJK ≥ 3) and a bounded LIKE scan
 * (CJK 1–2), merged per id by summing scores; ordered by score desc, id asc.
 */
export function searchLexical(ctx: StoreContext, query: LexicalQuery): Promise<LexicalResult> {
  return ctx.op('searchLexical', () => {
    const checked = callRules.checkLexicalQuery(query, RECALLABLE_KINDS);
    const { agentId, limit, mode } = checked;
    const kinds = JSON.stringify(checked.kinds);
    const tags = JSON.stringify(checked.tags);
    const scope = {
      ...filterParams(query.filter),
      ...timeParams(query.time, 0, includeArchived(query.includeArchived)),
    };
    if (mode === 'any') {
      const bm25 = planBm25Query(query.terms);
      return callRules.bm25Answer(searchBm25(ctx, bm25, { agentId, kinds, tags, limit, scope }), bm25);
    }
    const plan: LexicalPlan = planLexicalQuery(query.terms, mode);
    const paths = callRules.planPaths(plan);
    const base = {
      hits: [] as LexicalHit[],
      likeTerms: [...plan.likeTerms],
      droppedTerms: plan.droppedTerms,
    };
    if (!paths.words && !paths.trigram && !paths.like) {
      return { ...base, paths: { words: false, trigram: false, like: false } };
    }
    const token = ctx.agentToken(agentId);
    const wordsMatch = plan.wordsExpr === null ? null : buildMatch(token, plan.wordsExpr);
    const trigramMatch = plan.trigramExpr === null ? null : buildMatch(token, plan.trigramExpr);
    const likes = JSON.stringify(plan.likePatterns);
    // Per memory: the summed path scores, and the chunk key of its best-scoring FTS match.
    const merged = new Map<string, { revision: number; score: number; best: number; at: FtsRow | null }>();
    const add = (id: string, revision: number, score: number, row: FtsRow | null = null): void => {
      const prev = merged.get(id);
      if (prev === undefined) merged.set(id, { revision, score, best: row === null ? 0 : score, at: row });
      else {
        prev.score += score;
        if (row !== null && (prev.at === null || score > prev.best)) {
          prev.best = score;
          prev.at = row;
        }
      }
    };
    const common = { agent: agentId, kinds, tags, limit, ...scope };
    const shape = scopeKey(scope, tags);
    const fts = (table: 'words' | 'trigram', other: boolean) =>
      ctx.variant('fts', `fts:${table}:${other ? 1 : 0}${paths.like ? 1 : 0}:${shape}`, () =>
        ftsSql(table, other, paths.like, scope, tags),
      );
    const likeBonus = plan.likeTerms.length * LIKE_MATCH_SCORE;
    if (wordsMatch !== null) {
      const params: Record<string, unknown> = { ...common, match: wordsMatch };
      if (trigramMatch !== null) params.other = trigramMatch;
      if (paths.like) params.likes = likes;
      for (const r of fts('words', trigramMatch !== null).all<FtsRow>(params))
        add(r.id, r.revision, r.score + likeBonus, r);
    }
    if (trigramMatch !== null) {
      const params: Record<string, unknown> = { ...common, match: trigramMatch };
      if (wordsMatch !== null) params.other = wordsMatch;
      if (paths.like) params.likes = likes;
      for (const r of fts('trigram', wordsMatch !== null).all<FtsRow>(params)) {
        // The words query already added the LIKE bonus for rows it found.
        const bonus = wordsMatch !== null && merged.has(r.id) ? 0 : likeBonus;
        add(r.id, r.revision, r.score + bonus, r);
      }
    }
    if (wordsMatch === null && trigramMatch === null) {
      for (const r of ctx
        .variant('like', `like:${shape}`, () => likeSql(scope, tags))
        .all<LikeRow>({ ...common, likes })) {
        add(r.id, r.revision, r.hits * LIKE_MATCH_SCORE);
      }
    }
    const hits: LexicalHit[] = [...merged.entries()]
      .sort(([a, x], [b, y]) => y.score - x.score || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, limit)
      .map(([id, v]) => {
        const span = v.at === null || v.at.chunks <= 1 ? undefined : matchedChunk(ctx, agentId, v.at);
        return { id, revision: v.revision, score: v.score, ...(span === undefined ? {} : { chunk: span }) };
      });
    return { ...base, hits, paths };
  });
}
