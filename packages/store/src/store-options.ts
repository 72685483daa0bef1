/**
 * What a store adapter's options and reports share with its callers: how a file or database is opened, the
 * vector index setting, its build progress, the integrity result, and the embedder fingerprint recorded in
 * the store. Pure types and values; each adapter validates them.
 */
import type { IntegrityState } from '@engram/contracts/enums';
import { EngramStoreError } from './errors.js';
import type { EmbeddingProfile } from './types.js';

/** One report of a quantised vector index build (`onIndexProgress`): counts only. */
export interface VectorIndexProgress {
  readonly phase: 'vectorIndex';
  /** The quantisation being built. */
  readonly quantization: 'int8' | 'bit';
  /** Steps of this build finished so far (one transaction each; 0 in a report before the first). */
  readonly step: number;
  /** Vectors that have their quantised copy (including those done by an earlier, interrupted build). */
  readonly done: number;
  /** The stored float vectors. */
  readonly total: number;
}

/** How a store file is opened: `read` (a read-only connection) or `write`. */
export type StoreAccess = 'read' | 'write';

/** Options of `repairEmbeddingIntegrity`. */
export interface RepairEmbeddingIntegrityOptions {
  /** At most this many rows are repaired (default 1000, at most 100,000). */
  readonly limit?: number;
}

/** How the vector index is quantised: `none` (exact float scan, the default), `int8` or `bit`. */
export type VectorQuantization = 'none' | 'int8' | 'bit';

/** The vector index options of a SQLite store. */
export interface VectorIndexOptions {
  /** `none` (default): exact float k-NN. `int8` / `bit`: a coarse k-NN on quantised vectors, then exact rescoring. */
  readonly quantization?: VectorQuantization;
  /**
   * How many coarse candidates per wanted neighbour are rescored with the exact float distance (an integer,
   * 1–64; default 8 for `int8`, 16 for `bit`). Applies at query time: changing it needs no re-index.
   */
  readonly rescore?: number;
}

/** The vector index a store searches with: the recorded quantisation and the oversampling of the coarse pass. */
export interface VectorIndexSetting {
  readonly quantization: VectorQuantization;
  readonly rescore: number;
}

/** The outcome of the file's last integrity check (`PRAGMA quick_check`), and when it ran (epoch ms). */
export interface IntegrityResult {
  readonly state: IntegrityState;
  readonly checkedAt: number | null;
  /**
   * Present when the structure is sound but rows hold values no reader can use (a timestamp outside JavaScript's
   * `Date` range or not a number, metadata or a tag list that is not a JSON object or list, an id that is not
   * text, a revision, position or cursor that is not a counter, a value a CHECK constraint forbids): how many. The state
   * is then `failed`, yet writes stay allowed, so those rows can be forgotten or the store exported and restored
   * (reads never fail on them: such a value reads as invalid).
   */
  readonly badRows?: number;
  /**
   * Present when vector index chunks are damaged (a SQLite file whose sqlite-vec chunk blobs were rewritten by
   * another tool): how many. The state is then `failed`, yet writes stay allowed, and the first write that meets
   * such a chunk (or the maintenance integrity step) repairs it: its vectors are dropped and their memories
   * embedded again from their text.
   */
  readonly damagedVectorChunks?: number;
}

/** The fingerprint of an embedder profile: `profileId:dimensions`, or `none`. */
export function embeddingFingerprint(profile: EmbeddingProfile | null): string {
  return profile === null ? 'none' : `${profile.id}:${profile.dimensions}`;
}

/** The profile of a recorded fingerprint (`none`: null); a malformed one is `ENGRAM_STORE_CORRUPT`. */
export function parseEmbeddingFingerprint(fp: string): EmbeddingProfile | null {
  if (fp === 'none') return null;
  const at = fp.lastIndexOf(':');
  const dims = Number(fp.slice(at + 1));
  if (at <= 0 || !Number.isSafeInteger(dims) || dims < 1) {
    throw new EngramStoreError('ENGRAM_STORE_CORRUPT', 'the recorded embedder fingerprint is malformed');
  }
  return { id: fp.slice(0, at), dimensions: dims };
}

/** The tokenizer description recorded in the meta table (the SQLite adapter's FTS5 tokenizers and the BM25 tokens). */
export const TOKENIZER_DESCRIPTION: string =
  'words=porter unicode61 remove_diacritics 2; trigram=trigram (cjk rows only); bm25=porter words + cjk unigrams and bigrams';

/**
 * The result of an integrity check at `at`: `ok` when the file's or database's own check passed and no stored
 * row holds a value no reader can use; `failed` otherwise, with the count of such rows (`badRows`) and of damaged
 * vector index chunks (`damagedVectorChunks`).
 */
export function integrityResult(
  checkPassed: boolean,
  badRows: number,
  at: number,
  damagedVectorChunks = 0,
): IntegrityResult {
  if (!checkPassed || (badRows === 0 && damagedVectorChunks === 0)) {
    return { state: checkPassed ? 'ok' : 'failed', checkedAt: at };
  }
  return {
    state: 'failed',
    checkedAt: at,
    ...(badRows > 0 ? { badRows } : {}),
    ...(damagedVectorChunks > 0 ? { damagedVectorChunks } : {}),
  };
}

/**
 * Whether writes stay allowed after `integrity`: always unless it failed, and after a failure only when the
 * structure is sound and the failure is rows no reader can use or damaged vector chunks.
 */
export function integrityAllowsWrites(integrity: IntegrityResult): boolean {
  return (
    integrity.state !== 'failed' ||
    integrity.badRows !== undefined ||
    integrity.damagedVectorChunks !== undefined
  );
}
