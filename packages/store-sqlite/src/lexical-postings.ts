/**
 * The BM25 postings' tables across schema versions: the two levels of the postings (schema v11: the small fresh
 * table a large agent's writes go into, merged in bulk into the main table; a small agent's writes go straight
 * into the main table, see `POSTINGS_MERGE.directBelow`), the main table's migrations (v7 the units' term lists,
 * v10 each posting's unit length), and the statement runners the index writers take. The index itself (the batch
 * writer, removal, statistics) is `lexical-index.ts`.
 */

/** Runs one SQL statement (a store context's counted statement, or a plain database in a migration). */
export type RunSql = (sql: string, ...params: unknown[]) => { changes: number };
/** Reads one row. */
export type GetSql = <T>(sql: string, ...params: unknown[]) => T | undefined;
/** Runs one SQL statement and returns its rows (a statement with `RETURNING`). */
export type AllSql = <T>(sql: string, ...params: unknown[]) => T[];

/** The main postings table (the large second level). */
export const MAIN_POSTINGS = 'lexical_postings';
/** The fresh postings table (the small first level, see `FRESH_POSTINGS_DDL`). */
export const FRESH_POSTINGS = 'lexical_postings_fresh';
export type PostingsTable = typeof MAIN_POSTINGS | typeof FRESH_POSTINGS;

/**
 * The table of one level of the postings: both levels have the same columns and key (agent, term, unit), and
 * (schema v10) the unit's length in each posting, (schema v15) its memory's user key (`sqlite/user-key.ts`, 0 for
 * the agent's own), so a user-scoped search scores only the scope's postings.
 */
export function postingsTableDdl(table: PostingsTable): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  agent_id TEXT NOT NULL,
  term TEXT NOT NULL,
  rid INTEGER NOT NULL,
  tf INTEGER NOT NULL,
  length INTEGER,
  user_key INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (agent_id, term, rid)
) WITHOUT ROWID;`;
}

/**
 * Schema v11: the fresh postings, the small first level of the postings (same columns and key as
 * `lexical_postings`). A write transaction inserts a large agent's postings here (a small agent's go straight
 * into the main table, see `POSTINGS_MERGE.directBelow`); once the table holds `POSTINGS_MERGE.at` postings they
 * move into `lexical_postings` in one sorted statement (`mergeFreshPostings`).
 */
export const FRESH_POSTINGS_DDL: string = postingsTableDdl(FRESH_POSTINGS);

/**
 * Where a write transaction's postings go, and when the fresh postings move into the main table. Internal knobs
 * (tests lower or raise them), not part of the store's API.
 *
 * `directBelow`: an agent whose units hold fewer than `directBelow` tokens, this transaction's included (its
 * `lexical_stats.total_length`, read back from the statistics' upsert, so it costs no statement), has its
 * postings of the transaction written straight into the main table; a larger agent's go into the fresh table.
 * A unit's distinct terms are at most its tokens, so such an agent holds fewer than `directBelow` postings in the
 * main table: with `directBelow` = `at`, its key range there spans no more leaves than the whole fresh table can
 * hold, so a batch written there rewrites no more pages than in the fresh table, and each of its postings is
 * written once instead of twice (fresh, then merged). A large agent's range spans many more leaves than a batch
 * has distinct terms, and the fresh table's merge touches each of them once for many batches. 0 sends every
 * agent to the fresh table (one path for every agent), as some tests want.
 *
 * `at`: the fresh postings move into the main table once the fresh table holds `at` postings or more at the end
 * of a write transaction's flush.
 *
 * 65,536 postings: the fresh table then holds about 2 MiB (about 30 bytes a posting; SQLite's default page
 * cache is 2 MiB), so the pages each batch rewrites in it stay few, and a query term costs one more short index
 * seek. A merge writes each main-table leaf holding one of the fresh table's distinct terms once; the distinct
 * terms of 65,536 postings are far fewer than the postings (a vocabulary grows far slower than the text: 65,536
 * postings of the benchmark's 6,000-word Zipf workload are about 4,900 rows), where each 1,000-row batch written
 * straight into the main table touched one leaf per distinct term of its own. Smaller merges more often, each
 * still touching most of those leaves; larger makes every batch rewrite more of the fresh table's own leaves
 * and makes the merging write slower (the merge runs inside the write that crosses the threshold). 65,536 is
 * chosen for the size bound above, not fitted to a benchmark (see docs/design/bm25-and-postings.md).
 */
export const POSTINGS_MERGE: { at: number; directBelow: number } = { at: 65_536, directBelow: 65_536 };

// The postings go in as bound values, in multi-row inserts of up to `POSTINGS_CHUNK` postings: extracting each
// value from a JSON argument (`jsonb_each` with `->>` per field) cost SQLite about twice the instructions of
// binding it. A batch of one agent (the usual case) binds the agent once per statement. The unit lengths go in
// the same way (`lexical-index.ts`).
export const POSTINGS_CHUNK = 1024;
const postingsSql = new Map<number, string>();
const agentPostingsSql = new Map<number, string>();

/**
 * The insert of `n` postings into `table`: `[agent, term, rid, tf, length, userKey]` each, or with `oneAgent` the
 * agent then `[term, rid, tf, length, userKey]` each.
 */
export function insertPostingsSql(n: number, oneAgent: boolean, table: PostingsTable): string {
  const cache = oneAgent ? agentPostingsSql : postingsSql;
  const key = table === FRESH_POSTINGS ? n : -n;
  let sql = cache.get(key);
  if (sql === undefined) {
    sql = oneAgent
      ? `INSERT INTO ${table}(agent_id, term, rid, tf, length, user_key)
  SELECT ?, column1, column2, column3, column4, column5 FROM (VALUES ${new Array<string>(n).fill('(?, ?, ?, ?, ?)').join(', ')})`
      : `INSERT INTO ${table}(agent_id, term, rid, tf, length, user_key)
  VALUES ${new Array<string>(n).fill('(?, ?, ?, ?, ?, ?)').join(', ')}`;
    cache.set(key, sql);
  }
  return sql;
}

/** The largest statement size for `left` rows: `max` while that many are left, then halving (a bounded set of shapes). */
export function chunkSize(left: number, max: number): number {
  let n = max;
  while (n > left) n >>= 1;
  return n;
}

/**
 * Moves every fresh posting into the main table in key order (each main leaf is written at most once) and
 * empties the fresh table; runs inside the caller's write transaction. A key already in the main table (never
 * in an intact file: a unit's postings are written once, by one batch) is replaced by the fresh posting.
 */
export function mergeFreshPostings(run: RunSql): void {
  run(`INSERT OR REPLACE INTO lexical_postings(agent_id, term, rid, tf, length, user_key)
  SELECT agent_id, term, rid, tf, length, user_key FROM lexical_postings_fresh ORDER BY agent_id, term, rid`);
  run('DELETE FROM lexical_postings_fresh');
}

/**
 * Schema v7: each unit's distinct terms are kept with its length (`terms`, created with the table since v7,
 * added here to an older file), and the postings' index on `rid` goes: it cost a second B-tree insert per
 * posting. Units indexed before get their terms from their postings, through that index, before it goes.
 */
export function addLexicalTerms(db: {
  exec(sql: string): unknown;
  prepare(sql: string): { all(): unknown[] };
}): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('lexical_docs')").all() as {
    name: string;
  }[];
  if (!columns.some((c) => c.name === 'terms')) db.exec('ALTER TABLE lexical_docs ADD COLUMN terms TEXT');
  db.exec(`UPDATE lexical_docs SET terms = (
      SELECT json_group_array(p.term) FROM lexical_postings p WHERE p.rid = lexical_docs.rid)
    WHERE terms IS NULL;
    DROP INDEX IF EXISTS lexical_postings_rid;`);
}

/**
 * Schema v10: each posting carries its unit's length in tokens (`length`, created with the table since v10,
 * added here to an older file and filled from the units' length rows in one statement), so the BM25 scoring
 * statement reads the length with the posting instead of joining `lexical_docs` per hit. A posting whose unit
 * has no length row (only a damaged file has one; the integrity check reports its memory) keeps a null length
 * and scores nothing: without a length its unit cannot be scored.
 */
export function addPostingLengths(db: {
  exec(sql: string): unknown;
  prepare(sql: string): { all(): unknown[] };
}): void {
  const columns = db.prepare("SELECT name FROM pragma_table_info('lexical_postings')").all() as {
    name: string;
  }[];
  if (!columns.some((c) => c.name === 'length'))
    db.exec('ALTER TABLE lexical_postings ADD COLUMN length INTEGER');
  db.exec(`UPDATE lexical_postings SET length = (SELECT d.length FROM lexical_docs d WHERE d.rid = lexical_postings.rid)
    WHERE length IS NULL`);
}
