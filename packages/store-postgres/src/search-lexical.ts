/**
 * The lexical arm on PostgreSQL: exact Okapi BM25 over the store's own postings and per-agent statistics
 * (`lexical_docs`, `lexical_postings`, `lexical_stats`; per user for a user-scoped search), with the SQLite store's tokenizer, query planner, k1
 * and b, so both stores rank alike (PostgreSQL's `ts_rank` is not BM25). The agent is a condition of every
 * posting lookup, never a filter after a global search.
 *
 * `any` mode is the SQLite store's BM25 search: free terms make candidates, score-only terms (single CJK
 * characters of a longer run) refine, and a multi-word term (a path, `max_retries`) counts only for units that
 * contain it as a phrase, checked on the unit's token sequence. `all` mode keeps the units that contain every
 * free term and every phrase, ranked by the same BM25 score. Difference from the SQLite store (tested): in
 * `all` mode a CJK run of three or more characters must share every bigram with the unit (SQLite's trigram index
 * matches the run as a substring), and the score is BM25 rather than FTS5's `bm25()`.
 *
 * With `briefs` the BM25 statement also re-reads each hit as `revalidateBrief` does at the hit's revision (its
 * brief, or null when that re-read would drop it), on the memory row it already joins: revalidating the lexical
 * candidates of a search then costs no round trip.
 */

import { type MemoryFilter, RECALLABLE_KINDS } from '@engram/contracts';
import type { LexicalHit, LexicalQuery, LexicalResult, RevalidateOptions, TimeScope } from '@engram/store';
import {
  type Bm25Plan,
  bm25Idf,
  callRules,
  checkFilter,
  planBm25Query,
  planLexicalQuery,
} from '@engram/store/port-kit';
import type { PgContext } from './context.js';
import { CHUNK_KEY_SPAN, type ChunkColumns, chunkOf } from './derived.js';
import { filterSql, includeArchived, timeSql } from './filters.js';
import { readScope } from './read.js';
import { BRIEF_COLUMNS, type MemoryRow, toBrief } from './rows.js';
import { memoryScores } from './search-memory.js';

const SCORE_ONLY = -2;
/** The brief columns but the id and revision (the units' own). */
const BRIEF_NAMES = BRIEF_COLUMNS.split(', ').filter((column) => column !== 'id' && column !== 'revision');

/**
 * The scoring statement. `hits` is every unit (a chunk, or a short memory) holding a query term, scored once from
 * the postings with the agent's statistics; a multi-word term's postings count only for units that hold the
 * phrase (checked only when the query has one). `any` mode keeps the units holding a free term, `all` mode those
 * holding every requirement (`count(DISTINCT …)` only there: without it the grouping hashes); an `all`-mode query
 * without requirements (score-only terms) keeps them as `any` mode does.
 * With `pruned` (`any` mode), the entries of `w` marked not essential (`ess`: the query's most common free terms,
 * and its score-only terms) make no candidates: `hits` is the units holding an essential entry, each scored over
 * every entry, the others' postings read for those units only (MaxScore, Turtle and Flood 1995, "Query
 * Evaluation: Strategies and Optimizations", IP&M 31(6)). The caller checks that the answer is exact.
 * Only the best units are joined to their memories, in two bands of the one statement, as in the SQLite store:
 * the first joins the units at or above the `limit`-th best score (`lim`), which holds the whole answer when
 * they name `limit` memories that pass the filters (a memory scores as its best unit, and every unit scoring at
 * least the cut is in the band, ties included). Only when they name fewer (chunks of one memory, filtered rows)
 * does the second band join the units below the cut too (its condition is a constant PostgreSQL tests once, so
 * the band is skipped otherwise). Both bands together are every unit: the answer is the full join's.
 * With `brief` (the folded re-read's conditions on `m`) each joined unit also carries `brief_ok` and the row's
 * brief columns, kept through the grouping (one row per memory: the same values in every group).
 */
const bm25Sql = (
  scope: string,
  all: boolean,
  phrases: boolean,
  prune: Pruning,
  brief: string | null,
): string => {
  const briefJoined =
    brief === null ? '' : `, (${brief}) AS brief_ok, ${BRIEF_NAMES.map((c) => `m.${c}`).join(', ')}`;
  const briefKept = brief === null ? '' : `, brief_ok, ${BRIEF_NAMES.join(', ')}`;
  const pruned = prune !== 'full';
  const phraseCheck = `w.grp < 0 OR EXISTS (
      SELECT 1 FROM lexical_docs d,
        LATERAL (SELECT ARRAY(SELECT jsonb_array_elements_text($6::jsonb -> w.grp)) AS ph) q,
        generate_subscripts(d.tokens, 1) i
      WHERE d.key = p.key AND d.tokens[i] = q.ph[1] AND d.tokens[i:i + cardinality(q.ph) - 1] = q.ph)`;
  const phrase = phrases ? `WHERE ${phraseCheck}` : '';
  const part =
    'w.idf * p.tf * ($7::float8 + 1) / (p.tf + $7::float8 * (1 - $8::float8 + $8::float8 * p.length / $9::float8))';
  const keep = all
    ? 'count(DISTINCT w.req) FILTER (WHERE w.req >= 0) = $10::int'
    : `bool_or(w.grp <> ${SCORE_ONLY})`;
  const joined = (
    band: string,
  ): string => `SELECT h.key, h.score, m.id, m.revision, m.rid, m.chunk_count${briefJoined}
    FROM lim CROSS JOIN hits h JOIN memories m ON m.rid = h.key % ${CHUNK_KEY_SPAN}
    WHERE ${band} AND m.agent_id = $5 AND ${scope} AND m.kind = ANY($11::text[]) AND m.tags @> $12::text[]`;
  // The phrases ($6) and the requirement count ($10) are typed in `w` when the statement does not read them (a
  // parameter PostgreSQL cannot type fails the statement); the condition is a constant, tested once.
  // Pruned: the essential entries' postings, then the other entries' postings of those units only (one probe
  // of the postings key each: the LIMIT keeps the planner from scanning the common term's postings instead);
  // every unit there holds an essential free term or phrase, so none is dropped. A unit's terms are summed in
  // the query's order, as the full statement sums them, so equal units score equal to the last bit.
  const hits = pruned
    ? `ess AS MATERIALIZED (
    SELECT p.key, ${part} AS s, w.i
    FROM w JOIN lexical_postings p ON p.agent_id = $5 AND p.term = w.term
    WHERE w.ess${phrases ? ` AND (${phraseCheck})` : ''}),${
      prune === 'single'
        ? `
  rest AS MATERIALIZED (
    SELECT key, score FROM (
      SELECT p.key, ${part} AS score
      FROM w JOIN lexical_postings p ON p.agent_id = $5 AND p.term = w.term
      WHERE NOT w.ess
      ORDER BY score DESC LIMIT 2 * $13 + 1 + (SELECT count(*) FROM ess)) t
    WHERE NOT EXISTS (SELECT 1 FROM ess e WHERE e.key = t.key)
    ORDER BY score DESC LIMIT 2 * $13 + 1),`
        : ''
    }
  hits AS MATERIALIZED (
    SELECT key, sum(s ORDER BY i) AS score FROM (
      SELECT key, s, i FROM ess
      UNION ALL
      SELECT c.key, ${part}, w.i
      FROM (SELECT DISTINCT key FROM ess) c CROSS JOIN w
      CROSS JOIN LATERAL (SELECT q.tf, q.length FROM lexical_postings q
        WHERE q.agent_id = $5 AND q.term = w.term AND q.key = c.key LIMIT 1) p
      WHERE NOT w.ess) x
    GROUP BY key${
      prune === 'single'
        ? `
    UNION ALL
    (SELECT key, score FROM rest ORDER BY score DESC LIMIT 2 * $13)`
        : ''
    }),`
    : `hits AS MATERIALIZED (
    SELECT p.key, sum(${part}) AS score
    FROM w JOIN lexical_postings p ON p.agent_id = $5 AND p.term = w.term
    ${phrase}
    GROUP BY p.key
    HAVING ${keep}),`;
  const entries = pruned
    ? `w(term, idf, grp, req, ess, i) AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::float8[], $3::int[], $4::int[], $14::boolean[]) WITH ORDINALITY`
    : `w(term, idf, grp, req) AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::float8[], $3::int[], $4::int[])`;
  return `WITH ${entries}
    WHERE $6::jsonb IS NOT NULL AND $10::int IS NOT NULL),
  ${hits}
  lim AS MATERIALIZED (SELECT (SELECT score FROM hits ORDER BY score DESC OFFSET $13 - 1 LIMIT 1) AS score),
  band AS MATERIALIZED (${joined("h.score >= coalesce(lim.score, '-infinity')")}),
  short AS MATERIALIZED (
    SELECT lim.score IS NOT NULL AND (SELECT count(DISTINCT rid) FROM band) < $13 AS yes FROM lim),
  units AS (
    SELECT * FROM band
    UNION ALL
    ${joined('(SELECT yes FROM short) AND h.score < lim.score')})
  SELECT r.*, c.start_at, c.end_at, x.next FROM (SELECT ${
    prune === 'single'
      ? '(SELECT score FROM rest ORDER BY score DESC OFFSET 2 * $13 LIMIT 1)'
      : 'NULL::float8'
  } AS next) x
  LEFT JOIN (
    SELECT id, revision, max(score) AS score, (array_agg(key ORDER BY score DESC, key))[1] AS key, rid,
      chunk_count${briefKept}
    FROM units
    GROUP BY rid, id, revision, chunk_count${briefKept}
    ORDER BY score DESC, id COLLATE "C" LIMIT $13) r ON true
  LEFT JOIN memory_chunks c ON r.chunk_count > 1 AND c.rid = r.rid AND c.idx = r.key / ${CHUNK_KEY_SPAN}
  ORDER BY r.score DESC, r.id COLLATE "C"`;
};

/**
 * How the statement finds its units: every unit holding a free term or phrase (`full`); the units holding an
 * essential entry, the answer exact only when it outscores the other entries' bound (`bound`); or those and the
 * best units of the one common term the query left out (`single`: their score is that term's alone, so the best
 * of them are found by a top-N sort of its postings, with no grouping), the answer exact only when it outscores
 * the first of its units left out (`next`).
 */
type Pruning = 'full' | 'bound' | 'single';

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
  /** The folded re-read's options (`LexicalQuery.briefs`), already checked; undefined without one. */
  readonly briefs?: RevalidateOptions | undefined;
}

/**
 * The users whose units a call's statistics count (`lexical_docs.user_id`, '' for the agent's own): `userId`'s,
 * or the agent's own and `forUser`'s; null for a whole-agent call (the agent's totals).
 */
export function statsUsers(filter: MemoryFilter | undefined): string[] | null {
  const f = checkFilter(filter);
  if (f === null) return null;
  if (f.userId !== null) return [f.userId];
  if (f.forUser !== null) return ['', f.forUser];
  return null;
}

/** The BM25 hits of one agent's active rows for a planned query, best first (score desc, id asc). */
export async function searchBm25(ctx: PgContext, plan: Bm25Plan, filter: Filter): Promise<LexicalHit[]> {
  if (plan.terms.length === 0) return [];
  const distinct = [...new Set(plan.terms.map((t) => t.term))];
  // The statistics and the terms' document frequencies in one statement: the agent's, or for a user scope those
  // of the units it can see (the user's and, with `forUser`, the agent's own: schema 11), so another user's
  // writes never move a user's scores.
  const users = statsUsers(filter.memoryFilter);
  const stats = (
    await ctx.q<{ docs: string | null; total_length: string | null; df: string[] }>(
      ctx.pool,
      'fts',
      users === null
        ? `SELECT s.docs, s.total_length, ARRAY(
         SELECT coalesce((SELECT n.df FROM lexical_terms n WHERE n.agent_id = $1 AND n.term = t.term), 0)
         FROM unnest($2::text[]) WITH ORDINALITY AS t(term, i) ORDER BY t.i) AS df
       FROM lexical_stats s WHERE s.agent_id = $1`
        : `SELECT sum(s.docs) AS docs, sum(s.total_length) AS total_length, ARRAY(
         SELECT coalesce((SELECT sum(n.df) FROM lexical_user_terms n
           WHERE n.agent_id = $1 AND n.user_id = ANY($3::text[]) AND n.term = t.term), 0)
         FROM unnest($2::text[]) WITH ORDINALITY AS t(term, i) ORDER BY t.i) AS df
       FROM lexical_user_stats s WHERE s.agent_id = $1 AND s.user_id = ANY($3::text[])`,
      users === null ? [filter.agentId, distinct] : [filter.agentId, distinct, users],
    )
  )[0];
  const docs = Number(stats?.docs ?? 0);
  if (stats === undefined || docs <= 0) return [];
  const total = Number(stats.total_length ?? 0);
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
  // A scoped call (a user, a session, metadata, tags or some kinds only) drops most units after scoring, so a
  // pruned answer would rarely be full: it is scored in full, as before.
  const scoped =
    filter.memoryFilter !== undefined ||
    filter.tags.length > 0 ||
    RECALLABLE_KINDS.some((kind) => !filter.kinds.includes(kind));
  const pruning = filter.all || scoped ? NO_PRUNING : planPruning(plan, df, filter.limit);
  const essential = plan.terms.map(
    (t) => t.role.kind === 'phrase' || (t.role.kind === 'free' && !pruning.skipped.has(t.term)),
  );
  // What a unit holding no essential entry can score at most: each other entry's idf times k1 + 1 (the bound
  // of BM25's term-frequency factor).
  let bound = 0;
  for (const [i, idf] of idfs.entries())
    if (essential[i] !== true) bound += Math.max(0, idf) * (ctx.bm25.k1 + 1);
  type Row = {
    id: string | null;
    revision: string;
    score: number;
    rid: string;
    chunk_count: number;
    next: number | null;
    /** With `briefs`: whether `revalidateBrief` would keep the hit (its brief columns follow). */
    brief_ok?: boolean;
  } & ChunkColumns &
    Partial<Omit<MemoryRow, 'id' | 'revision'>>;
  const base: unknown[] = [
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
  const { briefs } = filter;
  // Each variant numbers its own parameters: the pruned ones' essential flags ($14), then the scope's and the
  // folded re-read's values (so the full re-run of a pruned search binds them at their own numbers).
  const run = async (mode: Pruning): Promise<{ rows: Row[]; next: number | null }> => {
    const params = mode === 'full' ? [...base] : [...base, essential];
    const scope = `${timeSql(filter.time, params, 'current', filter.archived)} AND ${filterSql(filter.memoryFilter, params)}`;
    let brief: string | null = null;
    if (briefs !== undefined) {
      // `revalidateBrief`'s conditions on the row already joined (the agent's, at the unit's revision).
      const { time, user } = readScope(briefs, params);
      brief = `${time} ${user}`;
    }
    const got = await ctx.q<Row>(
      ctx.pool,
      'fts',
      bm25Sql(scope, filter.all && nextReq > 0, plan.phrases.length > 0, mode, brief),
      params,
    );
    const next = got[0]?.next;
    return {
      rows: got.filter((r) => r.id !== null),
      next: next === null || next === undefined ? null : Number(next),
    };
  };
  let { rows, next } = await run(pruning.mode);
  // A pruned answer is the full one when no unit it left out can enter it: when it has `limit` memories and the
  // last scores above every unit left out (`next`, the first one left out, or the bound), or nothing was left
  // out. Such a unit can then neither enter the answer nor be a listed memory's best unit. Otherwise the full
  // statement runs.
  if (pruning.mode !== 'full') {
    const last = Number(rows[rows.length - 1]?.score);
    const above = (cut: number): boolean => rows.length === filter.limit && last > cut * (1 + 1e-9) + 1e-12;
    const exact = pruning.mode === 'single' ? next === null || above(next) : above(bound);
    if (!exact) ({ rows, next } = await run('full'));
  }
  const whole = await memoryScores(
    ctx,
    filter.agentId,
    users,
    rows.map((r) => ({ rid: Number(r.rid), chunks: r.chunk_count })),
    { terms, groups, phrases: JSON.stringify(phrases) },
    { docs, totalLength: total },
  );
  return rows.map((r) => {
    const memoryScore = whole.get(Number(r.rid));
    return {
      id: r.id as string,
      revision: Number(r.revision),
      score: Number(r.score),
      ...(r.start_at === null ? {} : { chunk: chunkOf(r) }),
      ...(memoryScore === undefined ? {} : { memoryScore }),
      ...(briefs === undefined ? {} : { brief: r.brief_ok === true ? toBrief(r as MemoryRow) : null }),
    };
  });
}

/**
 * Reading a posting through the key costs several times reading the next one of a scan, so a free term is left
 * out of candidate generation when it has at least this many times the postings of the candidate terms left.
 */
const PRUNE_RATIO = 4;

const NO_PRUNING = { mode: 'full', skipped: new Set<string>() } as const;

/**
 * The `any`-mode free terms that make no candidates (MaxScore), and how their units are then found: the `k` most
 * common free terms, for the largest `k` whose `k`-th term has at least {@link PRUNE_RATIO} times the postings
 * of the free terms and phrases left. One such term (and no score-only term) is searched `single`; more, or
 * score-only terms, leave the `bound`, which needs the terms left to hold at least `limit` postings (candidates
 * enough to fill the answer). Phrase terms always make candidates.
 */
function planPruning(
  plan: Bm25Plan,
  df: ReadonlyMap<string, number>,
  limit: number,
): { readonly mode: Pruning; readonly skipped: ReadonlySet<string> } {
  const free = new Set<string>();
  const counted = new Set<string>();
  let left = 0;
  let entries = 0;
  let scoreOnly = false;
  for (const t of plan.terms) {
    if (t.role.kind === 'score') scoreOnly = true;
    else if (!counted.has(t.term)) {
      counted.add(t.term);
      left += df.get(t.term) ?? 0;
    }
    if (t.role.kind === 'free') {
      free.add(t.term);
      entries += 1;
    }
  }
  const singleAllowed = !scoreOnly && entries === free.size;
  const sorted = [...free].sort((a, b) => (df.get(b) ?? 0) - (df.get(a) ?? 0));
  let best = 0;
  for (const [k, term] of sorted.entries()) {
    const n = df.get(term) ?? 0;
    left -= n;
    if (left <= 0) break;
    if (n >= PRUNE_RATIO * left && ((k === 0 && singleAllowed) || left >= limit)) best = k + 1;
  }
  if (best === 0) return NO_PRUNING;
  return { mode: best === 1 && singleAllowed ? 'single' : 'bound', skipped: new Set(sorted.slice(0, best)) };
}

/** Lexical search of one agent's active rows (see the module comment). */
export function searchLexical(ctx: PgContext, query: LexicalQuery): Promise<LexicalResult> {
  return ctx.op('searchLexical', async () => {
    const checked = callRules.checkLexicalQuery(query, RECALLABLE_KINDS);
    const { agentId, limit, mode } = checked;
    const kinds = [...checked.kinds];
    const tags = [...checked.tags];
    // Every filter is checked up front, even when no term survives (a bad one is refused, never ignored); so
    // are the folded re-read's options, as `revalidateBrief` checks them (its errors).
    const scope = {
      memoryFilter: query.filter,
      time: query.time,
      archived: includeArchived(query.includeArchived),
      briefs: query.briefs,
    };
    filterSql(query.filter, []);
    timeSql(query.time, []);
    if (query.briefs !== undefined) readScope(query.briefs, []);
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
