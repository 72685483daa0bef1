/**
 * fast-check arbitraries of the hostile file classes a store path can hold: files that are not Engram stores
 * (random bytes, text, a SQLite header over garbage, another application's SQLite database with or without its
 * own application id, journal mode or `meta` table, an Engram file from a newer version or with a damaged
 * schema version) and damaged Engram files (seeded random bit flips past the header page). Each value is a
 * recipe; `writeForeignFile` and `damageFile` turn it into bytes on disk.
 */
import { writeFileSync } from 'node:fs';
import { openDatabase } from '@engram/store-sqlite/raw';
import fc from 'fast-check';
import { createPrng } from './harness.js';

/** A file that is not a usable Engram store, as a recipe. */
export type ForeignFile =
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'sqliteHeader'; readonly tail: Uint8Array }
  | {
      readonly kind: 'otherApp';
      readonly applicationId: number;
      readonly journal: 'delete' | 'truncate' | 'persist';
      readonly tables: readonly { readonly name: string; readonly rows: readonly string[] }[];
      /** A table named `meta` of the other application (never with a `schema_version` key). */
      readonly meta: boolean;
    }
  | { readonly kind: 'engramVersion'; readonly version: string };

const identifier = fc.stringMatching(/^[a-z][a-z0-9_]{0,15}$/).filter((n) => !n.startsWith('sqlite'));

/** Files that no command may treat as an Engram store. */
export const foreignFile: fc.Arbitrary<ForeignFile> = fc.oneof(
  fc.uint8Array({ minLength: 1, maxLength: 16_384 }).map((bytes) => ({ kind: 'bytes' as const, bytes })),
  fc
    .array(fc.string({ unit: 'grapheme', maxLength: 80 }), { minLength: 1, maxLength: 200 })
    .map((lines) => ({ kind: 'text' as const, text: `${lines.join('\n')}\n` })),
  fc.uint8Array({ minLength: 84, maxLength: 8192 }).map((tail) => ({ kind: 'sqliteHeader' as const, tail })),
  fc.record({
    kind: fc.constant('otherApp' as const),
    applicationId: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 ** 31 - 1 })),
    journal: fc.constantFrom('delete' as const, 'truncate' as const, 'persist' as const),
    tables: fc.uniqueArray(
      fc.record({ name: identifier, rows: fc.array(fc.string({ maxLength: 40 }), { maxLength: 20 }) }),
      { selector: (t) => t.name, minLength: 1, maxLength: 4 },
    ),
    meta: fc.boolean(),
  }),
  fc
    .constantFrom('0', '-1', '1.5', 'abc', '', '99999', '1e3')
    .map((version) => ({ kind: 'engramVersion' as const, version })),
);

/** Writes a foreign file at `path`; `engramTemplate` is a sound Engram file (for the version recipes). */
export function writeForeignFile(path: string, file: ForeignFile, engramTemplate: Buffer): void {
  switch (file.kind) {
    case 'bytes':
      writeFileSync(path, file.bytes);
      return;
    case 'text':
      writeFileSync(path, file.text);
      return;
    case 'sqliteHeader':
      writeFileSync(path, Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), file.tail]));
      return;
    case 'otherApp': {
      const db = openDatabase(path, { loadVectorExtension: false });
      try {
        db.exec(`PRAGMA journal_mode = ${file.journal.toUpperCase()}`);
        if (file.applicationId !== 0) db.exec(`PRAGMA application_id = ${file.applicationId}`);
        for (const table of file.tables) {
          // `meta` is this recipe's own flag: a table of that name is made below, with other keys.
          const name = table.name === 'meta' ? 'meta_' : table.name;
          db.exec(`CREATE TABLE "${name}" (id INTEGER PRIMARY KEY, value TEXT)`);
          const insert = db.prepare(`INSERT INTO "${name}" (value) VALUES (?)`);
          for (const row of table.rows) insert.run(row);
        }
        if (file.meta) {
          db.exec('CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)');
          db.prepare("INSERT INTO meta (key, value) VALUES ('version', '2')").run();
        }
      } finally {
        db.close();
      }
      return;
    }
    case 'engramVersion': {
      writeFileSync(path, engramTemplate);
      const db = openDatabase(path, { loadVectorExtension: false });
      try {
        db.exec('PRAGMA journal_mode = DELETE');
        db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(file.version);
      } finally {
        db.close();
      }
      return;
    }
  }
}

/** A damage recipe: how many bits to flip and the seed that places them. */
export interface Damage {
  readonly seed: number;
  readonly flips: number;
}

/** Between 1 and 400 bit flips, seeded. */
export const damage: fc.Arbitrary<Damage> = fc.record({
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
  flips: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 21, max: 400 })),
});

/** The template's bytes with the damage applied to pages 2 and later (the header page stays readable). */
export function damageFile(template: Buffer, d: Damage): Buffer {
  const bytes = Buffer.from(template);
  const pageSize = bytes.readUInt16BE(16) === 1 ? 65_536 : bytes.readUInt16BE(16);
  const pages = Math.floor(bytes.length / pageSize);
  const prng = createPrng(d.seed);
  for (let i = 0; i < d.flips; i += 1) {
    const page = 1 + prng.int(Math.max(1, pages - 1));
    const at = page * pageSize + prng.int(pageSize);
    if (at < bytes.length) bytes[at] = (bytes[at] ?? 0) ^ (1 << prng.int(8));
  }
  return bytes;
}
