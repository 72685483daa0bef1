/**
 * The memories' scores as whole documents (`LexicalHit.memoryScore`), as the SQLite store computes them: given
 * only when the answer holds a chunked memory, Okapi BM25 with each memory's units' term frequencies and lengths
 * summed, and statistics over the agent's memories rather than its units (memories = units less the units past
 * a memory's first chunk; document frequency = memories with the term). Same terms, phrase checks, k1 and b as
 * the search.
 */
import { bm25Idf } from '@engram/store/port-kit';
import type { PgContext } from './context.js';
import { CHUNK_KEY_SPAN } from './derived.js';

/** The search's planned terms: per term its text and role (`grp`: −1 free, −2 score-only, else its phrase). */
export interface MemoryScoreTerms {
  readonly terms: readonly string[];
  readonly groups: readonly number[];
  /** Each phrase's terms, in order (JSON), as the search binds them. */
  readonly phrases: string;
}

const perMemorySql = `WITH w(idx, term, grp) AS (
    SELECT * FROM unnest($1::int[], $2::text[], $3::int[])),
  units AS (SELECT d.key, d.rid, d.length, d.tokens FROM lexical_docs d WHERE d.rid = ANY($4::bigint[])),
  len AS (SELECT rid, sum(length) AS l FROM units GROUP BY rid)
  SELECT u.rid, w.idx, sum(p.tf) AS tf, max(len.l) AS l
  FROM w JOIN lexical_postings p ON p.agent_id = $5 AND p.term = w.term
    JOIN units u ON u.key = p.key JOIN len ON len.rid = u.rid
  WHERE w.grp < 0 OR EXISTS (
    SELECT 1 FROM LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text($6::jsonb -> w.grp)) AS ph) q,
      generate_subscripts(u.tokens, 1) i
    WHERE u.tokens[i] = q.ph[1] AND u.tokens[i:i + cardinality(q.ph) - 1] = q.ph)
  GROUP BY u.rid, w.idx`;

/** Whole-memory scores by memory rid for the answer's memories (`rows`: rid and chunk count each). */
export async function memoryScores(
  ctx: PgContext,
  agentId: string,
  /** The users whose units the statistics count (`statsUsers`), null for the whole agent. */
  users: readonly string[] | null,
  rows: readonly { readonly rid: number; readonly chunks: number }[],
  planned: MemoryScoreTerms,
  stats: { readonly docs: number; readonly totalLength: number },
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  if (!rows.some((r) => r.chunks > 1)) return out;
  const scoped = users === null ? '' : ' AND user_id = ANY($2::text[])';
  const extra = await ctx.q<{ n: string }>(
    ctx.pool,
    'fts',
    `SELECT count(*) AS n FROM lexical_docs WHERE key >= ${CHUNK_KEY_SPAN} AND agent_id = $1${scoped}`,
    users === null ? [agentId] : [agentId, users],
  );
  const memories = stats.docs - Number(extra[0]?.n ?? 0);
  if (memories <= 0) return out;
  const distinct = [...new Set(planned.terms)];
  const dfRows = await ctx.q<{ term: string; n: string }>(
    ctx.pool,
    'fts',
    users === null
      ? `SELECT term, count(DISTINCT key % ${CHUNK_KEY_SPAN}) AS n FROM lexical_postings
     WHERE agent_id = $1 AND term = ANY($2::text[]) GROUP BY term`
      : `SELECT p.term, count(DISTINCT p.key % ${CHUNK_KEY_SPAN}) AS n FROM lexical_postings p
     JOIN lexical_docs d ON d.key = p.key AND d.agent_id = $1
     WHERE p.agent_id = $1 AND p.term = ANY($2::text[]) AND d.user_id = ANY($3::text[]) GROUP BY p.term`,
    users === null ? [agentId, distinct] : [agentId, distinct, users],
  );
  const df = new Map(dfRows.map((r) => [r.term, Number(r.n)]));
  const avgdl = stats.totalLength > 0 ? stats.totalLength / memories : 1;
  const { k1, b } = ctx.bm25;
  const found = await ctx.q<{ rid: string; idx: number; tf: string; l: string }>(
    ctx.pool,
    'fts',
    perMemorySql,
    [
      planned.terms.map((_, i) => i),
      planned.terms,
      planned.groups,
      rows.map((r) => r.rid),
      agentId,
      planned.phrases,
    ],
  );
  for (const r of found) {
    const term = planned.terms[r.idx];
    if (term === undefined) continue;
    const tf = Number(r.tf);
    const idf = bm25Idf(memories, df.get(term) ?? 0);
    const score = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * Number(r.l)) / avgdl));
    const rid = Number(r.rid);
    out.set(rid, (out.get(rid) ?? 0) + score);
  }
  return out;
}
