/**
 * The PostgreSQL schema: forward-only versioned migrations, applied in one transaction under a session
 * advisory lock so that any number of processes may open the same database at once, and the vector table
 * bound to the embedder profile (its dimensions come from the profile, as in the SQLite store).
 *
 * Every table is keyed by agent first. Derived rows (chunks, BM25 units and postings, vectors) reference their
 * memory with `ON DELETE CASCADE`, and the BM25 statistics (per agent, and per user) are kept by triggers on
 * the units, so a delete or a re-index can never leave them out of step.
 */

import { type EmbeddingProfile, EngramStoreError } from '@engram/store';
import {
  embeddingFingerprint,
  parseEmbeddingFingerprint,
  TOKENIZER_DESCRIPTION,
} from '@engram/store/port-kit';
import type pg from 'pg';
import { EMBEDDING_ERROR_MIGRATION_SQL } from './backlog.js';
import type { PgContext } from './context.js';

/** The advisory lock key that serialises migrations (an arbitrary constant: "engram" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x656e6772616d;

/** Largest dimensions stored as `vector` (pgvector's HNSW limit); larger profiles use `halfvec` (≤ 4000). */
export const MAX_FULL_PRECISION_DIMENSIONS = 2000;
/** Largest dimensions an HNSW index takes at all (`halfvec`). */
export const MAX_INDEXED_DIMENSIONS = 4000;

/** The rows the exact-duplicate rule covers (the partial unique index's predicate). */
export const ACTIVE_CONTENT_WHERE = "lifecycle = 'active' AND kind <> 'event'";

/** The user key of the exact-duplicate rule (schema 5): a memory's user, '' for the agent's own. */
export const USER_KEY = "coalesce(user_id, '')";

const KINDS = "('event','fact','semantic','episodic','reflection','persona','skill')";

/** One forward-only migration: SQL run inside the migration transaction. */
export interface Migration {
  readonly version: number;
  readonly sql: string;
}

/** The migrations, in order (exported for the migration tests). */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
CREATE TABLE memories (
  rid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent_id text NOT NULL,
  id text NOT NULL UNIQUE,
  kind text NOT NULL CHECK (kind IN ${KINDS}),
  content text NOT NULL,
  content_hash text NOT NULL,
  importance double precision NOT NULL CHECK (importance >= 0 AND importance <= 1),
  confidence double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  tags text[] NOT NULL DEFAULT '{}',
  session_id text,
  seq_from bigint,
  seq_to bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  last_accessed_at bigint,
  access_count bigint NOT NULL DEFAULT 0,
  revision bigint NOT NULL DEFAULT 1 CHECK (revision >= 1),
  lifecycle text NOT NULL DEFAULT 'active' CHECK (lifecycle IN ('active','archived','superseded','conflicted')),
  superseded_by text,
  embedding_state text NOT NULL DEFAULT 'pending' CHECK (embedding_state IN ('pending','ready','error','ftsOnly')),
  embedding_fingerprint text,
  embedding_attempts integer NOT NULL DEFAULT 0,
  has_cjk boolean NOT NULL DEFAULT false,
  like_text text,
  chunk_count integer NOT NULL DEFAULT 1 CHECK (chunk_count >= 1),
  lease_owner text,
  lease_until bigint
);
CREATE INDEX memories_agent_id ON memories(agent_id, id);
CREATE INDEX memories_agent_lifecycle_kind ON memories(agent_id, lifecycle, kind);
CREATE INDEX memories_agent_hash ON memories(agent_id, content_hash);
CREATE INDEX memories_pending ON memories(rid) WHERE embedding_state IN ('pending', 'error');
CREATE INDEX memories_tags ON memories USING gin (tags);

CREATE TABLE memory_chunks (
  agent_id text NOT NULL,
  rid bigint NOT NULL REFERENCES memories(rid) ON DELETE CASCADE,
  idx integer NOT NULL CHECK (idx >= 0),
  start_at integer NOT NULL,
  end_at integer NOT NULL,
  vec smallint NOT NULL DEFAULT 0 CHECK (vec IN (0, 1, 2)),
  PRIMARY KEY (agent_id, rid, idx)
);
CREATE INDEX memory_chunks_rid ON memory_chunks(rid);

CREATE TABLE lexical_docs (
  agent_id text NOT NULL,
  key bigint PRIMARY KEY,
  rid bigint NOT NULL REFERENCES memories(rid) ON DELETE CASCADE,
  length integer NOT NULL,
  tokens text[] NOT NULL
);
CREATE INDEX lexical_docs_rid ON lexical_docs(rid);
CREATE TABLE lexical_postings (
  agent_id text NOT NULL,
  term text NOT NULL,
  key bigint NOT NULL REFERENCES lexical_docs(key) ON DELETE CASCADE,
  tf integer NOT NULL,
  PRIMARY KEY (agent_id, term, key)
);
CREATE INDEX lexical_postings_key ON lexical_postings(key);
CREATE TABLE lexical_stats (
  agent_id text PRIMARY KEY,
  docs bigint NOT NULL,
  total_length bigint NOT NULL
);
CREATE FUNCTION engram_lexical_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO lexical_stats(agent_id, docs, total_length) VALUES (NEW.agent_id, 1, NEW.length)
      ON CONFLICT (agent_id) DO UPDATE SET docs = lexical_stats.docs + 1,
        total_length = lexical_stats.total_length + EXCLUDED.total_length;
    RETURN NEW;
  END IF;
  UPDATE lexical_stats SET docs = docs - 1, total_length = total_length - OLD.length WHERE agent_id = OLD.agent_id;
  RETURN OLD;
END $$;
CREATE TRIGGER lexical_docs_stats AFTER INSERT OR DELETE ON lexical_docs
  FOR EACH ROW EXECUTE FUNCTION engram_lexical_stats();

CREATE TABLE events (
  agent_id text NOT NULL,
  session_id text NOT NULL,
  seq bigint NOT NULL CHECK (seq >= 1),
  type text NOT NULL CHECK (type IN ('message','tool_call','tool_result')),
  role text NOT NULL,
  content text NOT NULL,
  tool_name text,
  metadata text NOT NULL DEFAULT '{}',
  content_hash text NOT NULL,
  created_at bigint NOT NULL,
  PRIMARY KEY (agent_id, session_id, seq)
);
CREATE TABLE session_cursors (
  agent_id text NOT NULL,
  session_id text NOT NULL,
  cursor bigint NOT NULL CHECK (cursor >= 0),
  updated_at bigint NOT NULL,
  PRIMARY KEY (agent_id, session_id)
);
CREATE TABLE skills (
  agent_id text NOT NULL,
  name text NOT NULL,
  description text NOT NULL,
  content text NOT NULL,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL
);
CREATE UNIQUE INDEX skills_agent_name ON skills(agent_id, lower(name));
`,
  },
  {
    // Scopes, metadata and validity; the lineage (history) and contradiction links; and the exact-duplicate rule:
    // at most one active non-event row per agent, kind and content hash (earlier duplicates are superseded by the
    // oldest one first, as the SQLite store's migration does).
    version: 2,
    sql: `
ALTER TABLE memories ADD COLUMN user_id text, ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN valid_from bigint, ADD COLUMN valid_to bigint, ADD COLUMN forgotten_at bigint;
UPDATE memories SET valid_from = created_at;
UPDATE memories SET valid_to = updated_at WHERE lifecycle = 'superseded';
ALTER TABLE memories ALTER COLUMN valid_from SET NOT NULL;
WITH ranked AS (
  SELECT rid, first_value(id) OVER w AS keep_id, row_number() OVER w AS n FROM memories
  WHERE ${ACTIVE_CONTENT_WHERE}
  WINDOW w AS (PARTITION BY agent_id, kind, content_hash ORDER BY created_at, rid))
UPDATE memories m SET lifecycle = 'superseded', superseded_by = r.keep_id, revision = m.revision + 1,
  valid_to = m.updated_at
FROM ranked r WHERE m.rid = r.rid AND r.n > 1;
CREATE UNIQUE INDEX memories_active_content ON memories(agent_id, kind, content_hash) WHERE ${ACTIVE_CONTENT_WHERE};
CREATE INDEX memories_agent_user ON memories(agent_id, user_id) WHERE user_id IS NOT NULL;
CREATE INDEX memories_agent_session ON memories(agent_id, session_id) WHERE session_id IS NOT NULL;
CREATE INDEX memories_agent_superseded_by ON memories(agent_id, superseded_by) WHERE superseded_by IS NOT NULL;

CREATE TABLE memory_links (
  agent_id text NOT NULL,
  older_id text NOT NULL,
  newer_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('conflict')),
  state text NOT NULL CHECK (state IN ('open','resolved','dismissed')),
  reason text NOT NULL,
  created_at bigint NOT NULL,
  resolved_at bigint,
  PRIMARY KEY (agent_id, older_id, newer_id, kind)
);
CREATE INDEX memory_links_newer ON memory_links(agent_id, newer_id);

CREATE TABLE memory_history (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  agent_id text NOT NULL,
  memory_id text NOT NULL,
  action text NOT NULL CHECK (action IN ('updated','superseded','forgotten','conflictLinked','conflictResolved')),
  at bigint NOT NULL,
  revision bigint,
  actor text,
  reason text,
  related_id text,
  content text
);
CREATE INDEX memory_history_memory ON memory_history(agent_id, memory_id, seq);
CREATE INDEX memory_history_related ON memory_history(agent_id, related_id) WHERE related_id IS NOT NULL;
`,
  },
  {
    // The per-agent maintenance lease: one row per agent, taken while free or expired (server clock).
    version: 3,
    sql: `
CREATE TABLE maintenance_leases (
  agent_id text PRIMARY KEY,
  owner text NOT NULL,
  lease_until bigint NOT NULL
);
`,
  },
  {
    // Each BM25 posting carries its unit's length, filled from the units in one statement: the scoring query
    // reads it with the posting instead of joining \`lexical_docs\` once per hit. \`lexical_docs\` stays (phrase
    // checks read its tokens; its trigger keeps the statistics). Every posting has its unit (the foreign key),
    // so the column is then NOT NULL.
    version: 4,
    sql: `
ALTER TABLE lexical_postings ADD COLUMN length integer;
UPDATE lexical_postings p SET length = d.length FROM lexical_docs d WHERE d.key = p.key;
ALTER TABLE lexical_postings ALTER COLUMN length SET NOT NULL;
`,
  },
  {
    // Users are boundaries: the exact-duplicate rule holds inside a user (the same text from two users of one
    // agent is two memories, from one user twice still one), so its unique index gains the user as its last key
    // (\`USER_KEY\`: no user is the agent's own, keyed ''). Data that held no duplicate under the stricter old key
    // holds none under the new one: nothing moves. Events carry their user (null for those logged before).
    version: 5,
    sql: `
DROP INDEX IF EXISTS memories_active_content;
CREATE UNIQUE INDEX memories_active_content ON memories(agent_id, kind, content_hash, (${USER_KEY}))
  WHERE ${ACTIVE_CONTENT_WHERE};
ALTER TABLE events ADD COLUMN IF NOT EXISTS user_id text;
CREATE INDEX IF NOT EXISTS events_agent_user ON events(agent_id, user_id) WHERE user_id IS NOT NULL;
`,
  },
  {
    // Each history row names the user of the memory it is about (null for the agent's own), so a user-scoped
    // history can leave out another user's erased memory, whose row is gone. The rows written before are filled
    // in from the memories still stored; those whose memory was already erased keep the default ''
    // (`historyRules.UNKNOWN_HISTORY_USER`: not known), shown to whole-agent calls only.
    version: 6,
    sql: `
ALTER TABLE memory_history ADD COLUMN IF NOT EXISTS user_id text DEFAULT '';
UPDATE memory_history h SET user_id = m.user_id FROM memories m
  WHERE h.user_id = '' AND m.agent_id = h.agent_id AND m.id = h.memory_id;
`,
  },
  {
    // A failed embedding keeps the embedder's error code and when it failed (\`backlog.ts\`).
    version: 7,
    sql: EMBEDDING_ERROR_MIGRATION_SQL,
  },
  {
    // Process beats (`process-beats.ts`): each process that has the database open keeps one row with its
    // content-free diagnostics snapshot, so a health page served by any process shows them all. A new table
    // only; an older Engram ignores it.
    version: 8,
    sql: `
CREATE TABLE IF NOT EXISTS process_beats (
  process_id text PRIMARY KEY,
  started_at bigint NOT NULL,
  beat_at bigint NOT NULL,
  ttl_ms bigint NOT NULL,
  snapshot text NOT NULL
);
`,
  },
  {
    // The postings' key carries each posting's term frequency and unit length, so the BM25 statement reads a
    // query term's postings from the index alone (an index-only scan) instead of fetching every posting's row:
    // the most of a query with a common word. Rebuilds the postings' key once; the rows do not change.
    version: 9,
    sql: `
ALTER TABLE lexical_postings DROP CONSTRAINT IF EXISTS lexical_postings_pkey,
  ADD CONSTRAINT lexical_postings_pkey PRIMARY KEY (agent_id, term, key) INCLUDE (tf, length);
`,
  },
  {
    // Each agent's document frequency per term (\`lexical_terms\`), kept by the statements that write BM25 units,
    // so a query reads a common word's frequency in one row instead of counting its postings. The triggers are
    // per statement, after the per-row statistics trigger: a writer locks the agent's statistics row before its
    // terms' rows, always, so two writers of one agent never wait on each other in opposite orders.
    version: 10,
    sql: `
CREATE TABLE IF NOT EXISTS lexical_terms (
  agent_id text NOT NULL,
  term text NOT NULL,
  df bigint NOT NULL,
  PRIMARY KEY (agent_id, term)
);
INSERT INTO lexical_terms(agent_id, term, df)
  SELECT agent_id, term, count(*) FROM lexical_postings GROUP BY agent_id, term
  ON CONFLICT (agent_id, term) DO NOTHING;
CREATE OR REPLACE FUNCTION engram_lexical_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO lexical_terms(agent_id, term, df)
      SELECT agent_id, term, count(*) FROM (SELECT DISTINCT d.agent_id, d.key, t.term FROM engram_units d,
        unnest(d.tokens) AS t(term)) u GROUP BY agent_id, term ORDER BY agent_id, term
      ON CONFLICT (agent_id, term) DO UPDATE SET df = lexical_terms.df + EXCLUDED.df;
  ELSE
    UPDATE lexical_terms n SET df = n.df - u.df FROM (
      SELECT agent_id, term, count(*) AS df FROM (SELECT DISTINCT d.agent_id, d.key, t.term FROM engram_units d,
        unnest(d.tokens) AS t(term)) x GROUP BY agent_id, term ORDER BY agent_id, term) u
      WHERE n.agent_id = u.agent_id AND n.term = u.term;
  END IF;
  RETURN NULL;
END $$;
DROP TRIGGER IF EXISTS lexical_docs_terms_insert ON lexical_docs;
CREATE TRIGGER lexical_docs_terms_insert AFTER INSERT ON lexical_docs
  REFERENCING NEW TABLE AS engram_units FOR EACH STATEMENT EXECUTE FUNCTION engram_lexical_terms();
DROP TRIGGER IF EXISTS lexical_docs_terms_delete ON lexical_docs;
CREATE TRIGGER lexical_docs_terms_delete AFTER DELETE ON lexical_docs
  REFERENCING OLD TABLE AS engram_units FOR EACH STATEMENT EXECUTE FUNCTION engram_lexical_terms();
`,
  },
  {
    // BM25 statistics per user (\`lexical_user_stats\`, \`lexical_user_terms\`; each unit's user on \`lexical_docs\`,
    // '' for the agent's own): a user-scoped search scores with the statistics of the agent's own units and that
    // user's, so another user's writes never move its scores (which its explanation shows) and never tell it
    // which words that user wrote. The agent's totals stay for whole-agent searches. A unit takes its user from
    // its memory's row in a trigger, so a writer that does not name it (one still running an older Engram while
    // another migrates) cannot file it under the agent. The triggers update the agent's row before the user's,
    // in the order of version 10, so two writers of one agent never wait on each other in opposite orders. A row
    // that counts nothing any more (the agent's or a user's) is deleted, so erased memories' words do not stay
    // behind; the rows earlier versions left at zero go here.
    version: 11,
    sql: `
ALTER TABLE lexical_docs ADD COLUMN IF NOT EXISTS user_id text NOT NULL DEFAULT '';
UPDATE lexical_docs d SET user_id = m.user_id FROM memories m
  WHERE m.rid = d.rid AND m.agent_id = d.agent_id AND m.user_id IS NOT NULL AND d.user_id <> m.user_id;
DELETE FROM lexical_terms WHERE df <= 0;
DELETE FROM lexical_stats WHERE docs <= 0;
CREATE TABLE IF NOT EXISTS lexical_user_stats (
  agent_id text NOT NULL,
  user_id text NOT NULL,
  docs bigint NOT NULL,
  total_length bigint NOT NULL,
  PRIMARY KEY (agent_id, user_id)
);
DELETE FROM lexical_user_stats;
INSERT INTO lexical_user_stats(agent_id, user_id, docs, total_length)
  SELECT agent_id, user_id, count(*), coalesce(sum(length), 0) FROM lexical_docs GROUP BY agent_id, user_id;
CREATE TABLE IF NOT EXISTS lexical_user_terms (
  agent_id text NOT NULL,
  user_id text NOT NULL,
  term text NOT NULL,
  df bigint NOT NULL,
  PRIMARY KEY (agent_id, user_id, term)
);
DELETE FROM lexical_user_terms;
INSERT INTO lexical_user_terms(agent_id, user_id, term, df)
  SELECT d.agent_id, d.user_id, p.term, count(*) FROM lexical_postings p JOIN lexical_docs d ON d.key = p.key
  GROUP BY d.agent_id, d.user_id, p.term;
CREATE OR REPLACE FUNCTION engram_lexical_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.user_id := coalesce(
    (SELECT m.user_id FROM memories m WHERE m.rid = NEW.rid AND m.agent_id = NEW.agent_id), '');
  RETURN NEW;
END $$;
DROP TRIGGER IF EXISTS lexical_docs_user ON lexical_docs;
CREATE TRIGGER lexical_docs_user BEFORE INSERT ON lexical_docs
  FOR EACH ROW EXECUTE FUNCTION engram_lexical_user();
CREATE OR REPLACE FUNCTION engram_lexical_stats() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO lexical_stats(agent_id, docs, total_length) VALUES (NEW.agent_id, 1, NEW.length)
      ON CONFLICT (agent_id) DO UPDATE SET docs = lexical_stats.docs + 1,
        total_length = lexical_stats.total_length + EXCLUDED.total_length;
    INSERT INTO lexical_user_stats(agent_id, user_id, docs, total_length)
      VALUES (NEW.agent_id, NEW.user_id, 1, NEW.length)
      ON CONFLICT (agent_id, user_id) DO UPDATE SET docs = lexical_user_stats.docs + 1,
        total_length = lexical_user_stats.total_length + EXCLUDED.total_length;
    RETURN NEW;
  END IF;
  UPDATE lexical_stats SET docs = docs - 1, total_length = total_length - OLD.length WHERE agent_id = OLD.agent_id;
  DELETE FROM lexical_stats WHERE agent_id = OLD.agent_id AND docs <= 0;
  UPDATE lexical_user_stats SET docs = docs - 1, total_length = total_length - OLD.length
    WHERE agent_id = OLD.agent_id AND user_id = OLD.user_id;
  DELETE FROM lexical_user_stats WHERE agent_id = OLD.agent_id AND user_id = OLD.user_id AND docs <= 0;
  RETURN OLD;
END $$;
CREATE OR REPLACE FUNCTION engram_lexical_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO lexical_terms(agent_id, term, df)
      SELECT agent_id, term, count(*) FROM (SELECT DISTINCT d.agent_id, d.key, t.term FROM engram_units d,
        unnest(d.tokens) AS t(term)) u GROUP BY agent_id, term ORDER BY agent_id, term
      ON CONFLICT (agent_id, term) DO UPDATE SET df = lexical_terms.df + EXCLUDED.df;
    INSERT INTO lexical_user_terms(agent_id, user_id, term, df)
      SELECT agent_id, user_id, term, count(*) FROM (SELECT DISTINCT d.agent_id, d.user_id, d.key, t.term
        FROM engram_units d, unnest(d.tokens) AS t(term)) u
      GROUP BY agent_id, user_id, term ORDER BY agent_id, user_id, term
      ON CONFLICT (agent_id, user_id, term) DO UPDATE SET df = lexical_user_terms.df + EXCLUDED.df;
  ELSE
    UPDATE lexical_terms n SET df = n.df - u.df FROM (
      SELECT agent_id, term, count(*) AS df FROM (SELECT DISTINCT d.agent_id, d.key, t.term FROM engram_units d,
        unnest(d.tokens) AS t(term)) x GROUP BY agent_id, term ORDER BY agent_id, term) u
      WHERE n.agent_id = u.agent_id AND n.term = u.term;
    DELETE FROM lexical_terms n USING (SELECT DISTINCT d.agent_id, t.term FROM engram_units d,
        unnest(d.tokens) AS t(term)) u
      WHERE n.agent_id = u.agent_id AND n.term = u.term AND n.df <= 0;
    UPDATE lexical_user_terms n SET df = n.df - u.df FROM (
      SELECT agent_id, user_id, term, count(*) AS df FROM (SELECT DISTINCT d.agent_id, d.user_id, d.key, t.term
        FROM engram_units d, unnest(d.tokens) AS t(term)) x
      GROUP BY agent_id, user_id, term ORDER BY agent_id, user_id, term) u
      WHERE n.agent_id = u.agent_id AND n.user_id = u.user_id AND n.term = u.term;
    DELETE FROM lexical_user_terms n USING (SELECT DISTINCT d.agent_id, d.user_id, t.term FROM engram_units d,
        unnest(d.tokens) AS t(term)) u
      WHERE n.agent_id = u.agent_id AND n.user_id = u.user_id AND n.term = u.term AND n.df <= 0;
  END IF;
  RETURN NULL;
END $$;
`,
  },
];

/** The schema version this code writes. */
export const PG_SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** The column type of vectors for `dimensions`: `vector` up to 2,000, `halfvec` above. */
export function vectorColumnType(dimensions: number): 'vector' | 'halfvec' {
  return dimensions > MAX_FULL_PRECISION_DIMENSIONS ? 'halfvec' : 'vector';
}

/** The SQL that creates the vector table and its HNSW (cosine) index for `dimensions`. */
export function vectorTableSql(dimensions: number): string {
  const type = vectorColumnType(dimensions);
  const index =
    dimensions <= MAX_INDEXED_DIMENSIONS
      ? `CREATE INDEX IF NOT EXISTS memory_vectors_hnsw ON memory_vectors USING hnsw (embedding ${type}_cosine_ops);`
      : '';
  return `CREATE TABLE IF NOT EXISTS memory_vectors (
  agent_id text NOT NULL,
  key bigint PRIMARY KEY,
  rid bigint NOT NULL REFERENCES memories(rid) ON DELETE CASCADE,
  embedding ${type}(${dimensions}) NOT NULL
);
CREATE INDEX IF NOT EXISTS memory_vectors_rid ON memory_vectors(rid);
CREATE INDEX IF NOT EXISTS memory_vectors_agent ON memory_vectors(agent_id);
${index}`;
}

async function setMeta(ctx: PgContext, db: pg.PoolClient, key: string, value: string): Promise<void> {
  await ctx.run(
    db,
    'meta',
    'INSERT INTO engram_meta(key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value',
    [key, value],
  );
}

/** The binding a migrated database records. */
export interface PgMigrationResult {
  readonly profile: EmbeddingProfile | null;
  readonly fingerprint: string;
  readonly schemaVersion: number;
}

/**
 * Brings the database to `PG_SCHEMA_VERSION` under the advisory lock, in one transaction, and binds the
 * embedder profile: `undefined` adopts the recorded one; a different one is `ENGRAM_STORE_FINGERPRINT_MISMATCH`.
 * A database from a newer Engram is `ENGRAM_STORE_SCHEMA_TOO_NEW`.
 */
export async function migrate(
  ctx: PgContext,
  embedding: EmbeddingProfile | null | undefined,
): Promise<PgMigrationResult> {
  const client = await ctx.pool.connect();
  let broken = false;
  try {
    await ctx.run(client, 'meta', 'SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await ctx.run(client, 'meta', 'BEGIN');
      try {
        const result = await migrateLocked(ctx, client, embedding);
        await ctx.run(client, 'meta', 'COMMIT');
        return result;
      } catch (err) {
        await ctx.run(client, 'meta', 'ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      }
    } finally {
      await ctx.run(client, 'meta', 'SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {
        broken = true;
      });
    }
  } finally {
    client.release(broken);
  }
}

async function migrateLocked(
  ctx: PgContext,
  db: pg.PoolClient,
  embedding: EmbeddingProfile | null | undefined,
): Promise<PgMigrationResult> {
  await ctx.run(
    db,
    'meta',
    'CREATE TABLE IF NOT EXISTS engram_meta (key text PRIMARY KEY, value text NOT NULL)',
  );
  const getMeta = async (key: string): Promise<string | undefined> =>
    (await ctx.q<{ value: string }>(db, 'meta', 'SELECT value FROM engram_meta WHERE key = $1', [key]))[0]
      ?.value;
  const current = Number((await getMeta('schema_version')) ?? '0');
  if (!Number.isSafeInteger(current) || current < 0) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'the recorded schema version is malformed');
  }
  if (current > PG_SCHEMA_VERSION) {
    throw new EngramStoreError(
      'ENGRAM_STORE_SCHEMA_TOO_NEW',
      `the database schema version ${current} is newer than this store supports (${PG_SCHEMA_VERSION})`,
    );
  }
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    await ctx.run(db, 'meta', m.sql);
    await setMeta(ctx, db, 'schema_version', String(m.version));
  }
  if ((await getMeta('tokenizer')) === undefined) await setMeta(ctx, db, 'tokenizer', TOKENIZER_DESCRIPTION);
  if ((await getMeta('created_at')) === undefined) await setMeta(ctx, db, 'created_at', String(ctx.now()));
  const storedFp = await getMeta('embedding_fingerprint');
  let profile: EmbeddingProfile | null;
  if (storedFp === undefined) {
    profile = embedding ?? null;
    await setMeta(ctx, db, 'embedding_fingerprint', embeddingFingerprint(profile));
  } else if (embedding === undefined) {
    profile = parseEmbeddingFingerprint(storedFp);
  } else {
    if (embeddingFingerprint(embedding) !== storedFp) {
      throw new EngramStoreError(
        'ENGRAM_STORE_FINGERPRINT_MISMATCH',
        'the database was created with another embedder profile; call resetEmbeddings to re-index',
      );
    }
    profile = embedding;
  }
  if (profile !== null) {
    await ensurePgvector(ctx, db);
    await ctx.run(db, 'meta', vectorTableSql(profile.dimensions));
  }
  return {
    profile: profile === null ? null : { id: profile.id, dimensions: profile.dimensions },
    fingerprint: embeddingFingerprint(profile),
    schemaVersion: PG_SCHEMA_VERSION,
  };
}

/** The oldest pgvector the vector arm runs on: 0.8 brought iterative index scans, which keep a filtered k-NN from starving. */
export const MIN_PGVECTOR: readonly [number, number] = [0, 8];

/**
 * Creates the `vector` extension if needed and checks its version: an older pgvector would open and then fail
 * every vector search (`hnsw.iterative_scan` is unknown before 0.8), so it is refused here, at open.
 */
export async function ensurePgvector(ctx: PgContext, db: pg.PoolClient): Promise<void> {
  await ctx.run(db, 'meta', 'CREATE EXTENSION IF NOT EXISTS vector');
  const rows = await ctx.q<{ extversion: string }>(
    db,
    'meta',
    "SELECT extversion FROM pg_extension WHERE extname = 'vector'",
  );
  if (!pgvectorSupported(rows[0]?.extversion)) {
    throw new EngramStoreError(
      'ENGRAM_STORE_NATIVE_UNAVAILABLE',
      `pgvector ${MIN_PGVECTOR.join('.')} or later is required (the server has ${rows[0]?.extversion ?? 'none'})`,
    );
  }
}

/** True for a pgvector version string at or above {@link MIN_PGVECTOR}. */
export function pgvectorSupported(version: string | undefined): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  if (m === null) return false;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major > MIN_PGVECTOR[0] || (major === MIN_PGVECTOR[0] && minor >= MIN_PGVECTOR[1]);
}

export { setMeta };
