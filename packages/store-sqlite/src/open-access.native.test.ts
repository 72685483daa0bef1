/**
 * Access modes and file identification at open, against real files: a read open writes nothing and never
 * waits for a writer; a foreign, too-new, empty or damaged file is refused byte-identical; the integrity check
 * refuses writes to a corrupt file; a full disk and a damaged schema version say what they are.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isEngramStoreError } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDefaultDriver, openDatabase, type SqliteDatabase, type SqliteDriverOptions } from './native.js';
import { ENGRAM_APPLICATION_ID, SCHEMA_VERSION } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: (SqliteMemoryStore | SqliteDatabase)[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-access-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a throw');
}

async function rejected(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

function raw(path: string): SqliteDatabase {
  const db = openDatabase(path, { loadVectorExtension: false });
  open.push(db);
  return db;
}

const profile = { id: 'embedder-a', dimensions: 4 };

/** A closed, populated Engram file (deterministic ids and clock, so its bytes are the same on every run). */
async function populated(name: string, rows = 20): Promise<string> {
  const path = join(dir, name);
  let n = 0;
  const store = createSqliteMemoryStore({
    path,
    embedding: profile,
    now: () => 1_700_000_000_000,
    idFactory: () => {
      n += 1;
      return `id-${n}`;
    },
  });
  for (let i = 0; i < rows; i += 1) {
    await store.insertMemory({
      agentId: 'alice',
      kind: 'fact',
      content: `fact ${i}: the deploy of service ${i} uses port ${8000 + i} ${'and some padding words '.repeat(20)}`,
      tags: [`topic:t${i % 5}`],
    });
  }
  store.close();
  return path;
}

describe('access read', () => {
  it('reads an Engram file without writing a byte, and refuses every write with ENGRAM_STORE_READ_ONLY', async () => {
    const path = await populated('read.db');
    const before = sha256(path);
    const store = createSqliteMemoryStore({ path, access: 'read' });
    open.push(store);
    expect(store.access).toBe('read');
    expect(store.embeddingProfile).toEqual(profile);
    const hits = await store.searchLexical({ agentId: 'alice', terms: ['8003'], limit: 5 });
    expect(hits.hits).toHaveLength(1);
    expect(await store.listMemories('alice', { limit: 100 })).toHaveLength(20);
    const err = await rejected(store.insertMemory({ agentId: 'alice', kind: 'fact', content: 'new' }));
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_READ_ONLY' });
    expect(await rejected(store.recordAccess('alice', ['id-1']))).toMatchObject({
      code: 'ENGRAM_STORE_READ_ONLY',
    });
    const health = await store.health();
    expect(health.ok && health.health.totals.memories).toBe(20);
    store.close();
    expect(sha256(path)).toBe(before);
  });

  it('opens an encrypted file read-only with its key, and writes nothing', async () => {
    const path = join(dir, 'sealed.db');
    const key = 'correct horse battery staple';
    const writer = createSqliteMemoryStore({ path, embedding: null, encryption: { key } });
    await writer.insertMemory({ agentId: 'alice', kind: 'fact', content: 'sealed fact' });
    writer.close();
    const before = sha256(path);
    const reader = createSqliteMemoryStore({ path, access: 'read', encryption: { key } });
    open.push(reader);
    expect(reader.encrypted).toBe(true);
    expect((await reader.listMemories('alice', { limit: 5 })).map((m) => m.content)).toEqual(['sealed fact']);
    expect(
      await rejected(reader.insertMemory({ agentId: 'alice', kind: 'fact', content: 'x' })),
    ).toMatchObject({
      code: 'ENGRAM_STORE_READ_ONLY',
    });
    reader.close();
    expect(sha256(path)).toBe(before);
  });

  it('never waits for a writer: a read open and a write open of an up-to-date file pass a held write lock', async () => {
    const path = await populated('locked.db', 3);
    const lock = raw(path);
    lock.exec('BEGIN IMMEDIATE');
    lock.prepare("INSERT INTO meta(key, value) VALUES ('lock-holder', 'x')").run();
    try {
      const reader = createSqliteMemoryStore({ path, access: 'read', busyTimeoutMs: 200 });
      open.push(reader);
      expect(await reader.listMemories('alice', { limit: 10 })).toHaveLength(3);
      const writer = createSqliteMemoryStore({ path, busyTimeoutMs: 200 });
      open.push(writer);
      expect(await writer.listMemories('alice', { limit: 10 })).toHaveLength(3);
      // An access write (advisory) does not wait for the busy timeout — 10 minutes here — behind the writer.
      const patient = createSqliteMemoryStore({ path, busyTimeoutMs: 600_000 });
      open.push(patient);
      expect(await rejected(patient.recordAccess('alice', ['id-1']))).toMatchObject({
        code: 'ENGRAM_STORE_BUSY',
      });
      // Its writes queue on the busy timeout like any writer's.
      expect(
        await rejected(writer.insertMemory({ agentId: 'alice', kind: 'fact', content: 'later' })),
      ).toMatchObject({ code: 'ENGRAM_STORE_BUSY' });
    } finally {
      lock.exec('ROLLBACK');
    }
  });

  it('a missing or empty file is ENGRAM_STORE_NOT_ENGRAM on a read, and nothing is created', () => {
    const missing = join(dir, 'nothing-here.db');
    expect(caught(() => createSqliteMemoryStore({ path: missing, access: 'read' }))).toMatchObject({
      code: 'ENGRAM_STORE_NOT_ENGRAM',
    });
    expect(existsSync(missing)).toBe(false);
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    const err = caught(() => createSqliteMemoryStore({ path: empty, access: 'read' }));
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_NOT_ENGRAM' });
    expect((err as Error).message).toContain('never creates');
    expect(readFileSync(empty).length).toBe(0);
    expect(existsSync(`${empty}-wal`)).toBe(false);
    // A write creates it.
    const created = createSqliteMemoryStore({ path: empty });
    open.push(created);
    expect(created.info.schemaVersion).toBe(SCHEMA_VERSION);
  });

  it('an older schema is ENGRAM_STORE_SCHEMA_TOO_OLD on a read (never migrated), and the bytes stay', async () => {
    const path = await populated('old.db', 2);
    const db = raw(path);
    db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION - 1));
    db.close();
    const before = sha256(path);
    expect(caught(() => createSqliteMemoryStore({ path, access: 'read' }))).toMatchObject({
      code: 'ENGRAM_STORE_SCHEMA_TOO_OLD',
    });
    expect(sha256(path)).toBe(before);
  });
});

describe('identification', () => {
  it('stamps the Engram application id on creation, and on the first write open of an older file', async () => {
    const path = await populated('stamp.db', 1);
    const db = raw(path);
    expect(db.prepare('PRAGMA application_id').get()).toEqual({ application_id: ENGRAM_APPLICATION_ID });
    // A file from before the stamp is recognised by its meta table, read as it is, stamped by a write open.
    db.exec('PRAGMA application_id = 0');
    db.close();
    const reader = createSqliteMemoryStore({ path, access: 'read' });
    expect(await reader.listMemories('alice', { limit: 5 })).toHaveLength(1);
    reader.close();
    createSqliteMemoryStore({ path }).close();
    const check = raw(path);
    expect(check.prepare('PRAGMA application_id').get()).toEqual({ application_id: ENGRAM_APPLICATION_ID });
  });

  const foreign: [string, (path: string) => void, string][] = [
    [
      "another application's SQLite file",
      (path) => {
        const db = raw(path);
        db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
        db.exec("INSERT INTO customers (name) VALUES ('ada')");
        db.close();
      },
      'ENGRAM_STORE_NOT_ENGRAM',
    ],
    [
      "another application's file with its own meta table",
      (path) => {
        const db = raw(path);
        db.exec('CREATE TABLE meta (k TEXT, v TEXT)');
        db.close();
      },
      'ENGRAM_STORE_NOT_ENGRAM',
    ],
    [
      'a file stamped with another application id',
      (path) => {
        const db = raw(path);
        db.exec('PRAGMA application_id = 1234');
        db.exec('CREATE TABLE t (x)');
        db.close();
      },
      'ENGRAM_STORE_NOT_ENGRAM',
    ],
    [
      'a text file',
      (path) => writeFileSync(path, 'just some notes, not a database\n'.repeat(200)),
      'ENGRAM_STORE_CORRUPT',
    ],
  ];
  for (const [what, make, code] of foreign) {
    it(`${what} is ${code} on a read and on a write, byte-identical, no journal change`, () => {
      const path = join(dir, 'foreign.db');
      make(path);
      const before = sha256(path);
      for (const access of ['read', 'write'] as const) {
        const err = caught(() => createSqliteMemoryStore({ path, access }));
        expect(isEngramStoreError(err)).toBe(true);
        expect(err).toMatchObject({ code });
        expect((err as Error).message).not.toContain('unexpected');
        expect(sha256(path)).toBe(before);
        expect(existsSync(`${path}-wal`)).toBe(false);
      }
      if (code === 'ENGRAM_STORE_NOT_ENGRAM') {
        const db = raw(path);
        expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'delete' });
        expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'memories'").get()).toEqual({
          n: 0,
        });
      }
    });
  }

  it('a too-new file is refused on a read and on a write before its journal mode is touched', async () => {
    const path = await populated('future.db', 2);
    const db = raw(path);
    db.exec('PRAGMA journal_mode = DELETE');
    db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION + 1));
    db.close();
    const before = sha256(path);
    for (const access of ['read', 'write'] as const) {
      expect(caught(() => createSqliteMemoryStore({ path, access }))).toMatchObject({
        code: 'ENGRAM_STORE_SCHEMA_TOO_NEW',
      });
      expect(sha256(path)).toBe(before);
      expect(existsSync(`${path}-wal`)).toBe(false);
    }
  });

  it('a schema version of 0, a malformed one or a missing one is a clear ENGRAM_STORE_CORRUPT', async () => {
    const path = await populated('zero.db', 1);
    for (const value of ['0', 'x1', null]) {
      const db = raw(path);
      if (value === null) db.exec("DELETE FROM meta WHERE key = 'schema_version'");
      else db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(value);
      db.close();
      const before = sha256(path);
      for (const access of ['read', 'write'] as const) {
        const err = caught(() => createSqliteMemoryStore({ path, access }));
        expect(err).toMatchObject({ code: 'ENGRAM_STORE_CORRUPT' });
        expect((err as Error).message).toMatch(/schema version/);
        expect((err as Error).message).toContain('.recover');
        expect(sha256(path)).toBe(before);
      }
      const fix = raw(path);
      fix
        .prepare("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)")
        .run(String(SCHEMA_VERSION));
      fix.close();
    }
  });
});

/** Flips `flips` seeded random bytes in the middle third of the file's pages (never page 1). */
function damage(path: string, seed: number, flips: number): void {
  const bytes = readFileSync(path);
  const pageSize = bytes.readUInt16BE(16) === 1 ? 65536 : bytes.readUInt16BE(16);
  const pages = bytes.length / pageSize;
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const first = Math.max(1, Math.floor(pages / 3));
  const span = Math.max(1, Math.floor(pages / 3));
  for (let i = 0; i < flips; i += 1) {
    const page = first + Math.floor(next() * span);
    const at = page * pageSize + Math.floor(next() * pageSize);
    bytes[at] = (bytes[at] ?? 0) ^ (1 << Math.floor(next() * 8));
  }
  writeFileSync(path, bytes);
}

describe('integrity', () => {
  it('a write open checks the file: ok on a sound file, with when', async () => {
    const path = await populated('sound.db', 5);
    const store = createSqliteMemoryStore({ path, now: () => 1_800_000_000_000 });
    open.push(store);
    const health = await store.health();
    expect(health.ok && health.health.integrity).toEqual({ state: 'ok', checkedAt: 1_800_000_000_000 });
    const reader = createSqliteMemoryStore({ path, access: 'read' });
    open.push(reader);
    const unchecked = await reader.health();
    expect(unchecked.ok && unchecked.health.integrity).toEqual({ state: 'notChecked', checkedAt: null });
    expect(await reader.checkIntegrity()).toMatchObject({ state: 'ok' });
    // An in-memory store is never checked (the rest of its zero-filled health is the conformance suite's).
    const memory = createSqliteMemoryStore({ path: ':memory:' });
    open.push(memory);
    const fresh = await memory.health();
    expect(fresh.ok && fresh.health.integrity).toEqual({ state: 'notChecked', checkedAt: null });
  });

  it('a damaged file opens, reports failed, and refuses every write with a recovery hint', async () => {
    const path = await populated('damaged.db', 300);
    damage(path, 0x5eed, 200);
    const check = raw(path);
    expect(check.prepare('PRAGMA quick_check(1)').get()).not.toEqual({ quick_check: 'ok' });
    check.close();
    const before = sha256(path);
    const store = createSqliteMemoryStore({ path });
    open.push(store);
    // Counting may hit a damaged page; either way the failed check is reported.
    const health = await store.health();
    expect(health.ok ? health.health.integrity?.state : health.integrity?.state).toBe('failed');
    const err = await rejected(store.insertMemory({ agentId: 'alice', kind: 'fact', content: 'more' }));
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_CORRUPT' });
    expect((err as Error).message).toContain('.recover');
    expect((err as Error).message).toContain('backup');
    store.close();
    // Not converted, not migrated, not written.
    expect(sha256(path)).toBe(before);
  });
});

describe('misleading errors', () => {
  it('a read-only directory: a read open that cannot create the WAL files says so plainly (injected code)', async () => {
    const path = await populated('ro-dir.db', 1);
    const Base = loadDefaultDriver();
    // What SQLite reports when a WAL file's -wal/-shm companions are missing and the directory is read-only
    // (CI runs as root, which no permission stops, so the driver reports it).
    const Denied = class extends (Base as unknown as new (
      f: string,
      o?: SqliteDriverOptions,
    ) => SqliteDatabase) {
      constructor(file: string, options?: SqliteDriverOptions) {
        super(file, options);
        if (options?.readonly === true) {
          this.close();
          throw Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' });
        }
      }
    } as unknown as typeof Base;
    const before = sha256(path);
    const err = caught(() => createSqliteMemoryStore({ path, access: 'read', driver: Denied }));
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_IO' });
    expect((err as Error).message).toContain('WAL mode');
    expect((err as Error).message).toContain('read-only directory');
    expect((err as Error).message).not.toContain('unable to open');
    expect(sha256(path)).toBe(before);
    // The same driver opens it for writing: only the read-only connection was refused.
    createSqliteMemoryStore({ path, driver: Denied }).close();
  });

  it('a full disk (SQLITE_FULL, via max_page_count) says the disk is full', async () => {
    const Base = loadDefaultDriver();
    // A driver whose every connection may grow the file by a few pages only: the disk is "full" at once.
    const Small = class extends (Base as unknown as new (
      f: string,
      o?: SqliteDriverOptions,
    ) => SqliteDatabase) {
      constructor(file: string, options?: SqliteDriverOptions) {
        super(file, options);
        const pages = (this.prepare('PRAGMA page_count').get() as { page_count: number }).page_count;
        this.exec(`PRAGMA max_page_count = ${Math.max(pages, 60) + 4}`);
      }
    } as unknown as typeof Base;
    const store = createSqliteMemoryStore({ path: join(dir, 'full.db'), driver: Small, embedding: null });
    open.push(store);
    const err = await rejected(
      store.insertMemories(
        Array.from({ length: 50 }, (_, i) => ({
          agentId: 'alice',
          kind: 'fact' as const,
          content: `row ${i} ${'x'.repeat(20_000)}`,
        })),
      ),
    );
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_IO' });
    expect((err as Error).message).toContain('disk is full');
    expect((err as Error).message).not.toContain('I/O error');
  });
});
