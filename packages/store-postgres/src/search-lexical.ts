/**
 * The lexical arm on PostgreSQL: exact Okapi BM25 over the store's own postings and per-agent statistics
 * (`lexical_docs`, `lexical_postings`, `lexical_stats`), with the SQLite store's tokenizer, query planner, k1
 * and b, so both stores rank alike (PostgreSQL's `ts_rank` is not BM25). The agent is a condition of every
 * posting lookup, never a filter after a global search.
 *
 * `any` mode is the SQLite store's BM25 search: free terms make candidates, score-only terms (single CJK
 * characters of a longer run) refine, and a multi-word term (a path, `max_retries`) counts only for units that
 * contain it as a phrase, checked on the unit's token sequence. `all` mode keeps the units that contain every
 * free term and every phrase, ranked by the same BM25 score. Difference from the SQLite store (tested): in
 * `all` mode a CJK run of three or more characters must share every bigram with the unit (SQLite's trigram index
 * matches the run as a substring), and the score is BM25 rather than FTS5's `bm25()`.
 */

import { type MemoryFilter, RECALLABLE_KINDS } from '@engram/contracts';
import type { LexicalHit, LexicalQuery, LexicalResult, TimeScope } from '@engram/store';
import { type Bm25Plan, bm25Idf, callRules, planBm25Query, planLexicalQuery } from '@engram/store/port-kit';
import type { PgContext } from './context.js';
import { CHUNK_KEY_SPAN, type ChunkColumns, chunkOf } from './derived.js';
import { filterSql, includeArchived, timeSql } from './filters.js';
import { memoryScores } from './search-memory.js';

const SCORE_ONLY = -2;

/**
 * The scoring statement. `hits` is every unit (a chunk, or a short memory) holding a query term, scored once from
 * the postings with the agent's statistics; a multi-word term's postings count only for units that hold the
 * phrase (checked only when the query has one). `any` mode keeps the units holding a free term, `all` mode those
 * holding every requirement (`count(DISTINCT …)` only there: without it the grouping hashes); an `all`-mode query
 * without requirements (score-only terms) keeps them as `any` mode does.
 * Only the best units are joined to their memories, in two bands of the one statement, as in the SQLite store:
 * the first joins the units at or above the `limit`-th best score (`lim`), which holds the whole answer when
 * they name `limit` memories that pass the filters (a memory scores as its best unit, and every unit scoring at
 * least the cut is in the band, ties included). Only when they name fewer (chunks of one memory, filtered rows)
 * does the second band join the units below the cut too (its condition is a constant PostgreSQL tests once, so
 * the band is skipped otherwise). Both bands together are every unit: the answer is the full join's.
 */
const bm25Sql = (scope: string, all: boolean, phrases: boolean): string => {
  const phrase = phrases
    ? `WHERE w.grp < 0 OR EXISTS (
      SELECT 1 FROM lexical_docs d,
        LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text($6::jsonb -> w.grp)) AS ph) q,
        generate_subscripts(d.tokens, 1) i
      WHERE d.key = p.key AND d.tokens[i] = q.ph[1] AND d.tokens[i:i + cardinality(q.ph) - 1] = q.ph)`
    : '';
  const keep = all
    ? 'count(DISTINCT w.req) FILTER (WHERE w.req >= 0) = $10::int'
    : `bool_or(w.grp <> ${SCORE_ONLY})`;
  const joined = (band: string): string => `SELECT h.key, h.score, m.id, m.revision, m.rid, m.chunk_count
    FROM lim CROSS JOIN hits h JOIN memories m ON m.rid = h.key % ${CHUNK_KEY_SPAN}
    WHERE ${band} AND m.agent_id = $5 AND ${scope} AND m.kind = ANY($11::text[]) AND m.tags @> $12::text[]`;
  // The phrases ($6) and the requirement count ($10) are typed in `w` when the statement does not read them (a
  // parameter PostgreSQL cannot type fails the statement); the condition is a constant, tested once.
  return `WITH w(term, idf, grp, req) AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::float8[], $3::int[], $4::int[])
    WHERE $6::jsonb IS NOT NULL AND $10::int IS NOT NULL),
  hits AS MATERIALIZED (
    SELECT p.key,
      sum(w.idf * p.tf * ($7::float8 + 1) / (p.tf + $7::float8 * (1 - $8::float8 + $8::float8 * p.length / $9::float8))) AS score
    FROM w JOIN lexical_postings p ON p.agent_id = $5 AND p.term = w.term
    ${phrase}
    GROUP BY p.key
    HAVING ${keep}),
  lim AS MATERIALIZED (SELECT (SELECT score FROM hits ORDER BY score DESC OFFSET $13 - 1 LIMIT 1) AS score),
  band AS MATERIALIZED (${joined("h.score >= coalesce(lim.score, '-infinity')")}),
  short AS MATERIALIZED (
    SELECT lim.score IS NOT NULL AND (SELECT count(DISTINCT rid) FROM band) < $13 AS yes FROM lim),
  units AS (
    SELECT * FROM band
    UNION ALL
    ${joined('(SELECT yes FROM short) AND h.score < lim.score')})
  SELECT r.*, c.start_at, c.end_at FROM (
    SELECT id, revision, max(score) AS score, (array_agg(key ORDER BY score DESC, key))[1] AS key, rid, chunk_count
    FROM units
    GROUP BY rid, id, revision, chunk_count
    ORDER BY score DESC, id COLLATE "C" LIMIT $13) r
  LEFT JOIN memory_chunks c ON r.chunk_count > 1 AND c.rid = r.rid AND c.idx = r.key / ${CHUNK_KEY_SPAN}
  ORDER BY r.score DESC, r.id COLLATE "C"`;
};

interface Filter {
  readonly agentId: string;
  readonly kinds: string[];
  readonly tags: string[];
  readonly limit: number;
  /** `all` mode: every requirement (free term, phrase) must match. */
  readonly all: boolean;
  readonly memoryFilter: MemoryFilter | undefined;
  readonly time: TimeScope | undefined;
  readonly archived: boolean;
}

/** The BM25 hits of one agent's active rows for a planned query, best first (score desc, id asc). */
export async function searchBm25(ctx: PgContext, plan: Bm25Plan, filter: Filter): Promise<LexicalHit[]> {
  if (plan.terms.length === 0) return [];
  const distinct = [...new Set(plan.terms.map((t) => t.term))];
  // The agent's statistics and the terms' document frequencies in one statement.
  const stats = (
    await ctx.q<{ docs: string; total_length: string; df: string[] }>(
      ctx.pool,
      'fts',
      `SELECT s.docs, s.total_length, ARRAY(
         SELECT (SELECT count(*) FROM lexical_postings p WHERE p.agent_id = $1 AND p.term = t.term)
         FROM unnest($2::text[]) WITH ORDINALITY AS t(term, i) ORDER BY t.i) AS df
       FROM lexical_stats s WHERE s.agent_id = $1`,
      [filter.agentId, distinct],
    )
  )[0];
  const docs = Number(stats?.docs ?? 0);
  if (stats === undefined || docs <= 0) return [];
  const total = Number(stats.total_length);
  const avgdl = total > 0 ? total / docs : 1;
  const df = new Map(distinct.map((term, i) => [term, Number(stats.df[i] ?? 0)]));
  const phrases: string[][] = plan.phrases.map(() => []);
  const terms: string[] = [];
  const idfs: number[] = [];
  const groups: number[] = [];
  const reqs: number[] = [];
  const freeReq = new Map<string, number>();
  let nextReq = plan.phrases.length;
  for (const t of plan.terms) {
    terms.push(t.term);
    idfs.push(bm25Idf(docs, df.get(t.term) ?? 0));
    if (t.role.kind === 'phrase') {
      phrases[t.role.phrase]?.push(t.term);
      groups.push(t.role.phrase);
      reqs.push(t.role.phrase);
    } else if (t.role.kind === 'free') {
      groups.push(-1);
      let r = freeReq.get(t.term);
      if (r === undefined) {
        r = nextReq;
        nextReq += 1;
        freeReq.set(t.term, r);
      }
      reqs.push(r);
    } else {
      groups.push(SCORE_ONLY);
      reqs.push(-1);
    }
  }
  type Row = { id: string; revision: string; score: number; rid: string; chunk_count: number } & ChunkColumns;
  const params: unknown[] = [
    terms,
    idfs,
    groups,
    reqs,
    filter.agentId,
    JSON.stringify(phrases),
    ctx.bm25.k1,
    ctx.bm25.b,
    avgdl,
    filter.all ? nextReq : 0,
    filter.kinds,
    filter.tags,
    filter.limit,
  ];
  const scope = `${timeSql(filter.time, params, 'current', filter.archived)} AND ${filterSql(filter.memoryFilter, params)}`;
  const rows = await ctx.q<Row>(
    ctx.pool,
    'fts',
    bm25Sql(scope, filter.all && nextReq > 0, plan.phrases.length > 0),
    params,
  );
  const whole = await memoryScores(
    ctx,
    filter.agentId,
    rows.map((r) => ({ rid: Number(r.rid), chunks: r.chunk_count })),
    { terms, groups, phrases: JSON.stringify(phrases) },
    { docs, totalLength: total },
  );
  return rows.map((r) => {
    const memoryScore = whole.get(Number(r.rid));
    return {
      id: r.id,
      revision: Number(r.revision),
      score: Number(r.score),
      ...(r.start_at === null ? {} : { chunk: chunkOf(r) }),
      ...(memoryScore === undefined ? {} : { memoryScore }),
    };
  });
}

/** Lexical search of one agent's active rows (see the module comment). */
export function searchLexical(ctx: PgContext, query: LexicalQuery): Promise<LexicalResult> {
  return ctx.op('searchLexical', async () => {
    const checked = callRules.checkLexicalQuery(query, RECALLABLE_KINDS);
    const { agentId, limit, mode } = checked;
    const kinds = [...checked.kinds];
    const tags = [...checked.tags];
    // Every filter is checked up front, even when no term survives (a bad one is refused, never ignored).
    const scope = {
      memoryFilter: query.filter,
      time: query.time,
      archived: includeArchived(query.includeArchived),
    };
    filterSql(query.filter, []);
    timeSql(query.time, []);
    const bm25 = planBm25Query(query.terms);
    if (mode === 'any') {
      const hits = await searchBm25(ctx, bm25, { agentId, kinds, tags, limit, all: false, ...scope });
      return callRules.bm25Answer(hits, bm25);
    }
    const plan = planLexicalQuery(query.terms, 'all');
    const paths = callRules.planPaths(plan);
    const used = paths.words || paths.trigram || paths.like;
    const hits = used
      ? await searchBm25(ctx, bm25, { agentId, kinds, tags, limit, all: true, ...scope })
      : [];
    return {
      hits,
      paths: used ? paths : { words: false, trigram: false, like: false },
      likeTerms: [...plan.likeTerms],
      droppedTerms: plan.droppedTerms,
    };
  });
}
