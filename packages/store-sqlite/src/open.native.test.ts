/**
 * Opening, migrating, locking, re-indexing and the observer, against real files. Longer than 400 lines: every
 * suite here shares the temporary-directory fixture and the raw-handle helpers that check the file itself.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StatementKind } from '@engram/contracts';
import { isEngramStoreError } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { POSTINGS_MERGE } from './lexical-postings.js';
import {
  checkNativeCapabilities,
  loadDefaultDriver,
  openDatabase,
  type SqliteDatabase,
  type SqliteDriver,
} from './native.js';
import { SCHEMA_VERSION, TOKENIZER_DESCRIPTION } from './schema.js';
import { DEFAULT_MMAP_SIZE } from './sqlite/config.js';
import { openStoreContext } from './sqlite/open.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

let dir: string;
const open: SqliteMemoryStore[] = [];
const DEFAULT_DIRECT_BELOW = POSTINGS_MERGE.directBelow;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-open-'));
});

afterEach(() => {
  POSTINGS_MERGE.directBelow = DEFAULT_DIRECT_BELOW;
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(config: Parameters<typeof createSqliteMemoryStore>[0]): SqliteMemoryStore {
  const s = createSqliteMemoryStore(config);
  open.push(s);
  return s;
}

function openError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

const v1 = { id: 'embedder-a', dimensions: 4 };

describe('opening a file database', () => {
  it('creates parent directories, uses WAL and records the meta table', async () => {
    const path = join(dir, 'deep', 'er', 'engram.db');
    const store = openStore({ path, embedding: v1 });
    expect(existsSync(path)).toBe(true);
    expect(store.info).toEqual({
      schemaVersion: SCHEMA_VERSION,
      fingerprint: 'embedder-a:4',
      tokenizer: TOKENIZER_DESCRIPTION,
    });
    expect(store.embeddingProfile).toEqual(v1);
    const raw = openDatabase(path);
    try {
      expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
      const meta = Object.fromEntries(
        (raw.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[]).map((r) => [
          r.key,
          r.value,
        ]),
      );
      expect(meta).toMatchObject({
        schema_version: String(SCHEMA_VERSION),
        embedding_fingerprint: 'embedder-a:4',
        tokenizer: TOKENIZER_DESCRIPTION,
      });
    } finally {
      raw.close();
    }
  });

  it('reopening runs no migration twice and keeps the data', async () => {
    const path = join(dir, 'engram.db');
    const first = openStore({ path, embedding: v1 });
    await first.insertMemory({
      id: 'm1',
      agentId: 'a',
      kind: 'fact',
      content: 'persisted row',
      vector: new Float32Array([1, 0, 0, 0]),
    });
    first.close();
    for (let i = 0; i < 3; i += 1) {
      const again = createSqliteMemoryStore({ path, embedding: v1 });
      expect(again.info.schemaVersion).toBe(SCHEMA_VERSION);
      expect((await again.getMemory('a', 'm1'))?.content).toBe('persisted row');
      expect((await again.searchLexical({ agentId: 'a', terms: ['persisted'], limit: 5 })).hits).toHaveLength(
        1,
      );
      expect(
        await again.searchVector({ agentId: 'a', vector: new Float32Array([1, 0, 0, 0]), k: 5 }),
      ).toHaveLength(1);
      again.close();
    }
    const raw = openDatabase(path);
    try {
      expect(raw.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({
        value: String(SCHEMA_VERSION),
      });
      expect(raw.prepare('SELECT count(*) AS n FROM memories').get()).toEqual({ n: 1 });
    } finally {
      raw.close();
    }
  });

  it('migrates a version-1 database forward: the LIKE text of existing CJK rows is backfilled', async () => {
    const path = join(dir, 'v1.db');
    const first = openStore({ path, embedding: null });
    await first.insertMemories([
      { id: 'kangxi', agentId: 'a', kind: 'fact', content: '⼈⼯智能的会议纪要' },
      { id: 'plain', agentId: 'a', kind: 'fact', content: '人工审核流程' },
      { id: 'latin', agentId: 'a', kind: 'fact', content: 'ＡＢＣ full-width latin' },
    ]);
    first.close();
    open.length = 0;
    // Turn the file back into what version 1 of the schema wrote: no like_text column, schema_version 1.
    const raw = openDatabase(path, { loadVectorExtension: false });
    try {
      raw.exec('ALTER TABLE memories DROP COLUMN like_text');
      raw.exec('DROP TABLE memory_chunks');
      raw.exec('ALTER TABLE memories DROP COLUMN chunk_count');
      raw.exec('DROP TABLE lexical_postings; DROP TABLE lexical_docs; DROP TABLE lexical_stats;');
      // What version 14 added (its rule index reads the user column).
      raw.exec(`DROP INDEX memories_active_hash; DROP INDEX events_agent_user;
        ALTER TABLE events DROP COLUMN user_id;`);
      // What version 6 added.
      raw.exec(`DROP INDEX memories_agent_user; DROP INDEX memories_agent_session;
        DROP INDEX memories_agent_superseded_by; DROP TABLE memory_links; DROP TABLE memory_history;`);
      for (const column of ['user_id', 'metadata', 'valid_from', 'valid_to', 'forgotten_at']) {
        raw.exec(`ALTER TABLE memories DROP COLUMN ${column}`);
      }
      raw.prepare("UPDATE meta SET value = '1' WHERE key = 'schema_version'").run();
    } finally {
      raw.close();
    }
    expect(SCHEMA_VERSION).toBe(20);
    const store = openStore({ path, embedding: null });
    expect(store.info.schemaVersion).toBe(SCHEMA_VERSION);
    const found = await store.searchLexical({ agentId: 'a', terms: ['人工'], limit: 10 });
    expect(found.paths.like).toBe(true);
    expect(found.hits.map((h) => h.id).sort()).toEqual(['kangxi', 'plain']);
    store.close();
    open.length = 0;
    const check = openDatabase(path, { loadVectorExtension: false });
    try {
      expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({
        value: String(SCHEMA_VERSION),
      });
      // Only a CJK row whose NFKC form differs carries a LIKE text.
      expect(check.prepare('SELECT id, like_text FROM memories ORDER BY id').all()).toEqual([
        { id: 'kangxi', like_text: '人工智能的会议纪要' },
        { id: 'latin', like_text: null },
        { id: 'plain', like_text: null },
      ]);
    } finally {
      check.close();
    }
  });

  it('a newer schema version is ENGRAM_STORE_SCHEMA_TOO_NEW and the file is left untouched', () => {
    const path = join(dir, 'future.db');
    openStore({ path, embedding: null }).close();
    open.length = 0;
    const raw = openDatabase(path);
    raw.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION + 1));
    raw.close();
    const err = openError(() => createSqliteMemoryStore({ path, embedding: null }));
    expect(isEngramStoreError(err)).toBe(true);
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_SCHEMA_TOO_NEW' });
    const check = openDatabase(path);
    try {
      expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get()).toEqual({
        value: String(SCHEMA_VERSION + 1),
      });
    } finally {
      check.close();
    }
  });

  it('another embedder fingerprint is ENGRAM_STORE_FINGERPRINT_MISMATCH, in every direction', () => {
    const path = join(dir, 'fp.db');
    openStore({ path, embedding: v1 }).close();
    open.length = 0;
    for (const embedding of [
      { id: 'embedder-a', dimensions: 8 },
      { id: 'embedder-b', dimensions: 4 },
      null,
    ]) {
      expect(openError(() => createSqliteMemoryStore({ path, embedding }))).toMatchObject({
        code: 'ENGRAM_STORE_FINGERPRINT_MISMATCH',
      });
    }
    const none = join(dir, 'none.db');
    openStore({ path: none, embedding: null }).close();
    open.length = 0;
    expect(openError(() => createSqliteMemoryStore({ path: none, embedding: v1 }))).toMatchObject({
      code: 'ENGRAM_STORE_FINGERPRINT_MISMATCH',
    });
  });

  it('an omitted profile adopts the recorded one (a fresh database records none)', () => {
    const path = join(dir, 'adopt.db');
    openStore({ path, embedding: v1 }).close();
    open.length = 0;
    const adopted = openStore({ path });
    expect(adopted.embeddingProfile).toEqual(v1);
    const fresh = openStore({ path: join(dir, 'fresh.db') });
    expect(fresh.embeddingProfile).toBeNull();
    expect(fresh.info.fingerprint).toBe('none');
  });

  it('a file that is not a database is ENGRAM_STORE_CORRUPT', () => {
    const path = join(dir, 'garbage.db');
    writeFileSync(path, 'this is not an sqlite database, just some text padding '.repeat(100));
    const err = openError(() => createSqliteMemoryStore({ path }));
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_CORRUPT' });
    expect((err as Error).message).not.toContain('not an sqlite database');
  });

  it('reads a file through a 2 GiB memory map by default; mmapSize sets it, 0 turns it off', async () => {
    const mapped = (config: Parameters<typeof openStoreContext>[0]): number | undefined => {
      const ctx = openStoreContext(config);
      try {
        return (ctx.db.prepare('PRAGMA mmap_size').get() as { mmap_size: number } | undefined)?.mmap_size;
      } finally {
        ctx.close();
      }
    };
    const path = join(dir, 'mapped.db');
    expect(DEFAULT_MMAP_SIZE).toBe(2_147_418_112);
    expect(mapped({ path, embedding: v1 })).toBe(DEFAULT_MMAP_SIZE);
    expect(mapped({ path, access: 'read' })).toBe(DEFAULT_MMAP_SIZE);
    expect(mapped({ path, mmapSize: 1 << 20 })).toBe(1 << 20);
    expect(mapped({ path, mmapSize: 0 })).toBe(0);
    // An in-memory database has no file to map (SQLite answers the pragma with no row).
    expect(mapped({ path: ':memory:' })).toBeUndefined();
    // Through the map or without it, the same rows are found.
    for (const mmapSize of [0, DEFAULT_MMAP_SIZE]) {
      const store = openStore({ path, mmapSize });
      await store.insertMemory({ agentId: 'a', kind: 'fact', content: `mapped row ${mmapSize}` });
      const found = await store.searchLexical({ agentId: 'a', terms: ['mapped'], mode: 'any', limit: 10 });
      expect(found.hits.length).toBe(mmapSize === 0 ? 1 : 2);
      store.close();
    }
  });

  it('a bad configuration is ENGRAM_STORE_INVALID_INPUT', () => {
    for (const mmapSize of [-1, 1.5, Number.NaN]) {
      expect(openError(() => createSqliteMemoryStore({ path: ':memory:', mmapSize }))).toMatchObject({
        code: 'ENGRAM_STORE_INVALID_INPUT',
      });
    }
    expect(openError(() => createSqliteMemoryStore({ path: '' }))).toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    expect(
      openError(() => createSqliteMemoryStore({ path: ':memory:', embedding: { id: 'x', dimensions: 0 } })),
    ).toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
  });
});

describe('locking', () => {
  it('a write blocked by another connection past the busy timeout is ENGRAM_STORE_BUSY (retryable)', async () => {
    const path = join(dir, 'busy.db');
    const store = openStore({ path, embedding: null, busyTimeoutMs: 0 });
    const other = openDatabase(path, { busyTimeoutMs: 0 });
    try {
      other.exec('BEGIN IMMEDIATE');
      const err = await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'blocked' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ name: 'EngramStoreError', code: 'ENGRAM_STORE_BUSY', retryable: true });
      expect((err as Error).message).not.toMatch(/SQLITE|locked/);
      other.exec('ROLLBACK');
      await expect(
        store.insertMemory({ agentId: 'a', kind: 'fact', content: 'now it works' }),
      ).resolves.toMatchObject({
        revision: 1,
      });
      expect(await store.listMemories('a')).toHaveLength(1);
    } finally {
      other.close();
    }
  });
});

describe('resetEmbeddings', () => {
  it('drops every vector, recreates the index with the new dimensions and resets rows to pending', async () => {
    const path = join(dir, 'reset.db');
    const store = openStore({ path, embedding: v1 });
    await store.insertMemory({
      id: 'm1',
      agentId: 'a',
      kind: 'fact',
      content: 'one',
      vector: new Float32Array([1, 0, 0, 0]),
    });
    await store.insertMemory({ id: 'm2', agentId: 'a', kind: 'fact', content: 'two' });
    const v2 = { id: 'embedder-b', dimensions: 2 };
    await store.resetEmbeddings(v2);
    expect(store.info.fingerprint).toBe('embedder-b:2');
    expect(store.embeddingProfile).toEqual(v2);
    expect((await store.getMemory('a', 'm1'))?.embeddingState).toBe('pending');
    expect(await store.searchVector({ agentId: 'a', vector: new Float32Array([1, 0]), k: 5 })).toEqual([]);
    await expect(
      store.searchVector({ agentId: 'a', vector: new Float32Array([1, 0, 0, 0]), k: 5 }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_DIMENSIONS' });
    const pending = await store.listPendingEmbeddings({ limit: 10 });
    const result = await store.commitEmbeddings(
      pending.map((p) => ({
        id: p.id,
        revision: p.revision,
        state: 'ready' as const,
        vector: new Float32Array([0, 1]),
      })),
    );
    expect(result.ready).toBe(2);
    expect(await store.searchVector({ agentId: 'a', vector: new Float32Array([0, 1]), k: 5 })).toHaveLength(
      2,
    );
    store.close();
    expect(openError(() => createSqliteMemoryStore({ path, embedding: v1 }))).toMatchObject({
      code: 'ENGRAM_STORE_FINGERPRINT_MISMATCH',
    });
    const reopened = openStore({ path, embedding: v2 });
    expect(
      await reopened.searchVector({ agentId: 'a', vector: new Float32Array([0, 1]), k: 5 }),
    ).toHaveLength(2);
    await reopened.resetEmbeddings(null);
    expect(reopened.info.fingerprint).toBe('none');
    await expect(
      reopened.searchVector({ agentId: 'a', vector: new Float32Array([0, 1]), k: 5 }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_UNAVAILABLE' });
    await expect(
      reopened.insertMemory({ agentId: 'a', kind: 'fact', content: 'x', vector: new Float32Array([0, 1]) }),
    ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_UNAVAILABLE' });
  });
});

describe('native capabilities', () => {
  it('reports every capability present on this machine', () => {
    const report = checkNativeCapabilities();
    expect(report).toMatchObject({ ok: true, missing: [] });
    expect(report.details.some((d) => d.startsWith('sqlite-vec: ok'))).toBe(true);
  });

  it('names everything missing when the driver cannot be loaded, without throwing', () => {
    const broken = function BrokenDriver() {
      throw new Error('Could not locate the bindings file');
    } as unknown as SqliteDriver;
    const report = checkNativeCapabilities({ driver: broken });
    expect(report.ok).toBe(false);
    expect(report.missing).toEqual(['better-sqlite3', 'fts5', 'json1', 'trigram', 'sqlite-vec']);
    expect(report.details.join('\n')).toContain('bindings file');
  });

  it('names exactly the capability that is missing (the gate prints these lines)', () => {
    /** The real driver with one capability taken away: matching statements (or extension loads) fail. */
    const without = (pattern: RegExp, message: string): SqliteDriver => {
      const Base = loadDefaultDriver() as unknown as new (filename: string) => SqliteDatabase;
      const fail = (what: string): void => {
        if (pattern.test(what)) throw new Error(message);
      };
      return class extends Base {
        override exec(sql: string): unknown {
          fail(sql);
          return super.exec(sql);
        }
        override prepare(sql: string): ReturnType<SqliteDatabase['prepare']> {
          fail(sql);
          return super.prepare(sql);
        }
        override loadExtension(path: string): unknown {
          fail(`load_extension(${path})`);
          return super.loadExtension(path);
        }
      } as unknown as SqliteDriver;
    };
    const cases: [RegExp, string, string[]][] = [
      [/^load_extension\(/, 'not authorized', ['sqlite-vec']],
      [/tokenize='trigram'/, 'parse error in tokenize directive', ['trigram']],
      [/json_each/, 'no such table: json_each', ['json1']],
      [/USING fts5/, 'no such module: fts5', ['fts5', 'trigram']],
    ];
    for (const [pattern, message, missing] of cases) {
      const report = checkNativeCapabilities({ driver: without(pattern, message) });
      expect(report).toMatchObject({ ok: false, missing });
      for (const name of missing) {
        expect(report.details.some((d) => d.startsWith(`${name}: MISSING`) && d.includes(message))).toBe(
          true,
        );
      }
      expect(report.details.some((d) => d.startsWith('better-sqlite3: ok'))).toBe(true);
    }
  });

  it('the driver is injectable (better-sqlite3-multiple-ciphers opens the same schema)', async () => {
    const { createRequire } = await import('node:module');
    const ciphers = createRequire(import.meta.url)('better-sqlite3-multiple-ciphers') as SqliteDriver;
    const store = openStore({ path: join(dir, 'ciphers.db'), embedding: v1, driver: ciphers });
    await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'through another driver',
      vector: new Float32Array([1, 0, 0, 0]),
    });
    expect((await store.searchLexical({ agentId: 'a', terms: ['driver'], limit: 5 })).hits).toHaveLength(1);
    expect(loadDefaultDriver()).not.toBe(ciphers);
  });
});

describe('observer', () => {
  it('counts each executed statement by family and survives a throwing observer', async () => {
    const counts: Partial<Record<StatementKind, number>> = {};
    // The postings go to the fresh table, as a large agent's do (a small agent's, straight into the main table,
    // skip the fresh table's count: `lexical-direct.native.test.ts`).
    POSTINGS_MERGE.directBelow = 0;
    const store = openStore({
      path: ':memory:',
      embedding: v1,
      observer: {
        onStatement(kind) {
          counts[kind] = (counts[kind] ?? 0) + 1;
          if (kind === 'read') throw new Error('observer bug');
        },
      },
    });
    for (const key of Object.keys(counts)) delete counts[key as StatementKind];
    await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: '中文内容 english',
      tags: ['t:1'],
      vector: new Float32Array([1, 0, 0, 0]),
    });
    // BEGIN + row + tags + 2 FTS rows + 4 BM25-index rows (postings, length, agent and user statistics) + the
    // fresh postings' count (read once, by the connection's first write) + vector + COMMIT.
    expect(counts).toEqual({ meta: 2, write: 2, fts: 7, vector: 1 });
    for (const key of Object.keys(counts)) delete counts[key as StatementKind];
    const found = await store.searchLexical({
      agentId: 'a',
      terms: ['english', '中文内容', '中文'],
      limit: 5,
    });
    expect(found.hits).toHaveLength(1);
    // Any mode is one BM25 search: the agent's statistics with the document frequencies, then the scoring query.
    expect(counts).toEqual({ fts: 2 });
    for (const key of Object.keys(counts)) delete counts[key as StatementKind];
    expect(await store.getMemory('a', found.hits[0]?.id ?? '')).not.toBeNull();
    expect(counts).toEqual({ read: 1 });
  });

  it('reports the process-wide vector store gauge on open and close, and the first warm-up', async () => {
    const gauges: { openStores: number; leases: number }[] = [];
    const warmups: string[] = [];
    const observer = {
      onVectorStores: (g: { openStores: number; leases: number }) => gauges.push(g),
      onVectorWarmup: (o: string) => warmups.push(o),
    };
    const path = join(dir, 'gauge.db');
    const a = createSqliteMemoryStore({ path, embedding: v1, observer });
    const b = createSqliteMemoryStore({ path, embedding: v1, observer });
    const before = gauges.at(-1);
    expect(before?.leases).toBeGreaterThanOrEqual(2);
    await a.searchVector({ agentId: 'x', vector: new Float32Array([1, 0, 0, 0]), k: 1 });
    await a.insertMemory({
      agentId: 'x',
      kind: 'fact',
      content: 'v',
      vector: new Float32Array([1, 0, 0, 0]),
    });
    await a.searchVector({ agentId: 'x', vector: new Float32Array([1, 0, 0, 0]), k: 1 });
    await b.searchVector({ agentId: 'x', vector: new Float32Array([1, 0, 0, 0]), k: 1 });
    expect(warmups).toEqual(['cold', 'warm']);
    b.close();
    expect(gauges.at(-1)).toEqual({ openStores: before?.openStores, leases: (before?.leases ?? 0) - 1 });
    a.close();
    expect(gauges.at(-1)).toEqual({
      openStores: (before?.openStores ?? 0) - 1,
      leases: (before?.leases ?? 0) - 2,
    });
    const none = createSqliteMemoryStore({ path: ':memory:', embedding: null, observer });
    const n = gauges.length;
    none.close();
    expect(gauges.length).toBe(n);
  });
});
