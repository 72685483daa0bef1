import { inflateRawSync } from 'node:zlib';
import { EngramEvalError } from '../errors.js';

/** One file of a zip archive, decompressed. */
export interface ZipEntry {
  readonly name: string;
  readonly data: Buffer;
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE) of a buffer, as zip stores it. */
export function crc32(data: Uint8Array): number {
  if (crcTable === undefined) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n += 1) {
      let c = n;
      for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < data.length; i += 1) {
    crc = (crcTable[(crc ^ (data[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function bad(message: string): EngramEvalError {
  return new EngramEvalError('ENGRAM_EVAL_INVALID_DATASET', `Zip archive: ${message}`);
}

/**
 * Reads every file of a zip archive held in memory: stored (method 0) and deflated (method 8) entries,
 * CRC-checked, with zip64 sizes in the entries' extra fields. Archives that need a zip64 end record (more
 * than 65,534 entries or a directory past 4 GiB), encrypted entries and other compression methods are
 * rejected with `ENGRAM_EVAL_INVALID_DATASET`.
 */
export function readZip(archive: Buffer): readonly ZipEntry[] {
  // The end-of-central-directory record sits in the last 22 + 65,535 bytes (its comment is at most 64 KiB).
  const minStart = Math.max(0, archive.length - 22 - 0xffff);
  let eocd = -1;
  for (let i = archive.length - 22; i >= minStart; i -= 1) {
    if (archive.readUInt32LE(i) === EOCD_SIGNATURE) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw bad('no end-of-central-directory record');
  const count = archive.readUInt16LE(eocd + 10);
  const dirOffset = archive.readUInt32LE(eocd + 16);
  if (count === 0xffff || dirOffset === 0xffffffff) throw bad('zip64 end records are not supported');

  const entries: ZipEntry[] = [];
  let p = dirOffset;
  for (let n = 0; n < count; n += 1) {
    if (p + 46 > archive.length || archive.readUInt32LE(p) !== CENTRAL_SIGNATURE) {
      throw bad('malformed central directory');
    }
    const flags = archive.readUInt16LE(p + 8);
    const method = archive.readUInt16LE(p + 10);
    const crc = archive.readUInt32LE(p + 16);
    let compressedSize = archive.readUInt32LE(p + 20);
    let size = archive.readUInt32LE(p + 24);
    const nameLength = archive.readUInt16LE(p + 28);
    const extraLength = archive.readUInt16LE(p + 30);
    const commentLength = archive.readUInt16LE(p + 32);
    let localOffset = archive.readUInt32LE(p + 42);
    const name = archive.toString('utf8', p + 46, p + 46 + nameLength);
    // Zip64 extended information (extra field 0x0001): writers that stream (Python's zipfile among them)
    // put 0xFFFFFFFF in the 32-bit fields and the real values here, in this order, only for those fields.
    if (size === 0xffffffff || compressedSize === 0xffffffff || localOffset === 0xffffffff) {
      const extra = archive.subarray(p + 46 + nameLength, p + 46 + nameLength + extraLength);
      let e = 0;
      while (e + 4 <= extra.length) {
        const id = extra.readUInt16LE(e);
        const length = extra.readUInt16LE(e + 2);
        if (id === 0x0001) {
          let q = e + 4;
          const next = (): number => {
            if (q + 8 > e + 4 + length) throw bad('malformed zip64 extra field');
            const value = Number(extra.readBigUInt64LE(q));
            q += 8;
            return value;
          };
          if (size === 0xffffffff) size = next();
          if (compressedSize === 0xffffffff) compressedSize = next();
          if (localOffset === 0xffffffff) localOffset = next();
          break;
        }
        e += 4 + length;
      }
    }
    p += 46 + nameLength + extraLength + commentLength;

    if ((flags & 1) !== 0) throw bad('encrypted entries are not supported');
    if (name.endsWith('/')) continue;
    if (localOffset + 30 > archive.length || archive.readUInt32LE(localOffset) !== LOCAL_SIGNATURE) {
      throw bad('malformed local header');
    }
    const start =
      localOffset + 30 + archive.readUInt16LE(localOffset + 26) + archive.readUInt16LE(localOffset + 28);
    const raw = archive.subarray(start, start + compressedSize);
    if (raw.length !== compressedSize) throw bad('truncated entry');
    let data: Buffer;
    if (method === 0) data = Buffer.from(raw);
    else if (method === 8) data = inflateRawSync(raw);
    else throw bad(`compression method ${method} is not supported`);
    if (data.length !== size || crc32(data) !== crc) throw bad('entry failed its size or CRC check');
    entries.push({ name, data });
  }
  return entries;
}
