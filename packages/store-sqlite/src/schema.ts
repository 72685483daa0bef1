/**
 * The store's schema: forward-only versioned migrations and the meta table. The vector table is not part of
 * the migrations because its dimensions come from the embedder profile (see `vectorTableSql`).
 */

import { likeText, TOKENIZER_DESCRIPTION } from '@engram/store/port-kit';
import { LEXICAL_INDEX_DDL, LexicalBatch, REBUILD_LEXICAL_STATS } from './lexical-index.js';
import { addLexicalTerms, addPostingLengths, FRESH_POSTINGS_DDL } from './lexical-postings.js';
import type { SqliteDatabase } from './native.js';
import { addEmbeddingErrorColumns } from './sqlite/backlog.js';
import { CHUNK_TABLE_SQL, chunkExistingMemories } from './sqlite/chunks.js';
import { EMBEDDING_CLAIMS_TABLE_SQL } from './sqlite/claims.js';
import type { StoreContext } from './sqlite/context.js';
import { PROCESS_BEATS_TABLE_SQL } from './sqlite/process-beats.js';
import { addUnitUsers, addUserKeys } from './sqlite/user-keys-migration.js';

export { TOKENIZER_DESCRIPTION };

/** Word index tokenizer: Porter stemming over unicode61 with diacritics folded. */
export const WORDS_TOKENIZER = 'porter unicode61 remove_diacritics 2';
/** Trigram index tokenizer (case-insensitive), used for rows whose content contains CJK. */
export const TRIGRAM_TOKENIZER = 'trigram';

/** One forward-only migration. */
export interface Migration {
  readonly version: number;
  /** Runs inside the migration transaction; `ctx` gives the current index writers. */
  up(db: SqliteDatabase, ctx: StoreContext): void;
}

/**
 * The migrations, in increasing version order; the last version is the store's schema version. Versions are
 * assigned ahead of time, so the list may have a gap (4 then 6): a file at a version inside the gap runs the
 * migrations above it.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    up(db: SqliteDatabase): void {
      db.exec(`
CREATE TABLE IF NOT EXISTS memories (
  rid INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('event','fact','semantic','episodic','reflection','persona','skill')),
  content TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  importance REAL NOT NULL CHECK (importance >= 0 AND importance <= 1),
  confidence REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  tags TEXT NOT NULL DEFAULT '[]',
  session_id TEXT,
  seq_from INTEGER,
  seq_to INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  last_accessed_at INTEGER,
  access_count INTEGER NOT NULL DEFAULT 0,
  revision INTEGER NOT NULL DEFAULT 1,
  lifecycle TEXT NOT NULL DEFAULT 'active' CHECK (lifecycle IN ('active','archived','superseded','conflicted')),
  superseded_by TEXT,
  embedding_state TEXT NOT NULL DEFAULT 'pending' CHECK (embedding_state IN ('pending','ready','error','ftsOnly')),
  embedding_fingerprint TEXT,
  embedding_attempts INTEGER NOT NULL DEFAULT 0,
  has_cjk INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS memories_agent_lifecycle_kind ON memories(agent_id, lifecycle, kind);
CREATE INDEX IF NOT EXISTS memories_agent_id ON memories(agent_id, id);
CREATE INDEX IF NOT EXISTS memories_agent_hash ON memories(agent_id, content_hash);
CREATE INDEX IF NOT EXISTS memories_embedding ON memories(embedding_state, agent_id, rid);
CREATE INDEX IF NOT EXISTS memories_cjk_recent ON memories(agent_id, lifecycle, created_at) WHERE has_cjk = 1;

CREATE TABLE IF NOT EXISTS memory_tags (
  agent_id TEXT NOT NULL,
  tag TEXT NOT NULL,
  rid INTEGER NOT NULL,
  PRIMARY KEY (agent_id, tag, rid)
) WITHOUT ROWID;

CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_words USING fts5(
  agent, content, content='', contentless_delete=1, tokenize='${WORDS_TOKENIZER}'
);
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts_trigram USING fts5(
  agent, content, content='', contentless_delete=1, tokenize='${TRIGRAM_TOKENIZER}'
);

CREATE TABLE IF NOT EXISTS events (
  agent_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('message','tool_call','tool_result')),
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  tool_name TEXT,
  metadata TEXT NOT NULL DEFAULT '{}',
  content_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (agent_id, session_id, seq)
);

CREATE TABLE IF NOT EXISTS session_cursors (
  agent_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  cursor INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (agent_id, session_id)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS skills (
  agent_id TEXT NOT NULL,
  name TEXT NOT NULL COLLATE NOCASE,
  description TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (agent_id, name)
);
`);
    },
  },
  {
    // The LIKE path (1–2 character CJK terms, which are NFKC-normalised) must see the NFKC form of the content,
    // as the FTS indexes do: `like_text` holds it for CJK rows whose NFKC form differs (half-width katakana,
    // Kangxi radicals, compatibility ideographs); the LIKE scan reads `coalesce(like_text, content)`.
    version: 2,
    up(db: SqliteDatabase): void {
      db.exec('ALTER TABLE memories ADD COLUMN like_text TEXT');
      const rows = db.prepare('SELECT rid, content FROM memories WHERE has_cjk = 1').all() as {
        rid: number;
        content: string;
      }[];
      const update = db.prepare('UPDATE memories SET like_text = ? WHERE rid = ?');
      for (const row of rows) {
        const text = likeText(row.content);
        if (text !== null) update.run(text, row.rid);
      }
    },
  },
  {
    // The BM25 index (see lexical-index.ts): the store's own postings and per-agent statistics, built here for
    // every existing row from its content, so a file made by an earlier version searches exactly as a new one.
    version: 3,
    up(db: SqliteDatabase): void {
      db.exec(LEXICAL_INDEX_DDL);
      // Idempotent: whatever an interrupted or foreign build left is rebuilt from the rows.
      db.exec(
        'DELETE FROM lexical_postings; DELETE FROM lexical_postings_fresh; DELETE FROM lexical_docs; DELETE FROM lexical_stats;',
      );
      const statements = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
      const prepared = (sql: string): ReturnType<SqliteDatabase['prepare']> => {
        let stmt = statements.get(sql);
        if (stmt === undefined) {
          stmt = db.prepare(sql);
          statements.set(sql, stmt);
        }
        return stmt;
      };
      const run = (sql: string, ...params: unknown[]): { changes: number } => prepared(sql).run(...params);
      const read = db.prepare(
        'SELECT rid, agent_id, content FROM memories WHERE rid > ? ORDER BY rid LIMIT 1000',
      );
      const batch = new LexicalBatch();
      let after = 0;
      for (;;) {
        const rows = read.all(after) as { rid: number; agent_id: string; content: string }[];
        if (rows.length === 0) break;
        for (const row of rows) {
          batch.add(row.rid, row.agent_id, row.content.normalize('NFKC'));
          after = row.rid;
        }
        batch.flush(run, false);
      }
      db.exec(REBUILD_LEXICAL_STATS);
      db.prepare(
        "INSERT INTO meta(key, value) VALUES ('tokenizer', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      ).run(TOKENIZER_DESCRIPTION);
    },
  },
  {
    // Long memories are chunked: `chunk_count` on the memory, one `memory_chunks` row per chunk of a memory
    // longer than the chunk budget, FTS rows and vectors keyed by chunk (see `sqlite/chunks.ts`). Short
    // memories keep their rows and vectors as they are; long ones are re-indexed per chunk, lose their
    // whole-content vector and become `pending`, so the drain embeds their chunks.
    version: 4,
    up(db: SqliteDatabase, ctx: StoreContext): void {
      db.exec('ALTER TABLE memories ADD COLUMN chunk_count INTEGER NOT NULL DEFAULT 1');
      db.exec(CHUNK_TABLE_SQL);
      chunkExistingMemories(db, ctx);
    },
  },
  {
    // "An exact duplicate is never stored twice" as a constraint: one active row per (agent, kind, content
    // hash). Event rows are archival history (the same text at two seqs is two events) and stay outside it.
    // Duplicates an older file already holds are resolved first: the earliest row of each group is kept and
    // the others are superseded by it (lineage in `superseded_by`); nothing is deleted.
    version: 5,
    up(db: SqliteDatabase, ctx: StoreContext): void {
      resolveActiveDuplicates(db, ctx.now());
      db.exec(ACTIVE_CONTENT_INDEX_SQL);
    },
  },
  {
    // Scopes, metadata and time: a user scope (`user_id`; the session scope is the existing `session_id`),
    // free-form JSON `metadata`, the validity interval of a fact (`valid_from`, `valid_to`: null while it is
    // current) and `forgotten_at` for rows forgotten with their content kept. Existing rows become valid from
    // their creation; a superseded row stops being valid at its last update (the supersede time). The
    // `memory_links` table holds contradictions between facts; `memory_history` the lineage of a memory
    // (updates with the text they replaced, supersedes, forget tombstones with who, when and why).
    version: 6,
    up(db: SqliteDatabase): void {
      db.exec(`
ALTER TABLE memories ADD COLUMN user_id TEXT;
ALTER TABLE memories ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE memories ADD COLUMN valid_from INTEGER NOT NULL DEFAULT 0;
ALTER TABLE memories ADD COLUMN valid_to INTEGER;
ALTER TABLE memories ADD COLUMN forgotten_at INTEGER;
UPDATE memories SET valid_from = created_at;
UPDATE memories SET valid_to = updated_at WHERE lifecycle = 'superseded';
CREATE INDEX IF NOT EXISTS memories_agent_user ON memories(agent_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_agent_session ON memories(agent_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS memories_agent_superseded_by ON memories(agent_id, superseded_by) WHERE superseded_by IS NOT NULL;

CREATE TABLE IF NOT EXISTS memory_links (
  agent_id TEXT NOT NULL,
  older_id TEXT NOT NULL,
  newer_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('conflict')),
  state TEXT NOT NULL CHECK (state IN ('open','resolved','dismissed')),
  reason TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  resolved_at INTEGER,
  PRIMARY KEY (agent_id, older_id, newer_id, kind)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS memory_links_newer ON memory_links(agent_id, newer_id);

CREATE TABLE IF NOT EXISTS memory_history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id TEXT NOT NULL,
  memory_id TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('updated','superseded','forgotten','conflictLinked','conflictResolved')),
  at INTEGER NOT NULL,
  revision INTEGER,
  actor TEXT,
  reason TEXT,
  related_id TEXT,
  content TEXT
);
CREATE INDEX IF NOT EXISTS memory_history_memory ON memory_history(agent_id, memory_id, seq);
CREATE INDEX IF NOT EXISTS memory_history_related ON memory_history(agent_id, related_id) WHERE related_id IS NOT NULL;
`);
    },
  },
  {
    // The BM25 index keeps each unit's distinct terms with its length, so its postings are removed by key and
    // need no index on `rid`, which cost a second B-tree insert per posting (see `lexical-index.ts`).
    version: 7,
    up(db: SqliteDatabase): void {
      addLexicalTerms(db);
    },
  },
  {
    // The vector index setting (`meta.vector_index`) and the optional quantised table `memories_vec_quant`,
    // kept in step with `memories_vec`. Like the float table, the quantised one is created by the binding step
    // (its width comes from the embedder profile): a file from schema 7 records the setting its first open asks
    // for and, if quantised, gets the table filled from its stored float vectors (see `vector-quant.ts`). The
    // version itself is what matters here: an older Engram, which would write float vectors without their
    // quantised copies, refuses the file.
    version: 8,
    up(): void {
      // nothing to change in the tables every file has
    },
  },
  {
    // The embedding index holds only the rows the drain is looking for: one partial index per state the drain
    // reads (`pending`, and `error` for retries) on (`embedding_state, agent_id, rid`), replacing one index over
    // every row, so a row inserted with its vector (state `ready`), or embedded by the drain, costs no entry and
    // the drain's queries keep their plans. The lookup by content hash (`findByContentHash`) keys its index by
    // the hash's first 16 hex digits rather than all 64: the key is random, so a batch of inserts touches most of
    // the index's pages, and a shorter key makes those pages fewer.
    version: 9,
    up(db: SqliteDatabase): void {
      db.exec(`${EMBEDDING_DUE_INDEXES_SQL}
${HASH_PREFIX_INDEX_SQL}
DROP INDEX IF EXISTS memories_embedding;
DROP INDEX IF EXISTS memories_agent_hash;`);
    },
  },
  {
    // Each BM25 posting carries its unit's length (see `lexical-index.ts`), filled here from the units' length
    // rows in one statement: the scoring statement reads it with the posting instead of joining `lexical_docs`
    // once per hit. `lexical_docs` stays: it lists a unit's terms (removal by key), feeds the statistics
    // rebuild and the integrity check.
    version: 10,
    up(db: SqliteDatabase): void {
      addPostingLengths(db);
    },
  },
  {
    // The BM25 postings in two levels (see `lexical-index.ts`): the fresh postings table every write transaction
    // inserts into, merged into `lexical_postings` in bulk once it is large enough. An existing file's postings
    // stay where they are (the main table); the version itself matters too: an older Engram would not read the
    // fresh table, so it refuses the file.
    version: 11,
    up(db: SqliteDatabase): void {
      db.exec(FRESH_POSTINGS_DDL);
    },
  },
  {
    // Each row has one content-hash index entry, not two. The rows the exact-duplicate rule covers (active, not
    // events) are in its unique index, keyed (agent, hash, kind) so that it also serves the lookup by hash; the
    // other rows (events, and rows no longer active) are in the lookup's prefix index, made partial. Both keys
    // are random, so a row in both would scatter page writes over both; the rule itself is unchanged (the same
    // rows, the same key columns: a file that held the version-11 index holds no duplicate for this one). A
    // file that lost the old index (a damaged file, or one edited by hand) may hold duplicates, which version 11
    // opened: they are resolved first, as version 5 did, so the new index can be built (on an intact file the
    // check finds none and changes nothing).
    version: 12,
    up(db: SqliteDatabase, ctx: StoreContext): void {
      resolveActiveDuplicates(db, ctx.now());
      db.exec(`${CONTENT_HASH_INDEXES_SQL}
DROP INDEX IF EXISTS memories_active_content;
DROP INDEX IF EXISTS memories_agent_hash_prefix;`);
    },
  },
  {
    // vec0's chunk table indexed by partition (see `vec0PartitionIndexSql`): the vector tables a file already has
    // (the float one, and the quantised one if any) get the index; a file without an embedder profile has none
    // and nothing to index. An index over the chunk rows only (a few thousand at a million vectors).
    version: 13,
    up(db: SqliteDatabase): void {
      for (const table of VEC0_TABLES) {
        const partitioned = db
          .prepare("SELECT 1 AS x FROM pragma_table_info(?) WHERE name = 'partition00'")
          .get(`${table}_chunks`);
        if (partitioned !== undefined) db.exec(vec0PartitionIndexSql(table));
      }
    },
  },
  {
    // Users are boundaries: the exact-duplicate rule holds inside a user, so the same text from two users of
    // one agent is two memories (from one user twice, or from the agent itself twice, still one). The unique
    // index `memories_active_hash` is rebuilt with the user as its last key (`USER_KEY`: no user is the agent's
    // own, keyed ''); a file at version 13 held no duplicate under the stricter old key, so none under the new
    // one, and nothing moves.
    // Events carry their user too (`events.user_id`, null for the events logged before).
    version: 14,
    up(db: SqliteDatabase): void {
      db.exec(`DROP INDEX IF EXISTS memories_active_hash;
${USER_HASH_INDEX_SQL}`);
      // A file whose recorded version was set back by hand may have the column already.
      const has = db.prepare("SELECT 1 AS x FROM pragma_table_info('events') WHERE name = 'user_id'").get();
      if (has === undefined) db.exec('ALTER TABLE events ADD COLUMN user_id TEXT');
      db.exec(
        'CREATE INDEX IF NOT EXISTS events_agent_user ON events(agent_id, user_id) WHERE user_id IS NOT NULL',
      );
    },
  },
  {
    // Each vector and each BM25 posting carries its memory's user key (`sqlite/user-key.ts`), so a user-scoped
    // search scans the agent's own rows and that user's instead of every row of the agent. The postings get the
    // column, the float vector table is rebuilt with it and the quantised one dropped, to be rebuilt by the open
    // (`sqlite/user-keys-migration.ts`). The version itself matters too: an older Engram would write vectors
    // and postings without their key, so it refuses the file.
    version: 15,
    up(db: SqliteDatabase): void {
      addUserKeys(db);
    },
  },
  {
    // Each history row names the user of the memory it is about (`memory_history.user_id`, null for the
    // agent's own), so a user-scoped history can leave out another user's erased memory, whose row is gone.
    // The rows written before are filled in from the memories still stored; those whose memory was already
    // erased keep the default '' (`historyRules.UNKNOWN_HISTORY_USER`: not known), shown to whole-agent
    // calls only.
    version: 16,
    up(db: SqliteDatabase): void {
      // A file whose recorded version was set back by hand may have the column already.
      const has = db
        .prepare("SELECT 1 AS x FROM pragma_table_info('memory_history') WHERE name = 'user_id'")
        .get();
      if (has === undefined) db.exec(`ALTER TABLE memory_history ADD COLUMN user_id TEXT DEFAULT ''`);
      db.exec(HISTORY_USER_BACKFILL_SQL);
    },
  },
  {
    // A failed embedding keeps the embedder's error code and when it failed (`sqlite/backlog.ts`).
    version: 17,
    up(db: SqliteDatabase): void {
      addEmbeddingErrorColumns(db);
    },
  },
  {
    // Process beats (`sqlite/process-beats.ts`): each process that has the file open for writing keeps one row
    // with its content-free diagnostics snapshot, so a health page served by any process shows them all. A new
    // table only; an older Engram ignores it.
    version: 18,
    up(db: SqliteDatabase): void {
      db.exec(PROCESS_BEATS_TABLE_SQL);
    },
  },
  {
    // Embedding claims (`sqlite/claims.ts`): a store opened with `claimLeaseMs` claims the pending rows it lists,
    // so several processes draining one file embed each row once. A new table only; an older Engram ignores it
    // (its drains claim nothing, as before).
    version: 19,
    up(db: SqliteDatabase): void {
      db.exec(EMBEDDING_CLAIMS_TABLE_SQL);
    },
  },
  {
    // BM25 statistics per user (`lexical_user_stats`, each unit's user on `lexical_docs`): a user-scoped search
    // scores with the statistics of the agent's own units and that user's, so another user's writes never move
    // its scores (`sqlite/user-keys-migration.ts`). The version itself matters too: an older Engram would
    // write units without their key and leave the user statistics behind, so it refuses the file.
    version: 20,
    up(db: SqliteDatabase): void {
      addUnitUsers(db);
    },
  },
];

/**
 * Fills in the user of the history rows that do not know it ('') from their memory's stored row (schema
 * version 16); the rows of a memory that is gone stay unknown.
 */
export const HISTORY_USER_BACKFILL_SQL = `UPDATE memory_history SET user_id = (
  SELECT m.user_id FROM memories m WHERE m.agent_id = memory_history.agent_id AND m.id = memory_history.memory_id)
WHERE user_id = '' AND EXISTS (
  SELECT 1 FROM memories m WHERE m.agent_id = memory_history.agent_id AND m.id = memory_history.memory_id)`;

/** The store's vec0 tables: the float index and the optional quantised one (`QUANT_TABLE` in vector-quant.ts). */
export const VEC0_TABLES: readonly string[] = ['memories_vec', 'memories_vec_quant'];

/**
 * The index of a vec0 table's chunks by partition (schema version 13). sqlite-vec 0.1.x keeps a partition's
 * chunks as rows of the shadow table `<table>_chunks` (one per `chunk_size` vectors, `partition00` holding the
 * agent) without an index on the partition: each k-NN (it lists the agent's chunks), each insert (it looks up
 * the agent's last chunk) and the dispatch probe (`vector-partition.ts`) scanned every agent's chunk rows, about
 * 50 ns a row: 7,800 rows at a million 1,536-d vectors (128-vector chunks). With the index they read the
 * agent's own rows. SQLite keeps the index itself as vec0 writes its table, and drops it with the table. Part
 * of the SQL of both vector tables (`vectorTableSql`, `quantTableSql`).
 */
export function vec0PartitionIndexSql(table: string): string {
  // The name goes into the SQL as it is: only a plain identifier is taken.
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table))
    throw new TypeError('vec0PartitionIndexSql: the table name must be a plain SQL identifier');
  return `CREATE INDEX IF NOT EXISTS ${table}_chunks_partition ON ${table}_chunks(partition00)`;
}

/** Hex digits of the content hash that key the lookup index (the full hash is compared on the rows found). */
export const HASH_PREFIX_LENGTH = 16;

/**
 * The index of the lookup by content hash of schema versions 9 to 11, over every row: agent, then the hash's
 * first digits. Version 12 replaced it by the partial indexes of `CONTENT_HASH_INDEXES_SQL`.
 */
export const HASH_PREFIX_INDEX_SQL: string = `CREATE INDEX IF NOT EXISTS memories_agent_hash_prefix
  ON memories(agent_id, substr(content_hash, 1, ${HASH_PREFIX_LENGTH}));`;

/**
 * The partial indexes of the rows awaiting an embedding (schema version 9): by state, agent and insertion order,
 * as the drain reads them. Rows in `ready` or `ftsOnly` are in neither.
 */
export const EMBEDDING_DUE_INDEXES_SQL: string = `CREATE INDEX IF NOT EXISTS memories_embedding_pending
  ON memories(embedding_state, agent_id, rid) WHERE embedding_state = 'pending';
CREATE INDEX IF NOT EXISTS memories_embedding_error
  ON memories(embedding_state, agent_id, rid) WHERE embedding_state = 'error';`;

/** The rows the uniqueness rule covers: active rows of every kind but `event`. */
export const ACTIVE_CONTENT_WHERE: string = "lifecycle = 'active' AND kind <> 'event'";

/**
 * The other rows: the complement of {@link ACTIVE_CONTENT_WHERE} (both columns are `NOT NULL`). Written as its
 * negation on purpose: as a partial index's condition, a term such as `kind = 'event'` would make SQLite compare
 * it with the bound value of every `kind = ?` of a statement on `memories`, and re-prepare that statement each
 * time the parameter is bound, which costs several times the lookup itself.
 */
export const OTHER_CONTENT_WHERE: string = `NOT (${ACTIVE_CONTENT_WHERE})`;

/**
 * The content-hash indexes (schema version 12); each row is in exactly one of them. The rows the
 * exact-duplicate rule covers are in the unique `memories_active_hash`, which enforces it (the insert's
 * `ON CONFLICT` target) and answers the lookup by hash for those rows; the others are in
 * `memories_other_hash_prefix`, keyed by the hash's first digits (the full hash is compared on the rows found).
 * A statement reads the second only with {@link OTHER_CONTENT_WHERE} and the prefix term written as here.
 */
export const CONTENT_HASH_INDEXES_SQL: string = `CREATE UNIQUE INDEX IF NOT EXISTS memories_active_hash
  ON memories(agent_id, content_hash, kind) WHERE ${ACTIVE_CONTENT_WHERE};
CREATE INDEX IF NOT EXISTS memories_other_hash_prefix
  ON memories(agent_id, substr(content_hash, 1, ${HASH_PREFIX_LENGTH})) WHERE ${OTHER_CONTENT_WHERE};`;

/**
 * The user key of the exact-duplicate rule (schema version 14): a memory's user, '' for the agent's own (no
 * user id is empty, so '' never names a user).
 */
export const USER_KEY = "coalesce(user_id, '')";

/**
 * The unique index of the exact-duplicate rule from schema version 14, `memories_active_hash` with the user as
 * its last key: one active row per (agent, hash, kind, user), the insert's `ON CONFLICT` target; it still
 * answers the lookup by hash of the active rows (its first columns are unchanged).
 */
export const USER_HASH_INDEX_SQL: string = `CREATE UNIQUE INDEX IF NOT EXISTS memories_active_hash
  ON memories(agent_id, content_hash, kind, ${USER_KEY}) WHERE ${ACTIVE_CONTENT_WHERE};`;

/**
 * The partial unique index behind the exact-duplicate rule of schema versions 5 to 11, keyed (agent, kind,
 * hash). Version 12 replaced it by `memories_active_hash`, the same rule keyed (agent, hash, kind).
 */
export const ACTIVE_CONTENT_INDEX_SQL: string = `CREATE UNIQUE INDEX IF NOT EXISTS memories_active_content
  ON memories(agent_id, kind, content_hash) WHERE ${ACTIVE_CONTENT_WHERE}`;

/**
 * Supersedes every active row that duplicates an earlier one (same agent, kind and content hash; earliest by
 * creation time, then insertion order) with the earliest as its successor. Returns how many rows moved.
 */
export function resolveActiveDuplicates(db: SqliteDatabase, now: number): number {
  const groups = db
    .prepare(
      `SELECT agent_id, kind, content_hash FROM memories WHERE ${ACTIVE_CONTENT_WHERE}
       GROUP BY agent_id, kind, content_hash HAVING count(*) > 1`,
    )
    .all() as { agent_id: string; kind: string; content_hash: string }[];
  const members = db.prepare(
    `SELECT rid, id FROM memories WHERE agent_id = ? AND kind = ? AND content_hash = ? AND ${ACTIVE_CONTENT_WHERE}
     ORDER BY created_at, rid`,
  );
  const supersede = db.prepare(
    `UPDATE memories SET lifecycle = 'superseded', superseded_by = ?, revision = revision + 1, updated_at = ?
     WHERE rid = ?`,
  );
  let moved = 0;
  for (const g of groups) {
    const rows = members.all(g.agent_id, g.kind, g.content_hash) as { rid: number; id: string }[];
    const [keep, ...rest] = rows;
    if (keep === undefined) continue;
    for (const row of rest) {
      supersede.run(keep.id, now, row.rid);
      moved += 1;
    }
  }
  return moved;
}

/** The schema version this code writes. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/**
 * The bytes of vectors one vec0 chunk holds at most (1 MiB). vec0 (sqlite-vec 0.1.x) stores a partition's
 * vectors in chunks that it allocates whole, `chunk_size` vectors at a time (default 1,024), so every agent costs
 * at least one full chunk however few vectors it has: 6 MiB at 1,536-d with the default, 1 MiB with this budget.
 * A k-NN pays a fixed cost per chunk (about 10 µs: its rowids, validity bitmap and vector blob are opened) on
 * top of the scan itself (about 0.45 ns a byte), so a chunk of 1 MiB adds about 2 % to the scan of its vectors
 * and smaller chunks would add more (measured at 128-d × 100k: 64-vector chunks of 32 KiB made the k-NN 1.7×
 * slower). Smaller chunks also write faster: each insert opens a blob handle on its chunk and SQLite walks the
 * blob's overflow pages (10k inserts at 1,536-d: 435 ms with 1,024-vector chunks, 237 ms with 128).
 */
export const VEC0_CHUNK_BYTES: number = 1024 * 1024;

/** vec0's default (and this store's largest) chunk size, in vectors: a table created without `chunk_size`. */
export const VEC0_DEFAULT_CHUNK_SIZE = 1024;

/**
 * The vec0 `chunk_size` for vectors of `bytesPerVector` bytes: the largest power of two, at most 1,024 (vec0's
 * default) and at least 8 (vec0 needs a multiple of 8), whose chunk holds at most {@link VEC0_CHUNK_BYTES}:
 * 1,024 up to 256-d floats, 512 at 384-d, 256 at 768-d, 128 at 1,536-d, 64 at 3,072-d. The raw baseline of
 * `pnpm bench` creates its vec0 table with the same size.
 */
export function vec0ChunkSize(bytesPerVector: number): number {
  let size = VEC0_DEFAULT_CHUNK_SIZE;
  while (size > 8 && size * bytesPerVector > VEC0_CHUNK_BYTES) size /= 2;
  return size;
}

/** The vec0 `chunk_size` of the vector table (float32 vectors of `dimensions`): see {@link vec0ChunkSize}. */
export function vectorChunkSize(dimensions: number): number {
  return vec0ChunkSize(dimensions * 4);
}

/**
 * The SQL that creates the vector table for `dimensions` (float32 vectors, `chunk_size` from their width: see
 * {@link vec0ChunkSize}; partitioned by agent, each vector with its memory's user key as a metadata column since
 * schema 15, `sqlite/user-key.ts`) and the index of its chunks by partition ({@link vec0PartitionIndexSql}); two statements,
 * for `exec`. A table that exists is kept as it was created (`IF NOT EXISTS`): a file made before the chunk size
 * was chosen keeps vec0's default of 1,024 until its vector table is recreated.
 */
export function vectorTableSql(dimensions: number): string {
  return `CREATE VIRTUAL TABLE IF NOT EXISTS memories_vec USING vec0(agent_id text partition key, user_key integer, embedding float[${dimensions}] distance_metric=cosine, chunk_size=${vectorChunkSize(dimensions)});
${vec0PartitionIndexSql('memories_vec')};`;
}

/**
 * The SQLite `application_id` of an Engram store: the bytes `Engr` (0x456e6772) at offset 68 of the file
 * header, set when a file is created and when an older file is migrated. Files from before it are recognised by
 * their `meta` table's `schema_version` row; any other SQLite file is refused untouched.
 */
export const ENGRAM_APPLICATION_ID = 0x456e6772;

/** The meta table (created before any migration runs). */
export const META_TABLE_SQL =
  'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID';
