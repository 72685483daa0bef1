import { createHash } from 'node:crypto';
import {
  closeSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from './datasets/zip.js';
import { EngramEvalError } from './errors.js';

/**
 * An on-disk vector cache, one append-only file per embedder profile, keyed by the store's content hash.
 *
 * Layout: `<dir>/<slug>-<dimensions>-<key>/profile.json` (`{ format, id, dimensions }`, written atomically)
 * and `vectors.bin`, a sequence of fixed-size records: the 32-byte SHA-256 content hash, the vector as
 * `dimensions` little-endian float32, and a CRC-32 of both. Records are only ever appended (one write and
 * one fsync per batch); a crash can leave at most a torn or unwritten tail, which the next open detects by
 * length and checksum and cuts off before appending. One process should use a cache directory at a time.
 */

/** Version of the on-disk format. */
export const VECTOR_CACHE_FORMAT = 1;

/** The profile a cache file belongs to: vectors of different profiles never mix. */
export interface VectorCacheProfile {
  /** Profile id (plus any variant suffix that changes vectors, e.g. the deterministic ablation). */
  readonly id: string;
  readonly dimensions: number;
}

/** An open vector cache of one profile. */
export interface VectorCache {
  readonly profile: VectorCacheProfile;
  /** The directory holding this profile's files. */
  readonly directory: string;
  /** Records read at open (valid ones). */
  readonly loaded: number;
  /** The vector stored for a content hash (64 lower-case hex), if any. */
  get(hash: string): Float32Array | undefined;
  /** Appends vectors (hash → vector) in one write and one fsync; hashes already present are skipped. */
  append(entries: ReadonlyArray<readonly [string, Float32Array]>): void;
}

const HASH_BYTES = 32;
const HEX64 = /^[0-9a-f]{64}$/;

function slug(id: string): string {
  const s = id.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 48);
  return s === '' ? 'profile' : s;
}

/** The directory name of a profile inside a cache directory (readable slug plus a hash of the exact key). */
export function vectorCacheDirectoryName(profile: VectorCacheProfile): string {
  const key = createHash('sha256').update(`${profile.id}\n${profile.dimensions}`, 'utf8').digest('hex');
  return `${slug(profile.id)}-${profile.dimensions}-${key.slice(0, 12)}`;
}

/** Opens (creating when needed) the cache file of a profile under `directory`. */
export function openVectorCache(directory: string, profile: VectorCacheProfile): VectorCache {
  if (!Number.isInteger(profile.dimensions) || profile.dimensions < 1 || profile.id === '') {
    throw new EngramEvalError(
      'ENGRAM_EVAL_INVALID_ARGUMENTS',
      'A vector cache needs a profile id and dimensions.',
    );
  }
  const dir = join(directory, vectorCacheDirectoryName(profile));
  mkdirSync(dir, { recursive: true });
  const metaPath = join(dir, 'profile.json');
  const meta = { format: VECTOR_CACHE_FORMAT, id: profile.id, dimensions: profile.dimensions };
  let existing: unknown;
  try {
    existing = JSON.parse(readFileSync(metaPath, 'utf8')) as unknown;
  } catch {
    existing = undefined;
  }
  if (existing === undefined) {
    const tmp = `${metaPath}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(meta)}\n`);
    renameSync(tmp, metaPath);
  } else if (JSON.stringify(existing) !== JSON.stringify(meta)) {
    throw new EngramEvalError(
      'ENGRAM_EVAL_INVALID_ARGUMENTS',
      'The vector cache directory holds another profile or format under this name; choose another --cache.',
    );
  }

  const recordBytes = HASH_BYTES + 4 * profile.dimensions + 4;
  const dataPath = join(dir, 'vectors.bin');
  const fd = openSync(dataPath, 'a+');
  const vectors = new Map<string, Float32Array>();
  let validBytes = 0;
  try {
    const bytes = readFileSync(dataPath);
    for (let at = 0; at + recordBytes <= bytes.length; at += recordBytes) {
      const body = bytes.subarray(at, at + recordBytes - 4);
      if (crc32(body) !== bytes.readUInt32LE(at + recordBytes - 4)) break;
      const hash = body.subarray(0, HASH_BYTES).toString('hex');
      const vector = new Float32Array(profile.dimensions);
      for (let i = 0; i < profile.dimensions; i += 1) vector[i] = body.readFloatLE(HASH_BYTES + 4 * i);
      vectors.set(hash, vector);
      validBytes = at + recordBytes;
    }
    // A torn tail of a crashed run: cut it so that new records stay aligned.
    if (validBytes < bytes.length) ftruncateSync(fd, validBytes);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  closeSync(fd);
  const loaded = vectors.size;

  return {
    profile: Object.freeze({ id: profile.id, dimensions: profile.dimensions }),
    directory: dir,
    loaded,
    get: (hash) => vectors.get(hash),
    append(entries) {
      const fresh = entries.filter(([hash]) => !vectors.has(hash));
      if (fresh.length === 0) return;
      const out = Buffer.alloc(fresh.length * recordBytes);
      fresh.forEach(([hash, vector], n) => {
        if (!HEX64.test(hash) || vector.length !== profile.dimensions) {
          throw new EngramEvalError(
            'ENGRAM_EVAL_INVALID_ARGUMENTS',
            'A cached vector needs a SHA-256 hex hash and the profile dimensions.',
          );
        }
        const at = n * recordBytes;
        out.write(hash, at, HASH_BYTES, 'hex');
        for (let i = 0; i < vector.length; i += 1)
          out.writeFloatLE(vector[i] as number, at + HASH_BYTES + 4 * i);
        out.writeUInt32LE(crc32(out.subarray(at, at + recordBytes - 4)), at + recordBytes - 4);
      });
      const handle = openSync(dataPath, 'a');
      try {
        writeSync(handle, out);
        fsyncSync(handle);
      } finally {
        closeSync(handle);
      }
      for (const [hash, vector] of fresh) vectors.set(hash, Float32Array.from(vector));
    },
  };
}
