/**
 * `any`-mode lexical search over the BM25 index (see `lexical-index.ts` and `bm25-plan.ts`): exact Okapi BM25
 * with the store's k1 and b and the agent's own statistics, OR semantics, phrases checked with the word index.
 */
import { MEMORY_KINDS } from '@engram/contracts';
import type { Bm25Plan, LexicalHit } from '@engram/store/port-kit';
import { buildMatch, storedChunkCount } from '@engram/store/port-kit';
import { bm25Idf } from '../lexical-index.js';
import { CHUNK_KEY_SPAN, chunkSpan } from './chunks.js';
import type { StoreContext } from './context.js';
import { type FilterParams, filterSql, scopeKey, type TimeParams, tagsSql, timeSql } from './filters.js';
import { compareIds } from './id-order.js';
import { type KnnUsers, knnUsers, knnUsersSql, NO_USER_KEY } from './user-key.js';

/**
 * Units the scoring statement's second band keeps per wanted memory (see `bm25Sql`): it is joined only when the
 * first band (the best `limit` units) left fewer than `limit` memories, because chunks of one memory are several
 * units or a filter dropped some.
 */
const WIDE_FACTOR = 2;

/**
 * The kinds filter as one bound parameter per kind (`@kind0` … `@kind6`, null when unused): a constant list, which
 * SQLite checks per row far cheaper than `IN (SELECT value FROM json_each(@kinds))` (a tenth to a fifth of the
 * statement at 10k rows). The kinds are validated and deduplicated, so there are at most `MEMORY_KINDS.length`.
 */
const KIND_PARAMS = MEMORY_KINDS.map((_, i) => `@kind${i}`).join(', ');

/** Role codes in the weights JSON: a free term, a score-only term, or the index of its phrase. */
const FREE = -1;
const SCORE_ONLY = -2;

/**
 * The phrase parts of a scoring statement: one CTE per phrase with the units holding it (`ph<i>`, read from the
 * word index, bound as `@phrase<i>`), and the condition that lets a phrase's term count only in those units.
 */
function phraseSql(phrases: number): { phraseCtes: string[]; phraseConds: string[] } {
  const phraseCtes: string[] = [];
  const phraseConds: string[] = [];
  for (let i = 0; i < phrases; i += 1) {
    phraseCtes.push(
      `ph${i}(rid) AS (SELECT rowid FROM memories_fts_words WHERE memories_fts_words MATCH @phrase${i})`,
    );
    phraseConds.push(`(w.grp = ${i} AND p.rid IN ph${i})`);
  }
  return { phraseCtes, phraseConds };
}

/**
 * The condition on a posting (`p`) that it belongs to a unit a user scope sees, empty for the whole agent: the
 * index key narrows the postings (`user-key.ts`); when another user of the agent shares the key (`@shared`,
 * `sharedKey`), a posting of the key must also be a unit of the user itself (its length row names the user), so
 * a user whose key collides with another's never counts the other's units in its statistics. Without a shared
 * key the key alone is exact and no posting is looked up. Binds `@uk`, `@su` (the user id) and `@shared`.
 */
function scopedPostingSql(users: KnnUsers): string {
  const own =
    'CASE WHEN @shared THEN EXISTS (SELECT 1 FROM lexical_docs d WHERE d.rid = p.rid AND d.user_id = @su) ELSE 1 END';
  return users === 'one'
    ? ` AND p.user_key = @uk AND ${own}`
    : users === 'own'
      ? ` AND (p.user_key = ${NO_USER_KEY} OR (p.user_key = @uk AND ${own}))`
      : '';
}

/** The condition on a unit's length row (`lexical_docs`) that a user scope sees it, empty for the whole agent. */
function scopedDocSql(users: KnnUsers): string {
  return users === 'one'
    ? ' AND user_id = @su'
    : users === 'own'
      ? ' AND (user_id IS NULL OR user_id = @su)'
      : '';
}

/**
 * The statement of the statistics and the query terms' document frequencies for a user restriction: the agent's
 * totals (`none`), or the sum of the visible users' rows (the user's, and '' for the agent's own with `own`) and
 * the postings of the units the scope sees.
 */
function statsSql(users: KnnUsers): string {
  const df = (table: string): string => `SELECT term, count(*) AS n FROM ${table} p
            WHERE agent_id = @agent AND term IN (SELECT value FROM json_each(@terms))${scopedPostingSql(users)}
            GROUP BY term`;
  const source =
    users === 'none'
      ? 'FROM lexical_stats s WHERE s.agent_id = @agent'
      : // total(), not sum(): a stored count another tool made huge must not overflow the sum and fail the search.
        `FROM (SELECT total(docs) AS docs, total(total_length) AS total_length FROM lexical_user_stats
          WHERE agent_id = @agent AND user_id IN (${users === 'own' ? "'', " : ''}@su)) s`;
  return `SELECT s.docs AS docs, s.total_length AS total_length,
        (SELECT json_group_array(json_array(term, n)) FROM (
          SELECT term, sum(n) AS n FROM (
            ${df('lexical_postings')}
            UNION ALL
            ${df('lexical_postings_fresh')})
          GROUP BY term)) AS df
       ${source}`;
}

/**
 * The bound parameters of a user restriction (`@uk`, `@su`, `@shared`: whether another user of the agent has
 * statistics under the same key), none for the whole agent.
 */
function scopedParams(
  ctx: StoreContext,
  agentId: string,
  scope: FilterParams,
  users: KnnUsers,
  uk: number,
): Record<string, unknown> {
  if (users === 'none') return {};
  const su = scope.fUser ?? scope.fForUser;
  const shared = ctx
    .stmt(
      'fts',
      'SELECT 1 AS x FROM lexical_user_stats WHERE agent_id = ? AND user_key = ? AND user_id <> ? LIMIT 1',
    )
    .get<{ x: number }>(agentId, BigInt(uk), su);
  return { uk: BigInt(uk), su, shared: shared === undefined ? 0 : 1 };
}

function bm25Sql(phrases: number, scope: FilterParams & TimeParams, tags: string): string {
  const { phraseCtes, phraseConds } = phraseSql(phrases);
  // `MATERIALIZED` and `CROSS JOIN` fix the plan: the few query terms drive index lookups into the postings.
  // The hits are one grouped arm per postings table (main, then fresh): a unit's postings are all in one of
  // them, so each unit is summed once, over the same rows in the same order as from one table, and each arm
  // stays a plain join into its sorter (one `UNION ALL` of the postings under a single `GROUP BY` would run as a
  // co-routine, copying every posting).
  // `+cand` in the cut keeps SQLite from building an automatic index over the hits for it (a sort of every
  // hit, more than the cut's own top-n sort: a quarter of the statement's time for a query with a common term).
  // The cut score is read once (`lim`): it bounds the join and tells the caller whether the cut dropped units
  // (a second `(SELECT … FROM cut)` would run the cut's scan and sort again).
  // The statement returns the passing units as they come; `bestPerMemory` picks each memory's best unit and
  // orders and limits them in JavaScript (a `GROUP BY m.rid` and an `ORDER BY` here would be two more sorters,
  // a large share of the statement).
  // The join to the memories runs in two bands, both in this one statement. The first joins the units at or
  // above the `limit`-th best score (`lim`), which is the whole answer when they hold `limit` memories that
  // pass: no chunks and no filtered rows among them, the common case. Only when they hold fewer (`short`, a
  // constant test SQLite makes once, before the band's loop) does the second band join the units down to the
  // (2 · limit)-th score (`wide`, sorted only then), and a last row (key null) says whether that cut dropped
  // units. Both bands together equal a single (2 · limit) cut, so the hits and the reruns are those of that cut,
  // while a query whose first band suffices joins only about half as many units.
  // Rows are [key, score, id, revision, chunk count]: the memory's rid is key % 2^40, computed by the caller
  // (two columns fewer per row than reading the rid and the cut score per row).
  // A user scope is applied to the postings too (`user-key.ts`): only the scope's units are scored, grouped and
  // cut, so a user's search ranks that user's and the agent's own units, not every unit of the agent to find few
  // of them in its bands (which then joined every hit to its memory). The memories' own condition (`filterSql`)
  // stays the rule.
  const users = knnUsersSql(knnUsers(scope).users, 'p.user_key');
  const hitArms = ['lexical_postings', 'lexical_postings_fresh']
    .map(
      (table) => `SELECT p.rid,
        sum(w.idf * p.tf * (@k1 + 1.0) / (p.tf + @k1 * (1.0 - @b + @b * p.length / @avgdl))),
        max(w.grp <> ${SCORE_ONLY})
      FROM w CROSS JOIN ${table} p ON p.agent_id = @agent AND p.term = w.term
      WHERE (w.grp < 0 ${phraseConds.map((c) => `OR ${c}`).join(' ')})${users}
      GROUP BY p.rid`,
    )
    .join('\n      UNION ALL\n      ');
  // The candidate units `h` whose score passes `band`, joined to their memories and filtered (`from`: a
  // one-row table before the hits, whose condition in `band` then skips their scan when it fails). `+h.cand`
  // keeps SQLite from building an automatic index over the hits for the second band, where they are an inner
  // loop (its plan had one: a sort of every hit).
  const joined = (
    from: string,
    band: string,
  ): string => `SELECT h.rid, h.score, m.id, m.revision, m.chunk_count
      FROM ${from} CROSS JOIN hits h CROSS JOIN memories m ON m.rid = h.rid % ${CHUNK_KEY_SPAN}
      WHERE ${band} AND +h.cand = 1
        AND m.agent_id = @agent AND ${timeSql(scope)} AND ${filterSql(scope)}
        AND m.kind IN (${KIND_PARAMS})
        ${tagsSql(tags)}`;
  return `WITH w(term, idf, grp) AS MATERIALIZED (
      SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]')
      FROM json_each(@weights)),
    ${phraseCtes.map((c) => `${c},`).join('\n    ')}
    hits(rid, score, cand) AS MATERIALIZED (
      ${hitArms}),
    cut(score) AS (SELECT score FROM hits WHERE +cand = 1 ORDER BY score DESC LIMIT 1 OFFSET @cutAt),
    lim(score) AS MATERIALIZED (SELECT (SELECT score FROM cut)),
    band(key, score, id, revision, chunks) AS MATERIALIZED (
      ${joined('lim c', 'h.score >= coalesce(c.score, -1.0)')}),
    short(yes) AS MATERIALIZED (SELECT CASE
      WHEN (SELECT score FROM lim) IS NULL THEN 0
      WHEN (SELECT count(*) FROM band) < @limit THEN 1
      WHEN (SELECT max(key) FROM band) < ${CHUNK_KEY_SPAN} THEN 0
      ELSE (SELECT count(DISTINCT key % ${CHUNK_KEY_SPAN}) FROM band) < @limit END),
    wide(score) AS MATERIALIZED (SELECT (
      SELECT score FROM hits WHERE +cand = 1 ORDER BY score DESC LIMIT 1 OFFSET @wideAt))
    SELECT key, score, id, revision, chunks FROM band
    UNION ALL
    ${joined('short s CROSS JOIN lim c', 's.yes AND h.score < c.score AND h.score >= coalesce((SELECT score FROM wide), -1.0)')}
    UNION ALL
    SELECT NULL, (SELECT score FROM wide), NULL, NULL, NULL FROM short WHERE yes`;
}

/**
 * The BM25 hits of one agent's active rows for a planned query, best first (score desc, id asc). The units
 * are chunks (a short memory is one): a memory scores as its best chunk (max over chunks), the hit names it.
 */
export function searchBm25(
  ctx: StoreContext,
  plan: Bm25Plan,
  filter: {
    readonly agentId: string;
    readonly kinds: string;
    readonly tags: string;
    readonly limit: number;
    /** The parameters of `filterSql` and `timeSql`. */
    readonly scope: FilterParams & TimeParams;
  },
): LexicalHit[] {
  if (plan.terms.length === 0) return [];
  const distinct = [...new Set(plan.terms.map((t) => t.term))];
  // The statistics and the terms' document frequencies in one statement: the agent's, or for a user scope those
  // of the units it can see (the user's and, with `forUser`, the agent's own), so another user's writes never
  // move a user's scores (`LEXICAL_USER_STATS_DDL`).
  const { users, uk } = knnUsers(filter.scope);
  const scoped = scopedParams(ctx, filter.agentId, filter.scope, users, uk);
  const stats = ctx
    .stmt('fts', statsSql(users))
    .get<{ docs: number | null; total_length: number | null; df: string }>({
      agent: filter.agentId,
      terms: JSON.stringify(distinct),
      ...scoped,
    });
  const docs = stats?.docs ?? 0;
  const totalLength = stats?.total_length ?? 0;
  if (stats === undefined || docs <= 0) return [];
  const avgdl = totalLength > 0 ? totalLength / docs : 1;
  const df = new Map(JSON.parse(stats.df) as [string, number][]);
  const weights = plan.terms.map((t): [string, number, number] => [
    t.term,
    bm25Idf(docs, df.get(t.term) ?? 0),
    t.role.kind === 'free' ? FREE : t.role.kind === 'score' ? SCORE_ONLY : t.role.phrase,
  ]);
  const token = ctx.agentToken(filter.agentId);
  const limit = filter.limit;
  // One parameter object for the run and its rerun (a copy of it per run cost more than its binding).
  const params: Record<string, unknown> = {
    weights: JSON.stringify(weights),
    agent: filter.agentId,
    k1: ctx.bm25.k1,
    b: ctx.bm25.b,
    avgdl,
    tags: filter.tags,
    limit,
    cutAt: limit - 1,
    wideAt: WIDE_FACTOR * limit - 1,
    ...filter.scope,
  };
  Object.assign(params, scoped);
  const kinds = JSON.parse(filter.kinds) as string[];
  for (let i = 0; i < MEMORY_KINDS.length; i += 1) params[`kind${i}`] = kinds[i] ?? null;
  plan.phrases.forEach((phrase, i) => {
    params[`phrase${i}`] = buildMatch(token, phrase);
  });
  const phrases = plan.phrases.length;
  const stmt = ctx.variant('fts', `bm25:${phrases}:${scopeKey(filter.scope, filter.tags)}`, () =>
    bm25Sql(phrases, filter.scope, filter.tags),
  );
  // Only the units scoring at least the limit-th best score are joined to their memories and filtered, then,
  // when they hold fewer than `limit` memories, those down to the (2 · limit)-th (see `bm25Sql`): when `limit`
  // memories pass, they are exactly the best `limit` (every better memory has a unit above the cut, ties
  // included). When fewer pass and the wider cut dropped units, the query runs again without a cut.
  let best = bestPerMemory(stmt.values<StatementRow>(params));
  if (best.memories.length < limit && best.cut) {
    params.cutAt = Number.MAX_SAFE_INTEGER;
    best = bestPerMemory(stmt.values<StatementRow>(params));
  }
  const rows = best.memories;
  rows.sort(byScoreThenId);
  const n = Math.min(rows.length, limit);
  const whole = memoryScores(
    ctx,
    rows.slice(0, n) as UnitRow[],
    params,
    phrases,
    { users, params: scoped },
    {
      docs,
      totalLength,
    },
  );
  const hits: LexicalHit[] = new Array(n);
  for (let i = 0; i < n; i += 1) {
    const [key, score, id, revision, chunks] = rows[i] as UnitRow;
    const rid = key % CHUNK_KEY_SPAN;
    const memoryScore = whole.get(rid);
    if (chunks <= 1) {
      hits[i] = memoryScore === undefined ? { id, revision, score } : { id, revision, score, memoryScore };
      continue;
    }
    const chunk = chunkSpan(ctx, filter.agentId, rid, Math.floor(key / CHUNK_KEY_SPAN));
    hits[i] = {
      id,
      revision,
      score,
      ...(chunk === undefined ? {} : { chunk }),
      ...(memoryScore === undefined ? {} : { memoryScore }),
    };
  }
  return hits;
}

/**
 * The memories' scores as whole documents (`LexicalHit.memoryScore`), given only when the answer holds a
 * chunked memory (else every hit is one unit and the chunk scores say it all): Okapi BM25 with each memory's
 * units' term frequencies and lengths summed, and statistics over the agent's memories rather than its units
 * (memories = units less the units past a memory's first chunk; document frequency = memories with the term).
 * Same terms, weights, phrase checks, k1 and b as the search. Reads the candidates' units by key, the query
 * terms' postings for their document frequencies, and the agent's extra chunk units by rid range.
 */
function memoryScores(
  ctx: StoreContext,
  rows: readonly UnitRow[],
  params: Record<string, unknown>,
  phrases: number,
  /** The user restriction and its bound parameters (`scopedParams`). */
  scope: { readonly users: KnnUsers; readonly params: Record<string, unknown> },
  stats: { readonly docs: number; readonly totalLength: number },
): Map<number, number> {
  const out = new Map<number, number>();
  if (!rows.some((row) => row[4] > 1)) return out;
  const units: number[] = [];
  for (const [key, , , , chunks] of rows) {
    const rid = key % CHUNK_KEY_SPAN;
    const count = storedChunkCount(chunks);
    for (let i = 0; i < count; i += 1) units.push(rid + i * CHUNK_KEY_SPAN);
  }
  const { users, params: scoped } = scope;
  const extra = ctx
    .stmt(
      'fts',
      `SELECT count(*) AS n FROM lexical_docs
       WHERE rid >= ${CHUNK_KEY_SPAN} AND agent_id = @agent${scopedDocSql(users)}`,
    )
    .get<{ n: number }>({ agent: params.agent, ...scoped });
  const memories = stats.docs - (extra?.n ?? 0);
  if (memories <= 0) return out;
  const weights = JSON.parse(params.weights as string) as [string, number, number][];
  const terms = [...new Set(weights.map((w) => w[0]))];
  const df = new Map<string, number>();
  const dfStmt = ctx.stmt(
    'fts',
    `SELECT t.value AS term, (SELECT count(*) FROM (
        SELECT p.rid % ${CHUNK_KEY_SPAN} FROM lexical_postings p
        WHERE p.agent_id = @agent AND p.term = t.value${scopedPostingSql(users)}
        UNION SELECT p.rid % ${CHUNK_KEY_SPAN} FROM lexical_postings_fresh p
        WHERE p.agent_id = @agent AND p.term = t.value${scopedPostingSql(users)})) AS n
      FROM json_each(@terms) t`,
  );
  for (const row of dfStmt.all<{ term: string; n: number }>({
    agent: params.agent,
    terms: JSON.stringify(terms),
    ...scoped,
  }))
    df.set(row.term, row.n);
  const avgdl = stats.totalLength > 0 ? stats.totalLength / memories : 1;
  const k1 = params.k1 as number;
  const b = params.b as number;
  const run: Record<string, unknown> = {
    units: JSON.stringify(units),
    weights: params.weights,
    agent: params.agent,
  };
  for (let i = 0; i < phrases; i += 1) run[`phrase${i}`] = params[`phrase${i}`];
  const stmt = ctx.variant('fts', `bm25-memory:${phrases}`, () => memoryScoresSql(phrases));
  // Rows are [memory rid, weight index, summed tf, memory length].
  for (const [rid, wid, tf, length] of stmt.values<[number, number, number, number]>(run)) {
    const term = weights[wid]?.[0];
    if (term === undefined) continue;
    const idf = bm25Idf(memories, df.get(term) ?? 0);
    const score = (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * length) / avgdl));
    out.set(rid, (out.get(rid) ?? 0) + score);
  }
  return out;
}

function memoryScoresSql(phrases: number): string {
  const { phraseCtes, phraseConds } = phraseSql(phrases);
  // A unit's postings are all in one of the two tables, so the arms never count a unit twice.
  const arms = ['lexical_postings', 'lexical_postings_fresh']
    .map(
      (table) => `SELECT p.rid % ${CHUNK_KEY_SPAN} AS mem, w.wid AS wid, p.tf AS tf
      FROM w CROSS JOIN u CROSS JOIN ${table} p ON p.agent_id = @agent AND p.term = w.term AND p.rid = u.key
      WHERE (w.grp < 0 ${phraseConds.map((c) => `OR ${c}`).join(' ')})`,
    )
    .join('\n      UNION ALL\n      ');
  return `WITH w(wid, term, grp) AS MATERIALIZED (
      SELECT key, json_extract(value, '$[0]'), json_extract(value, '$[2]') FROM json_each(@weights)),
    u(key) AS MATERIALIZED (SELECT value FROM json_each(@units)),
    ${phraseCtes.map((c) => `${c},`).join('\n    ')}
    len(mem, l) AS MATERIALIZED (SELECT d.rid % ${CHUNK_KEY_SPAN}, sum(d.length) FROM u
      JOIN lexical_docs d ON d.rid = u.key GROUP BY 1)
    SELECT h.mem, h.wid, sum(h.tf), len.l FROM (${arms}) h JOIN len ON len.mem = h.mem GROUP BY h.mem, h.wid`;
}

/** A passing unit: its key (the memory's rid plus its chunk index · 2^40), score, and its memory's id, revision and chunk count. */
type UnitRow = [number, number, string, number, number];
/** The statement's last row when its first band was short: the wider cut's score (null when it dropped nothing). */
type WideRow = [null, number | null, null, null, null];
type StatementRow = UnitRow | WideRow;

/**
 * Each memory's best unit (highest score; of equal scores the lowest key, the unit `max()` kept when SQLite
 * grouped them), and whether a cut dropped units: only when the first band was short (its last row says
 * whether the wider cut dropped any; without that row, fewer than `limit` memories means no cut applied).
 * Units keyed by their memory's rid (none past its first chunk) are each their own memory.
 */
function bestPerMemory(rows: StatementRow[]): { memories: UnitRow[]; cut: boolean } {
  let cut = false;
  const last = rows[rows.length - 1];
  if (last !== undefined && last[0] === null) {
    rows.pop();
    cut = last[1] !== null;
  }
  const units = rows as UnitRow[];
  let chunked = false;
  for (const unit of units) {
    if (unit[0] >= CHUNK_KEY_SPAN) {
      chunked = true;
      break;
    }
  }
  if (!chunked) return { memories: units, cut };
  const at = new Map<number, number>();
  const memories: UnitRow[] = [];
  for (const unit of units) {
    const rid = unit[0] % CHUNK_KEY_SPAN;
    const i = at.get(rid);
    if (i === undefined) {
      at.set(rid, memories.length);
      memories.push(unit);
      continue;
    }
    const held = memories[i] as UnitRow;
    if (unit[1] > held[1] || (unit[1] === held[1] && unit[0] < held[0])) memories[i] = unit;
  }
  return { memories, cut };
}

/** The answer's order: score descending, then id ascending in SQLite's byte order (`ORDER BY score DESC, m.id ASC`). */
function byScoreThenId(a: UnitRow, b: UnitRow): number {
  return b[1] - a[1] || compareIds(a[2], b[2]);
}
