/**
 * Migrations at open: the schema version check, the migration steps, the meta rows (tokenizer, creation time)
 * and the embedder binding recorded as a fingerprint.
 */

import type { EmbeddingProfile } from '@engram/store/port-kit';
import { EngramStoreError, embeddingFingerprint, parseEmbeddingFingerprint } from '@engram/store/port-kit';
import {
  ENGRAM_APPLICATION_ID,
  META_TABLE_SQL,
  MIGRATIONS,
  SCHEMA_VERSION,
  TOKENIZER_DESCRIPTION,
  vectorTableSql,
} from '../schema.js';
import type { StoreContext } from './context.js';
import {
  hasQuantTable,
  parseRecordedQuantization,
  VECTOR_INDEX_META,
  type VectorQuantization,
  vectorIndexMismatch,
} from './vector-quant.js';
import { prepareQuantIndex, QUANT_BUILD_META, quantBuildPending } from './vector-quant-build.js';

export { embeddingFingerprint };

/** Upserts one meta row. */
export function setMeta(ctx: StoreContext, key: string, value: string): void {
  ctx
    .stmt(
      'meta',
      'INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    )
    .run(key, value);
}

function tooNew(version: number): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_SCHEMA_TOO_NEW',
    `the database schema version ${version} is newer than this store supports (${SCHEMA_VERSION})`,
  );
}

/** The binding a migrated database records. */
export interface MigrationResult {
  readonly profile: EmbeddingProfile | null;
  readonly fingerprint: string;
  readonly schemaVersion: number;
  /** The vector index quantisation the file records (`none` for a file without one). */
  readonly quantization: VectorQuantization;
  /** True while the file records an unfinished quantised-table build (see `vector-quant-build.ts`). */
  readonly quantBuildPending: boolean;
}

/**
 * The binding of an up-to-date file, read with plain reads and no lock: the recorded embedder profile checked
 * against `embedding` (`undefined` adopts it; another one is `ENGRAM_STORE_FINGERPRINT_MISMATCH`). Returns null
 * when a write is needed (a meta row to add, an unstamped file, the vector table to create, a quantised-table
 * build to finish); a read-only open
 * never writes, so it binds what is there (a file without a recorded profile has no vector index).
 */
export function readBinding(
  ctx: StoreContext,
  embedding: EmbeddingProfile | null | undefined,
  writable: boolean,
  stamped: boolean,
  quantization?: VectorQuantization,
): MigrationResult | null {
  const rows = ctx
    .stmt(
      'meta',
      `SELECT key, value FROM meta WHERE key IN ('tokenizer', 'created_at', 'embedding_fingerprint', '${VECTOR_INDEX_META}', '${QUANT_BUILD_META}')`,
    )
    .all<{ key: string; value: string }>();
  const meta = new Map(rows.map((r) => [r.key, r.value]));
  const storedFp = meta.get('embedding_fingerprint');
  const storedIndex = parseRecordedQuantization(meta.get(VECTOR_INDEX_META));
  const pending = meta.has(QUANT_BUILD_META);
  if (
    writable &&
    (!stamped ||
      pending ||
      storedFp === undefined ||
      storedIndex === undefined ||
      !meta.has('tokenizer') ||
      !meta.has('created_at'))
  ) {
    return null;
  }
  const recorded = storedFp === undefined ? null : parseEmbeddingFingerprint(storedFp);
  if (embedding !== undefined && embeddingFingerprint(embedding) !== embeddingFingerprint(recorded)) {
    throw mismatch();
  }
  const index = storedIndex ?? 'none';
  if (quantization !== undefined && quantization !== index) throw vectorIndexMismatch(quantization, index);
  if (writable && recorded !== null) {
    const hasVec = ctx
      .stmt('meta', "SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'memories_vec'")
      .get<{ x: number }>();
    if (hasVec === undefined) return null;
    if (index !== 'none' && !hasQuantTable(ctx.db)) return null;
  }
  return {
    profile: recorded === null ? null : { id: recorded.id, dimensions: recorded.dimensions },
    fingerprint: embeddingFingerprint(recorded),
    schemaVersion: SCHEMA_VERSION,
    quantization: index,
    quantBuildPending: pending,
  };
}

function mismatch(): EngramStoreError {
  return new EngramStoreError(
    'ENGRAM_STORE_FINGERPRINT_MISMATCH',
    'the database was created with another embedder profile; call resetEmbeddings to re-index',
  );
}

/**
 * Brings the database to `SCHEMA_VERSION` in one `BEGIN IMMEDIATE` transaction, stamps the Engram application
 * id and binds the embedder profile: `undefined` adopts the recorded one; a different one is
 * `ENGRAM_STORE_FINGERPRINT_MISMATCH`. The caller identified the file first (`identify.ts`); the version is
 * read again under the lock, so two processes creating one file migrate it once.
 */
export function migrate(
  ctx: StoreContext,
  embedding: EmbeddingProfile | null | undefined,
  quantization?: VectorQuantization,
): MigrationResult {
  const db = ctx.db;
  return ctx.tx(() => {
    db.exec(META_TABLE_SQL);
    const getMeta = (key: string): string | undefined =>
      ctx.stmt('meta', 'SELECT value FROM meta WHERE key = ?').get<{ value: string }>(key)?.value;
    const current = Number(getMeta('schema_version') ?? '0');
    if (!Number.isSafeInteger(current) || current < 0) {
      throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'the recorded schema version is malformed');
    }
    if (current > SCHEMA_VERSION) throw tooNew(current);
    db.exec(`PRAGMA application_id = ${ENGRAM_APPLICATION_ID}`);
    ctx.count('meta');
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      migration.up(db, ctx);
      ctx.count('meta');
      setMeta(ctx, 'schema_version', String(migration.version));
    }
    if (getMeta('tokenizer') === undefined) setMeta(ctx, 'tokenizer', TOKENIZER_DESCRIPTION);
    if (getMeta('created_at') === undefined) setMeta(ctx, 'created_at', String(ctx.now()));
    const storedFp = getMeta('embedding_fingerprint');
    let profile: EmbeddingProfile | null;
    if (storedFp === undefined) {
      profile = embedding ?? null;
      setMeta(ctx, 'embedding_fingerprint', embeddingFingerprint(profile));
    } else if (embedding === undefined) {
      profile = parseEmbeddingFingerprint(storedFp);
    } else {
      if (embeddingFingerprint(embedding) !== storedFp) throw mismatch();
      profile = embedding;
    }
    if (profile !== null) {
      db.exec(vectorTableSql(profile.dimensions));
      ctx.count('meta');
    }
    // The vector index setting: a file without one (made before schema 8, or new) takes the one asked for, and
    // its quantised table is built from the stored float vectors; another one than recorded is a mismatch.
    const storedIndex = parseRecordedQuantization(getMeta(VECTOR_INDEX_META));
    if (storedIndex !== undefined && quantization !== undefined && quantization !== storedIndex) {
      throw vectorIndexMismatch(quantization, storedIndex);
    }
    const index = storedIndex ?? quantization ?? 'none';
    if (storedIndex === undefined) setMeta(ctx, VECTOR_INDEX_META, index);
    // Created empty here; the caller fills it after this transaction, in bounded steps.
    prepareQuantIndex(ctx, index, profile, false);
    return {
      profile: profile === null ? null : { id: profile.id, dimensions: profile.dimensions },
      fingerprint: embeddingFingerprint(profile),
      schemaVersion: SCHEMA_VERSION,
      quantization: index,
      quantBuildPending: quantBuildPending(ctx),
    };
  });
}
