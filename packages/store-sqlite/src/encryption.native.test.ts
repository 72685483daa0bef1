import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isEngramStoreError } from '@engram/store/port-kit';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CIPHER_DRIVER_PACKAGE,
  loadDefaultDriver,
  loadDriverModule,
  type SqliteDriver,
  sqliteVecLoadablePath,
} from './native.js';
import { openStoreContext } from './sqlite/open.js';
import {
  createSqliteMemoryStore,
  type SqliteMemoryStore,
  type SqliteMemoryStoreConfig,
} from './sqlite-store.js';

const require = createRequire(import.meta.url);
const CipherDriver = require(CIPHER_DRIVER_PACKAGE) as SqliteDriver;

let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-enc-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

const profile = { id: 'embedder-a', dimensions: 4 };
const KEY = 'correct horse battery staple';
const CANARY = 'CANARY7f3a9c-plaintext-must-not-leak';
const CJK_CANARY = '金丝雀机密数据库内容';

function openStore(config: SqliteMemoryStoreConfig): SqliteMemoryStore {
  if (config.encryption !== undefined) counts.keyOpens += 1;
  const s = createSqliteMemoryStore(config);
  open.push(s);
  return s;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to throw');
}

/** Every byte of the database file and its WAL/SHM companions. */
function fileBytes(path: string): Buffer {
  return Buffer.concat(
    ['', '-wal', '-shm', '-journal']
      .map((s) => path + s)
      .filter((p) => existsSync(p))
      .map((p) => readFileSync(p)),
  );
}

// Counts printed at the end, so the figures can be read from the CI log.
const counts = { byteScans: 0, bytesScanned: 0, keyOpens: 0 };

function leaks(bytes: Buffer): boolean {
  counts.byteScans += 1;
  counts.bytesScanned += bytes.length;
  return (
    bytes.includes(Buffer.from(CANARY, 'utf8')) ||
    bytes.includes(Buffer.from(CJK_CANARY, 'utf8')) ||
    bytes.includes(Buffer.from(CANARY, 'utf16le'))
  );
}

async function writeCanaries(store: SqliteMemoryStore): Promise<void> {
  for (let i = 0; i < 20; i += 1) {
    await store.insertMemory({
      agentId: 'agent',
      kind: 'fact',
      content: `${CANARY} row ${i} about deploy pipelines`,
      tags: [`topic:${CANARY}`],
      vector: new Float32Array([1, i / 20, 0, 0.5]),
    });
  }
  await store.insertMemory({ agentId: 'agent', kind: 'semantic', content: `数据库 ${CJK_CANARY} 连接池` });
  await store.appendEvents('agent', 'session-1', [
    { seq: 1, type: 'message', role: 'user', content: `event ${CANARY}`, metadata: { note: CANARY } },
  ]);
  await store.writeSkill({ agentId: 'agent', name: 'canary', description: CANARY, content: CANARY });
}

describe('encryption at rest (better-sqlite3-multiple-ciphers, SQLCipher 4 compatible)', () => {
  afterAll(() => {
    console.log(
      `[store:encryption] ${counts.byteScans} file scans for 3 canaries (${counts.bytesScanned} bytes), ${counts.keyOpens} keyed opens attempted`,
    );
  });

  it('leaves no plaintext of the content in the file, the WAL or the SHM; the unencrypted store does', async () => {
    const plainPath = join(dir, 'plain.db');
    const plain = openStore({ path: plainPath, embedding: profile });
    await writeCanaries(plain);
    // The contrast proves the grep works: a plaintext store has the canary in its bytes.
    expect(leaks(fileBytes(plainPath))).toBe(true);
    closeAll();
    expect(leaks(fileBytes(plainPath))).toBe(true);

    const path = join(dir, 'secret.db');
    const store = openStore({ path, embedding: profile, encryption: { key: KEY } });
    expect(store.encrypted).toBe(true);
    await writeCanaries(store);
    // While open, the recent pages are in the WAL: encrypted as well.
    expect(existsSync(`${path}-wal`)).toBe(true);
    expect(leaks(fileBytes(path))).toBe(false);
    closeAll();
    expect(leaks(fileBytes(path))).toBe(false);
    // SQLCipher keeps the salt where plaintext SQLite keeps its magic header.
    expect(readFileSync(path).subarray(0, 16).toString('latin1')).not.toBe('SQLite format 3\u0000');
    expect(readFileSync(plainPath).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\u0000');
  });

  it('searches both arms (words, trigram, LIKE, vector) and reads everything back after reopening', async () => {
    const path = join(dir, 'search.db');
    await writeCanaries(openStore({ path, embedding: profile, encryption: { key: KEY } }));
    closeAll();
    const store = openStore({ path, embedding: profile, encryption: { key: Buffer.from(KEY, 'utf8') } });
    const words = await store.searchLexical({ agentId: 'agent', terms: ['deploy', 'pipelines'], limit: 50 });
    expect(words.paths.words).toBe(true);
    expect(words.hits).toHaveLength(20);
    const trigram = await store.searchLexical({ agentId: 'agent', terms: ['连接池'], limit: 5 });
    expect(trigram.paths.trigram).toBe(true);
    expect(trigram.hits).toHaveLength(1);
    const like = await store.searchLexical({ agentId: 'agent', terms: ['金丝'], limit: 5 });
    expect(like.paths.like).toBe(true);
    expect(like.hits).toHaveLength(1);
    const nearest = await store.searchVector({
      agentId: 'agent',
      vector: new Float32Array([1, 0, 0, 0.5]),
      k: 3,
    });
    expect(nearest).toHaveLength(3);
    expect(nearest[0]?.similarity).toBeGreaterThan(0.99);
    expect(await store.readEvents('agent', 'session-1', 1, 1)).toHaveLength(1);
    expect((await store.getSkill('agent', 'canary'))?.content).toBe(CANARY);
    const health = await store.health('agent');
    expect(health.ok && health.health.byEmbeddingState.ready).toBe(20);
  });

  it('maps no encrypted page: the store sets no memory map, and a mapped keyed connection still decrypts', async () => {
    const path = join(dir, 'mapped.db');
    const ctx = openStoreContext({ path, embedding: profile, encryption: { key: KEY }, mmapSize: 1 << 24 });
    try {
      expect(ctx.db.prepare('PRAGMA mmap_size').get()).toEqual({ mmap_size: 0 });
    } finally {
      ctx.close();
    }
    const store = openStore({ path, embedding: profile, encryption: { key: KEY } });
    await writeCanaries(store);
    const expected = (await store.listMemories('agent', { limit: 100 })).map((m) => m.content).sort();
    closeAll();
    // SQLite3 Multiple Ciphers accepts the pragma (the file is even mapped), yet serves every read through its
    // codec: a mapped connection reads the plaintext, never the ciphertext of the map.
    const raw = new CipherDriver(path);
    try {
      raw.exec("PRAGMA cipher = 'sqlcipher'");
      raw.exec('PRAGMA legacy = 4');
      raw.key?.(Buffer.from(KEY, 'utf8'));
      expect(raw.prepare('PRAGMA mmap_size = 16777216').get()).toEqual({ mmap_size: 16_777_216 });
      const rows = raw.prepare('SELECT content FROM memories ORDER BY content').all() as {
        content: string;
      }[];
      expect(rows.map((r) => r.content).sort()).toEqual(expected);
      expect(raw.prepare('PRAGMA quick_check').get()).toEqual({ quick_check: 'ok' });
    } finally {
      raw.close();
    }
  });

  it('is readable by the documented SQLCipher pragmas (cipher=sqlcipher, legacy=4, key)', async () => {
    const path = join(dir, 'compat.db');
    await writeCanaries(openStore({ path, embedding: profile, encryption: { key: KEY } }));
    closeAll();
    const raw = new CipherDriver(path);
    try {
      raw.exec("PRAGMA cipher = 'sqlcipher'");
      raw.exec('PRAGMA legacy = 4');
      raw.exec(`PRAGMA key = '${KEY}'`);
      raw.loadExtension(sqliteVecLoadablePath());
      expect(raw.prepare('SELECT count(*) AS n FROM memories').get()).toEqual({ n: 21 });
      expect(raw.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    } finally {
      raw.close();
    }
  });

  it('a wrong key, or a key on a plaintext file, is ENGRAM_STORE_ENCRYPTION_KEY without the key in it', async () => {
    const path = join(dir, 'locked.db');
    await writeCanaries(openStore({ path, embedding: profile, encryption: { key: KEY } }));
    closeAll();
    const wrongKey = 'not-the-key-0123456789';
    const err = caught(() => createSqliteMemoryStore({ path, encryption: { key: wrongKey } }));
    expect(isEngramStoreError(err)).toBe(true);
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_ENCRYPTION_KEY', retryable: false });
    const text = `${String(err)} ${JSON.stringify(err)} ${String((err as Error).cause)} ${(err as Error).stack}`;
    expect(text).not.toContain(wrongKey);
    expect(text).not.toContain(KEY);

    const plainPath = join(dir, 'plain.db');
    openStore({ path: plainPath, embedding: profile });
    closeAll();
    expect(
      caught(() => createSqliteMemoryStore({ path: plainPath, encryption: { key: KEY } })),
    ).toMatchObject({
      code: 'ENGRAM_STORE_ENCRYPTION_KEY',
    });
    // The plaintext file is untouched by the failed keyed open.
    expect(readFileSync(plainPath).subarray(0, 16).toString('latin1')).toBe('SQLite format 3\u0000');
    const reopened = openStore({ path: plainPath });
    expect(reopened.encrypted).toBe(false);

    // Without a key the encrypted file is not readable; the message says it may be encrypted.
    const noKey = caught(() => createSqliteMemoryStore({ path }));
    expect(noKey).toMatchObject({ code: 'ENGRAM_STORE_CORRUPT' });
    expect((noKey as Error).message).toContain('encrypted');
    // The right key still opens it.
    expect((await openStore({ path, encryption: { key: KEY } }).listAgents()).includes('agent')).toBe(true);
  });

  it('rekey rotates the key: the new key opens the file, the old one no longer does', async () => {
    const path = join(dir, 'rotate.db');
    const store = openStore({ path, embedding: profile, encryption: { key: KEY } });
    await writeCanaries(store);
    const newKey = new Uint8Array([0, 1, 2, 250, 251, 252, 9, 10]);
    await store.rekey(newKey);
    // Still usable, still WAL, still encrypted after the rotation.
    await store.insertMemory({ agentId: 'agent', kind: 'fact', content: `${CANARY} after rekey` });
    expect(leaks(fileBytes(path))).toBe(false);
    closeAll();
    expect(caught(() => createSqliteMemoryStore({ path, encryption: { key: KEY } }))).toMatchObject({
      code: 'ENGRAM_STORE_ENCRYPTION_KEY',
    });
    const reopened = openStore({ path, embedding: profile, encryption: { key: Buffer.from(newKey) } });
    expect((await reopened.listMemories('agent', { limit: 100 })).length).toBe(22);
    expect(
      (await reopened.searchLexical({ agentId: 'agent', terms: ['rekey'], limit: 5 })).hits,
    ).toHaveLength(1);
    expect(
      await reopened.searchVector({ agentId: 'agent', vector: new Float32Array([1, 0, 0, 0.5]), k: 2 }),
    ).toHaveLength(2);
    const raw = new CipherDriver(path);
    try {
      raw.exec("PRAGMA cipher = 'sqlcipher'");
      raw.exec('PRAGMA legacy = 4');
      raw.key?.(Buffer.from(newKey));
      expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    } finally {
      raw.close();
    }
    expect(leaks(fileBytes(path))).toBe(false);
  });

  it('rekey while another connection has the file open is ENGRAM_STORE_BUSY and keeps the old key', async () => {
    const path = join(dir, 'shared.db');
    const store = openStore({ path, embedding: profile, encryption: { key: KEY } });
    await writeCanaries(store);
    const other = openStore({ path, encryption: { key: KEY }, busyTimeoutMs: 0 });
    expect((await other.listAgents()).length).toBe(1);
    const err = await store.rekey('another key').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_BUSY', retryable: true });
    // Both connections keep working with the old key.
    await store.insertMemory({ agentId: 'agent', kind: 'fact', content: 'written after the refused rekey' });
    expect((await other.searchLexical({ agentId: 'agent', terms: ['refused'], limit: 5 })).hits).toHaveLength(
      1,
    );
    closeAll();
    expect((await openStore({ path, encryption: { key: KEY } }).listAgents()).length).toBe(1);
  });

  it('rejects rekey on an unencrypted store, empty keys, :memory: and a driver without key support', async () => {
    const plain = openStore({ path: join(dir, 'plain.db') });
    expect(await plain.rekey('k').catch((e: unknown) => e)).toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    const enc = openStore({ path: join(dir, 'enc.db'), encryption: { key: KEY } });
    for (const bad of ['', new Uint8Array(0), 42 as unknown as string]) {
      expect(await enc.rekey(bad).catch((e: unknown) => e)).toMatchObject({
        code: 'ENGRAM_STORE_INVALID_INPUT',
      });
    }
    for (const key of ['', new Uint8Array(0), 7 as unknown as string]) {
      expect(
        caught(() => createSqliteMemoryStore({ path: join(dir, 'x.db'), encryption: { key } })),
      ).toMatchObject({
        code: 'ENGRAM_STORE_INVALID_INPUT',
      });
    }
    expect(
      caught(() => createSqliteMemoryStore({ path: ':memory:', encryption: { key: KEY } })),
    ).toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    const err = caught(() =>
      createSqliteMemoryStore({
        path: join(dir, 'y.db'),
        encryption: { key: KEY },
        driver: loadDefaultDriver(),
      }),
    );
    expect(err).toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
    expect((err as Error).message).toContain(CIPHER_DRIVER_PACKAGE);
  });

  it('a missing encryption driver is ENGRAM_STORE_NATIVE_UNAVAILABLE naming the package', () => {
    const missing = caught(() =>
      loadDriverModule(CIPHER_DRIVER_PACKAGE, () => {
        throw Object.assign(new Error("Cannot find module 'better-sqlite3-multiple-ciphers'"), {
          code: 'MODULE_NOT_FOUND',
        });
      }),
    );
    expect(missing).toMatchObject({ code: 'ENGRAM_STORE_NATIVE_UNAVAILABLE' });
    expect((missing as Error).message).toContain(CIPHER_DRIVER_PACKAGE);
    // End to end: a process where the package cannot be resolved, opening an encrypted store through the
    // built package; an unencrypted store opens fine in the same process (the driver is optional).
    const block = join(dir, 'block.cjs');
    writeFileSync(
      block,
      `const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (request === ${JSON.stringify(CIPHER_DRIVER_PACKAGE)}) {
    throw Object.assign(new Error('Cannot find module'), { code: 'MODULE_NOT_FOUND' });
  }
  return resolve.call(this, request, ...rest);
};`,
    );
    const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = `
import { createSqliteMemoryStore } from ${JSON.stringify(dist)};
const out = {};
try { createSqliteMemoryStore({ path: ${JSON.stringify(join(dir, 'e.db'))}, encryption: { key: 'k' } }); out.encrypted = 'opened'; }
catch (e) { out.encrypted = { code: e.code, message: e.message }; }
const plain = createSqliteMemoryStore({ path: ${JSON.stringify(join(dir, 'p.db'))} });
out.plain = plain.encrypted === false ? 'opened' : 'wrong';
plain.close();
process.stdout.write(JSON.stringify(out));`;
    const stdout = execFileSync(process.execPath, ['--require', block, '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    const out = JSON.parse(stdout) as {
      encrypted: { code: string; message: string } | string;
      plain: string;
    };
    expect(out.plain).toBe('opened');
    expect(out.encrypted).toMatchObject({ code: 'ENGRAM_STORE_NATIVE_UNAVAILABLE' });
    expect((out.encrypted as { message: string }).message).toContain(CIPHER_DRIVER_PACKAGE);
  });
});
