/**
 * The BM25 index: the store's own postings and statistics, so that `any`-mode lexical search is exact Okapi
 * BM25 with settable k1 and b and per-agent statistics (FTS5's `bm25()` fixes k1 = 1.2, b = 0.75 and counts
 * every agent's rows in its statistics).
 *
 * Tables (schema v3): `lexical_postings(agent_id, term, rid, tf, length)` — one row per distinct term of an
 * indexed unit, with (schema v10) the unit's length, so scoring reads no second table; `lexical_docs(rid,
 * agent_id, length, terms)` — the unit's length in tokens and (schema v7) the JSON
 * array of its distinct terms, by which its postings are removed, so the postings need no second index on
 * `rid`, and (schema v20) its memory's `user_id`; `lexical_stats(agent_id, docs, total_length)` — the agent's unit
 * count and total length; `lexical_user_stats` (schema v20) — the same per user. A unit is a memory row
 * (`rid` is the row's rowid); a longer memory split into chunks indexes each chunk as its own unit.
 *
 * The postings are kept in two levels (schema v11), as a log-structured merge tree of two levels would:
 * `lexical_postings_fresh` (same columns and key) takes a large agent's postings of each write transaction and
 * stays small; once it holds `POSTINGS_MERGE.at` postings they move into `lexical_postings` in one sorted
 * statement. A posting's key is (agent, term, unit), so a batch of a large agent written straight into the
 * large table touched one of its leaves per distinct term — nearly all of the agent's once it has many rows —
 * and each touched page was rewritten at each commit; a merge touches each of them at most once for many
 * batches. A small agent (fewer tokens than `POSTINGS_MERGE.directBelow`) spans no more leaves of the main
 * table than the fresh table holds, so its postings go straight there, written once instead of twice. The
 * choice is made per agent per flush, so a unit's postings are always all in one table. Readers (scoring,
 * document frequencies, removal, the integrity check) read both tables.
 *
 * The score of a unit d for query terms q is Σ_t idf(t) · tf·(k1 + 1) / (tf + k1·(1 − b + b·|d|/avgdl)), with
 * Lucene's non-negative idf(t) = ln(1 + (N − df + 0.5)/(df + 0.5)) (Robertson & Zaragoza 2009, "The
 * Probabilistic Relevance Framework: BM25 and Beyond").
 */

import { type Bm25Settings, bm25Idf, DEFAULT_BM25, forEachIndexWord, stem } from '@engram/store/port-kit';
import {
  type AllSql,
  chunkSize,
  FRESH_POSTINGS,
  FRESH_POSTINGS_DDL,
  type GetSql,
  insertPostingsSql,
  MAIN_POSTINGS,
  mergeFreshPostings,
  POSTINGS_CHUNK,
  POSTINGS_MERGE,
  type PostingsTable,
  postingsTableDdl,
  type RunSql,
} from './lexical-postings.js';
import { userKey } from './sqlite/user-key.js';

export type { Bm25Settings };
export { bm25Idf, DEFAULT_BM25 };

/**
 * Each user's statistics in an agent (schema v20): the unit count and total length of the agent's own units
 * (`user_id` '') and of each user's, by the user id itself (each unit's is on `lexical_docs`), so that a
 * user-scoped search scores with the statistics of the units it can see: another user's writes never move its
 * scores (its explanation shows them) and so never tell it which words that user wrote. `lexical_stats` keeps
 * the agent's totals for whole-agent searches. Each row keeps its user's key too (`sqlite/user-key.ts`), by
 * which a search finds whether another user of the agent shares its key (then, and only then, its document
 * frequencies check each posting's user: `search-bm25.ts`).
 */
export const LEXICAL_USER_STATS_DDL = `CREATE TABLE IF NOT EXISTS lexical_user_stats (
  agent_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  user_key INTEGER NOT NULL DEFAULT 0,
  docs INTEGER NOT NULL,
  total_length INTEGER NOT NULL,
  PRIMARY KEY (agent_id, user_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS lexical_user_stats_key ON lexical_user_stats(agent_id, user_key);
`;

/** The SQL the BM25 index adds to the schema (schema v3; the fresh postings since v11, user statistics since v20). */
export const LEXICAL_INDEX_DDL: string = `
${postingsTableDdl(MAIN_POSTINGS)}
CREATE INDEX IF NOT EXISTS lexical_postings_rid ON lexical_postings(rid);
${FRESH_POSTINGS_DDL}
CREATE TABLE IF NOT EXISTS lexical_docs (
  rid INTEGER PRIMARY KEY,
  agent_id TEXT NOT NULL,
  length INTEGER NOT NULL,
  terms TEXT,
  user_id TEXT
);
CREATE TABLE IF NOT EXISTS lexical_stats (
  agent_id TEXT PRIMARY KEY,
  docs INTEGER NOT NULL,
  total_length INTEGER NOT NULL
) WITHOUT ROWID;
${LEXICAL_USER_STATS_DDL}`;

// The unit lengths go in as bound values like the postings (see `insertPostingsSql`), `DOCS_CHUNK` units a
// statement.
const DOCS_CHUNK = 256;

// The unit lengths: one statement shape of `DOCS_CHUNK` rows, a short last chunk padded with null rows that the
// statement skips (binding a few hundred nulls costs less than a statement per bit of the remainder).
const INSERT_DOCS = `INSERT INTO lexical_docs(rid, agent_id, length, terms, user_id)
  SELECT column1, column2, column3, column4, column5
  FROM (VALUES ${new Array<string>(DOCS_CHUNK).fill('(?, ?, ?, ?, ?)').join(', ')})
  WHERE column1 IS NOT NULL`;
/** The width of a unit's row in `INSERT_DOCS`. */
const DOC_COLUMNS = 5;

// `WHERE true` keeps SQLite from reading `ON CONFLICT` as a join constraint of the SELECT.
const ADD_STATS = `INSERT INTO lexical_stats(agent_id, docs, total_length)
  SELECT value ->> 0, value ->> 1, value ->> 2 FROM json_each(?) WHERE true
  ON CONFLICT(agent_id) DO UPDATE SET docs = docs + excluded.docs, total_length = total_length + excluded.total_length`;
/** The users' statistics, as `ADD_STATS` (`[agent, user id or '', user key, docs, length]` each). */
const ADD_USER_STATS = `INSERT INTO lexical_user_stats(agent_id, user_id, user_key, docs, total_length)
  SELECT value ->> 0, value ->> 1, value ->> 2, value ->> 3, value ->> 4 FROM json_each(?) WHERE true
  ON CONFLICT(agent_id, user_id) DO UPDATE
    SET docs = docs + excluded.docs, total_length = total_length + excluded.total_length`;
/** The same upsert, giving back each agent's new total length (which level its postings go to). */
const ADD_STATS_RETURNING = `${ADD_STATS}
  RETURNING agent_id, total_length`;

/**
 * One term's postings in a batch: `[rid, tf, length, userKey, rid, tf, length, userKey, …]`, in the order the
 * units were added. The last posting belongs to the unit being added while its tokens are counted (its length is
 * filled in after).
 */
type TermPostings = number[];

/** One term of an agent's batch and its postings. */
interface BatchTerm {
  readonly term: string;
  readonly postings: TermPostings;
}

/**
 * An agent's terms in a batch, each word seen so far with its term (so a word is stemmed once a batch), and the
 * agent's postings in the batch.
 */
interface AgentTerms {
  readonly byTerm: Map<string, BatchTerm>;
  readonly byWord: Map<string, BatchTerm>;
  postings: number;
}

/**
 * Units waiting to be written to the BM25 index. A write transaction adds every unit it indexes here and
 * writes them before it commits (`flush`): multi-row inserts of the postings, one statement per 1,024 postings
 * or fewer, in key order (agent, term, unit), so the B-tree is written in order; multi-row inserts of the unit
 * lengths, one statement per 256 units; one upsert of the statistics of the agents touched and one of their users. The rows are exactly those unit-by-unit indexing
 * writes, so scores are unchanged. Each token is counted straight into its agent's postings of the batch (maps
 * per agent and batch, none per unit), so no per-posting sort is needed either.
 */
export class LexicalBatch {
  #agents = new Map<string, AgentTerms>();
  #docs: (number | string | null)[] = [];
  #units = 0;
  /** False once a unit was added with a lower key than the one before (chunks, edits): the postings then get sorted. */
  #inOrder = true;
  #lastRid = -1;
  #stats = new Map<string, [docs: number, totalLength: number]>();
  /** Per agent, per user id ('' for the agent's own): `[docs, totalLength]`. */
  #userStats = new Map<string, Map<string, [docs: number, totalLength: number]>>();
  /** Postings in the fresh table, as far as this batch's flushes know (undefined: counted at the next flush). */
  #fresh: number | undefined;

  /** Units waiting to be written. */
  get size(): number {
    return this.#units;
  }

  // The unit being added: its key, its agent's maps, its length so far, its postings (each its term's list) and
  // distinct terms in the order of their first occurrence. Kept on the batch, with the two token callbacks, so
  // that adding a unit allocates no closure.
  #unitRid = 0;
  #unitUser = 0;
  #unitLength = 0;
  #unitLists: TermPostings[] = [];
  #unitTerms: string[] = [];
  #byTerm = new Map<string, BatchTerm>();
  #byWord = new Map<string, BatchTerm>();

  /**
   * Tokenizes one unit's text (NFKC) and keeps its rows for `flush`: its postings with its memory's user key
   * (`sqlite/user-key.ts`), its length row and statistics with the user id (null, the default, for the agent's
   * own). The unit must not be indexed yet.
   */
  add(rid: number, agentId: string, text: string, userId: string | null = null): void {
    let agent = this.#agents.get(agentId);
    if (agent === undefined) {
      agent = { byTerm: new Map(), byWord: new Map(), postings: 0 };
      this.#agents.set(agentId, agent);
    }
    if (rid < this.#lastRid) this.#inOrder = false;
    this.#lastRid = rid;
    this.#unitRid = rid;
    this.#unitUser = userKey(userId);
    this.#unitLength = 0;
    this.#byTerm = agent.byTerm;
    this.#byWord = agent.byWord;
    forEachIndexWord(text, this.#onWord, this.#onCjk);
    const length = this.#unitLength;
    const lists = this.#unitLists;
    for (const list of lists) list[list.length - 2] = length;
    agent.postings += lists.length;
    this.#units += 1;
    this.#docs.push(rid, agentId, length, JSON.stringify(this.#unitTerms), userId);
    lists.length = 0;
    this.#unitTerms.length = 0;
    const s = this.#stats.get(agentId);
    if (s === undefined) this.#stats.set(agentId, [1, length]);
    else {
      s[0] += 1;
      s[1] += length;
    }
    let users = this.#userStats.get(agentId);
    if (users === undefined) {
      users = new Map();
      this.#userStats.set(agentId, users);
    }
    const user = userId ?? '';
    const u = users.get(user);
    if (u === undefined) users.set(user, [1, length]);
    else {
      u[0] += 1;
      u[1] += length;
    }
  }

  /** A word of the unit: its term is looked up once a batch, then found by the word. */
  readonly #onWord = (word: string): void => {
    let entry = this.#byWord.get(word);
    if (entry === undefined) {
      entry = this.#termEntry(stem(word));
      this.#byWord.set(word, entry);
    }
    this.#count(entry);
  };

  /** A CJK term of the unit. */
  readonly #onCjk = (term: string): void => {
    this.#count(this.#termEntry(term));
  };

  #termEntry(term: string): BatchTerm {
    let entry = this.#byTerm.get(term);
    if (entry === undefined) {
      entry = { term, postings: [] };
      this.#byTerm.set(term, entry);
    }
    return entry;
  }

  /** Counts one token of the unit being added. */
  #count(entry: BatchTerm): void {
    this.#unitLength += 1;
    const rid = this.#unitRid;
    const list = entry.postings;
    if (list.length > 0 && list[list.length - 4] === rid) {
      // A repeat in this unit (units are added once, so the last posting with its rid is this unit's).
      list[list.length - 3] = (list[list.length - 3] as number) + 1;
    } else {
      list.push(rid, 1, 0, this.#unitUser);
      this.#unitLists.push(list);
      this.#unitTerms.push(entry.term);
    }
  }

  /** Forgets the waiting units (their transaction rolled back, and with it any insert or merge of the fresh postings). */
  clear(): void {
    this.#reset();
    this.#fresh = undefined;
  }

  #reset(): void {
    this.#agents = new Map();
    this.#unitLists.length = 0;
    this.#unitTerms.length = 0;
    this.#inOrder = true;
    this.#lastRid = -1;
    this.#docs = [];
    this.#units = 0;
    this.#stats.clear();
    this.#userStats.clear();
  }

  /**
   * Writes the waiting units, none when nothing waits: one statement of the statistics (and one of the users' statistics), the postings in
   * multi-row inserts of up to 1,024 postings (whole chunks, then the rest in halving sizes; one run of chunks
   * per table written), the unit lengths 256 a statement. With `levels` (readers on the same connection) each
   * agent's postings go straight into the main table while the agent is small (its total length after this
   * batch, read back from the statistics' upsert, is below `POSTINGS_MERGE.directBelow`), else into the fresh
   * table, which is merged into the main one once it holds `POSTINGS_MERGE.at` postings; without it (a bulk
   * rebuild) all go straight into the main table. With `stats` false the agents' statistics are left to the
   * caller (a bulk rebuild recomputes them once; with `levels`, every agent's postings then go to the fresh table).
   */
  flush(run: RunSql, stats = true, levels?: { get: GetSql; all: AllSql }): void {
    if (this.#units === 0) return;
    const agentsTerms = this.#agents;
    const inOrder = this.#inOrder;
    const docs = this.#docs;
    const units = this.#units;
    const agents = [...this.#stats].map(([agentId, [n, sum]]) => [agentId, n, sum]);
    const users: [string, string, number, number, number][] = [];
    for (const [agentId, byUser] of this.#userStats) {
      for (const [user, [n, sum]] of byUser)
        users.push([agentId, user, userKey(user === '' ? null : user), n, sum]);
    }
    this.#reset();
    const direct = new Set<string>();
    if (stats && levels !== undefined) {
      const totals = levels.all<{ agent_id: string; total_length: number }>(
        ADD_STATS_RETURNING,
        JSON.stringify(agents),
      );
      for (const t of totals) if (t.total_length < POSTINGS_MERGE.directBelow) direct.add(t.agent_id);
    } else if (stats) {
      run(ADD_STATS, JSON.stringify(agents));
    }
    if (stats) run(ADD_USER_STATS, JSON.stringify(users));
    const main: string[] = [];
    const fresh: string[] = [];
    for (const agentId of [...agentsTerms.keys()].sort()) {
      (levels === undefined || direct.has(agentId) ? main : fresh).push(agentId);
    }
    writePostings(run, MAIN_POSTINGS, main, agentsTerms, inOrder);
    const added = writePostings(run, FRESH_POSTINGS, fresh, agentsTerms, inOrder);
    for (let start = 0; start < units; start += DOCS_CHUNK) {
      const values = docs.slice(start * DOC_COLUMNS, (start + DOCS_CHUNK) * DOC_COLUMNS);
      for (let i = values.length; i < DOCS_CHUNK * DOC_COLUMNS; i += 1) values.push(null);
      run(INSERT_DOCS, ...values);
    }
    if (levels === undefined || added === 0) return;
    const held =
      this.#fresh === undefined
        ? (levels.get<{ n: number }>('SELECT count(*) AS n FROM lexical_postings_fresh')?.n ?? 0)
        : this.#fresh + added;
    if (held >= POSTINGS_MERGE.at) {
      mergeFreshPostings(run);
      this.#fresh = 0;
    } else {
      this.#fresh = held;
    }
  }
}

/**
 * Inserts the batch's postings of `agentIds` (sorted) into `table` in key order (agent, term, unit; strings by
 * UTF-16 code units), `[agent,] term, rid, tf, length, userKey` each, bound one chunk at a time; returns how many.
 */
function writePostings(
  run: RunSql,
  table: PostingsTable,
  agentIds: readonly string[],
  agentsTerms: ReadonlyMap<string, AgentTerms>,
  inOrder: boolean,
): number {
  let total = 0;
  for (const agentId of agentIds) total += (agentsTerms.get(agentId) as AgentTerms).postings;
  const oneAgent = agentIds.length === 1;
  let left = total;
  let n = chunkSize(left, POSTINGS_CHUNK);
  let chunk: unknown[] = [];
  let inChunk = 0;
  for (const agentId of agentIds) {
    if (oneAgent) chunk.push(agentId);
    const { byTerm } = agentsTerms.get(agentId) as AgentTerms;
    for (const term of [...byTerm.keys()].sort()) {
      const postings = (byTerm.get(term) as BatchTerm).postings;
      const list = inOrder ? postings : inRidOrder(postings);
      for (let i = 0; i < list.length; i += 4) {
        if (oneAgent) chunk.push(term, list[i], list[i + 1], list[i + 2], list[i + 3]);
        else chunk.push(agentId, term, list[i], list[i + 1], list[i + 2], list[i + 3]);
        inChunk += 1;
        if (inChunk === n) {
          run(insertPostingsSql(n, oneAgent, table), ...chunk);
          left -= n;
          n = chunkSize(left, POSTINGS_CHUNK);
          chunk = oneAgent ? [agentId] : [];
          inChunk = 0;
        }
      }
    }
  }
  return total;
}

/** A term's `[rid, tf, length, userKey, …]` postings by rid (units are usually added in rid order; chunks and edits may not be). */
function inRidOrder(list: TermPostings): TermPostings {
  let sorted = true;
  for (let i = 4; i < list.length; i += 4) {
    if ((list[i] as number) < (list[i - 4] as number)) {
      sorted = false;
      break;
    }
  }
  if (sorted) return list;
  const postings: [number, number, number, number][] = [];
  for (let i = 0; i < list.length; i += 4) {
    postings.push([list[i] as number, list[i + 1] as number, list[i + 2] as number, list[i + 3] as number]);
  }
  postings.sort((a, b) => a[0] - b[0]);
  return postings.flat();
}

/**
 * Recomputes each user's statistics in every agent ('' for the agent's own) from the indexed units; the users'
 * keys are left 0 (SQL cannot compute them): `fillUserStatKeys` sets them.
 */
export const REBUILD_LEXICAL_USER_STATS: string = `DELETE FROM lexical_user_stats;
INSERT INTO lexical_user_stats(agent_id, user_id, docs, total_length)
  SELECT agent_id, coalesce(CAST(user_id AS TEXT), ''), count(*), total(length) FROM lexical_docs
  GROUP BY agent_id, coalesce(CAST(user_id AS TEXT), '');`;

/** Recomputes every agent's statistics, and each of its users', from the indexed units. */
export const REBUILD_LEXICAL_STATS: string = `DELETE FROM lexical_stats;
INSERT INTO lexical_stats(agent_id, docs, total_length)
  SELECT agent_id, count(*), coalesce(sum(length), 0) FROM lexical_docs GROUP BY agent_id;
${REBUILD_LEXICAL_USER_STATS}`;

/**
 * Removes one unit's postings and statistics (nothing when it is not indexed): its postings by their keys, in
 * both the main and the fresh table, from the terms its length row lists. Postings without a length row (only a
 * damaged file has them) are found by a scan.
 */
export function unindexLexicalUnit(run: RunSql, get: GetSql, rid: number): void {
  // The unit's user as the statistics name it (text; '' for the agent's own), whatever type the row holds.
  const doc = get<{ agent_id: string; length: number; terms: string | null; user: string }>(
    "SELECT agent_id, length, terms, coalesce(CAST(user_id AS TEXT), '') AS user FROM lexical_docs WHERE rid = ?",
    rid,
  );
  for (const table of [MAIN_POSTINGS, FRESH_POSTINGS]) {
    if (doc === undefined || doc.terms === null) {
      run(`DELETE FROM ${table} WHERE rid = ?`, rid);
    } else {
      run(
        `DELETE FROM ${table} WHERE agent_id = ? AND term IN (SELECT value FROM json_each(?)) AND rid = ?`,
        doc.agent_id,
        doc.terms,
        rid,
      );
    }
  }
  if (doc === undefined) return;
  run('DELETE FROM lexical_docs WHERE rid = ?', rid);
  run(
    'UPDATE lexical_stats SET docs = docs - 1, total_length = total_length - ? WHERE agent_id = ?',
    doc.length,
    doc.agent_id,
  );
  run(
    'UPDATE lexical_user_stats SET docs = docs - 1, total_length = total_length - ? WHERE agent_id = ? AND user_id = ?',
    doc.length,
    doc.agent_id,
    doc.user,
  );
  // A user's row that counts nothing any more goes, so an erased user leaves no row behind.
  run(
    'DELETE FROM lexical_user_stats WHERE agent_id = ? AND user_id = ? AND docs <= 0',
    doc.agent_id,
    doc.user,
  );
}

/** Sets the user key of every user's statistics row (after `REBUILD_LEXICAL_USER_STATS`). */
export function fillUserStatKeys(db: {
  prepare(sql: string): { all(...params: unknown[]): unknown[]; run(...params: unknown[]): unknown };
}): void {
  const users = db.prepare("SELECT DISTINCT user_id FROM lexical_user_stats WHERE user_id <> ''").all() as {
    user_id: string;
  }[];
  const set = db.prepare('UPDATE lexical_user_stats SET user_key = ? WHERE user_id = ?');
  for (const u of users) set.run(userKey(u.user_id), u.user_id);
}
