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
import { CHUNK_KEY_SPAN, chunkSpan } from './derived.js';
import { filterSql, includeArchived, timeSql } from './filters.js';
import { memoryScores } from './search-memory.js';

const SCORE_ONLY = -2;

const bm25Sql = (scope: string): string => `WITH w(term, idf, grp, req) AS (
    SELECT * FROM unnest($1::text[], $2::float8[], $3::int[], $4::int[])),
  post AS (
    SELECT p.key, w.idf, w.grp, w.req, p.tf, p.length FROM w
    JOIN lexical_postings p ON p.agent_id = $5 AND p.term = w.term
    WHERE w.grp < 0 OR EXISTS (
      SELECT 1 FROM lexical_docs d,
        LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text($6::jsonb -> w.grp)) AS ph) q,
        generate_subscripts(d.tokens, 1) i
      WHERE d.key = p.key AND d.tokens[i] = q.ph[1] AND d.tokens[i:i + cardinality(q.ph) - 1] = q.ph)),
  hits AS (
    SELECT post.key,
      sum(post.idf * post.tf * ($7::float8 + 1) / (post.tf + $7::float8 * (1 - $8::float8 + $8::float8 * post.length / $9::float8))) AS score,
      bool_or(post.grp <> ${SCORE_ONLY}) AS any_cand,
      count(DISTINCT post.req) FILTER (WHERE post.req >= 0) AS reqs
    FROM post
    GROUP BY post.key)
  SELECT m.id, m.revision, max(h.score) AS score, (array_agg(h.key ORDER BY h.score DESC, h.key))[1] AS key,
    m.rid, m.chunk_count
  FROM hits h JOIN memories m ON m.rid = h.key % ${CHUNK_KEY_SPAN}
  WHERE (CASE WHEN $10::int > 0 THEN h.reqs = $10::int ELSE h.any_cand END)
    AND m.agent_id = $5 AND ${scope} AND m.kind = ANY($11::text[]) AND m.tags @> $12::text[]
  GROUP BY m.rid
  ORDER BY score DESC, m.id COLLATE "C" LIMIT $13`;

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
  const stats = (
    await ctx.q<{ docs: string; total_length: string }>(
      ctx.pool,
      'fts',
      'SELECT docs, total_length FROM lexical_stats WHERE agent_id = $1',
      [filter.agentId],
    )
  )[0];
  const docs = Number(stats?.docs ?? 0);
  if (docs <= 0) return [];
  const total = Number(stats?.total_length ?? 0);
  const avgdl = total > 0 ? total / docs : 1;
  const distinct = [...new Set(plan.terms.map((t) => t.term))];
  const dfRows = await ctx.q<{ term: string; n: string }>(
    ctx.pool,
    'fts',
    'SELECT term, count(*) AS n FROM lexical_postings WHERE agent_id = $1 AND term = ANY($2::text[]) GROUP BY term',
    [filter.agentId, distinct],
  );
  const df = new Map(dfRows.map((r) => [r.term, Number(r.n)]));
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
  type Row = { id: string; revision: string; score: number; key: string; rid: string; chunk_count: number };
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
  const rows = await ctx.q<Row>(ctx.pool, 'fts', bm25Sql(scope), params);
  const whole = await memoryScores(
    ctx,
    filter.agentId,
    rows.map((r) => ({ rid: Number(r.rid), chunks: r.chunk_count })),
    { terms, groups, phrases: JSON.stringify(phrases) },
    { docs, totalLength: total },
  );
  const hits: LexicalHit[] = [];
  for (const r of rows) {
    const key = Number(r.key);
    const memoryScore = whole.get(Number(r.rid));
    const span =
      r.chunk_count > 1
        ? await chunkSpan(ctx, ctx.pool, Number(r.rid), Math.floor(key / CHUNK_KEY_SPAN))
        : undefined;
    hits.push({
      id: r.id,
      revision: Number(r.revision),
      score: Number(r.score),
      ...(span === undefined ? {} : { chunk: span }),
      ...(memoryScore === undefined ? {} : { memoryScore }),
    });
  }
  return hits;
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
