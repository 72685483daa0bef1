/**
 * How the built `engram` CLI opens files: read commands (search, get, health) never create, convert or migrate
 * a file; a file that is not an Engram store is refused with a typed error and left byte-identical; `--create`
 * is the explicit way to start an empty store; a damaged file refuses writes and fails `health`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createSqliteMemoryStore, SCHEMA_VERSION } from '@engram/store-sqlite';
import { openDatabase } from '@engram/store-sqlite/raw';
import { type ChildRun, interruptVectorIndexBuild, runNode } from '@engram/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

let dir: string;

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error('the engram CLI is not built: run pnpm build first');
  dir = await mkdtemp(join(tmpdir(), 'engram-cli-open-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function cli(args: readonly string[]): Promise<ChildRun> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_')) env[key] = value;
  }
  return runNode(CLI, args, { cwd: dir, env: { ...env, NO_COLOR: '1', ENGRAM_EMBEDDER: 'deterministic' } });
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** A file made by `engram remember` and closed (checkpointed), then changed on a raw connection. */
async function engramFile(
  name: string,
  change?: (db: ReturnType<typeof openDatabase>) => void,
): Promise<string> {
  const path = join(dir, name);
  expect((await cli(['remember', 'The release train leaves on Fridays.', '--db', path])).code).toBe(0);
  if (change !== undefined) {
    const db = openDatabase(path, { loadVectorExtension: false });
    try {
      change(db);
    } finally {
      db.close();
    }
  }
  return path;
}

describe('files that are not Engram stores', () => {
  const cases: [string, () => Promise<string>, RegExp][] = [
    [
      "another application's SQLite file",
      async () => {
        const path = join(dir, 'crm.sqlite');
        const db = openDatabase(path, { loadVectorExtension: false });
        db.exec('CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)');
        db.exec("INSERT INTO customers (name) VALUES ('ada')");
        db.close();
        return path;
      },
      /not an Engram store.*\(ENGRAM_STORE_NOT_ENGRAM\)\n$/,
    ],
    [
      'a file of a newer Engram',
      () =>
        engramFile('future.db', (db) => {
          db.exec('PRAGMA journal_mode = DELETE');
          db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(
            String(SCHEMA_VERSION + 1),
          );
        }),
      /newer than this store supports.*\(ENGRAM_STORE_SCHEMA_TOO_NEW\)\n$/,
    ],
    [
      'an empty file',
      async () => {
        const path = join(dir, 'empty.db');
        writeFileSync(path, '');
        return path;
      },
      /no Engram store at .*: the file is empty.*--create.*\(ENGRAM_CLI_NOT_FOUND\)\n$/,
    ],
    [
      'a text file',
      async () => {
        const path = join(dir, 'notes.txt');
        writeFileSync(path, 'shopping: milk, eggs\n'.repeat(300));
        return path;
      },
      /corrupt, not a database, or encrypted.*\(ENGRAM_STORE_CORRUPT\)\n$/,
    ],
  ];
  for (const [what, make, message] of cases) {
    it(`${what}: health, search, get, remember and mcp refuse it with a typed error, byte-identical`, async () => {
      const path = await make();
      const before = sha256(path);
      const runs = [
        ['health', '--db', path],
        ['search', 'release', '--db', path],
        ['get', 'some-id', '--db', path],
        // remember and mcp (which may write) create a store in an empty file; any other file they refuse too.
        ...(what === 'an empty file'
          ? []
          : [
              ['remember', 'Something new.', '--db', path],
              ['mcp', '--db', path],
            ]),
      ];
      for (const args of runs) {
        const run = await cli(args);
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(new RegExp(`^engram ${args[0]}: `));
        expect(run.stderr).toMatch(message);
        expect(run.stderr).not.toContain('unexpected error');
        expect(sha256(path)).toBe(before);
        expect(existsSync(`${path}-wal`)).toBe(false);
      }
    });
  }

  it('--create makes an empty store where a read command found none; a missing file stays missing without it', async () => {
    const path = join(dir, 'new', 'made.db');
    expect((await cli(['health', '--db', path])).stderr).toMatch(/no database at .*--create/);
    expect(existsSync(path)).toBe(false);
    const made = await cli(['health', '--db', path, '--create', '--json']);
    expect(made.code).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({
      store: { totals: { memories: 0 }, integrity: { state: 'ok' } },
    });
    expect((await cli(['search', 'anything', '--db', path])).code).toBe(0);
  });
});

describe('read commands', () => {
  it('leave a file byte-identical and create no -wal/-shm files when it is not in WAL mode', async () => {
    const path = await engramFile('rollback.db', (db) => db.exec('PRAGMA journal_mode = DELETE'));
    const before = sha256(path);
    const found = await cli(['search', 'release train', '--db', path, '--json']);
    expect(found.code).toBe(0);
    expect((JSON.parse(found.stdout) as { results: unknown[] }).results).toHaveLength(1);
    const health = await cli(['health', '--db', path]);
    expect(health.code).toBe(0);
    expect(health.stdout).toMatch(/integrity ok \(checked \d{4}-/);
    expect(sha256(path)).toBe(before);
    expect(existsSync(`${path}-wal`)).toBe(false);
    expect(existsSync(`${path}-shm`)).toBe(false);
  });

  it('an older file is not migrated by a read: it says to open it for writing once', async () => {
    const path = await engramFile('older.db', (db) => {
      db.exec('PRAGMA journal_mode = DELETE');
      db.prepare("UPDATE meta SET value = ? WHERE key = 'schema_version'").run(String(SCHEMA_VERSION - 1));
    });
    const before = sha256(path);
    const run = await cli(['search', 'release', '--db', path]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /older than this store's .* open it once for writing .*\(ENGRAM_STORE_SCHEMA_TOO_OLD\)\n$/,
    );
    expect(sha256(path)).toBe(before);
  });
});

describe('a quantised vector index build an interrupted process left', () => {
  it('is finished by a writing command, with progress lines on stderr that hold counts only', async () => {
    const path = join(dir, 'quant-pending.db');
    const embedder = createDeterministicEmbedder();
    const texts = ['The release train leaves on Fridays.', 'Tea at four.', 'The API listens on 8080.'];
    const store = createSqliteMemoryStore({
      path,
      embedding: embedder.profile,
      vectorIndex: { quantization: 'int8' },
    });
    try {
      await store.insertMemories(
        texts.map((content) => ({
          agentId: 'default',
          kind: 'fact' as const,
          content,
          vector: embedder.embedSync(content),
        })),
      );
    } finally {
      await store.close();
    }
    // What a build stopped before its first step leaves: an empty quantised table and the watermark at 0.
    interruptVectorIndexBuild(openDatabase(path));
    const run = await cli(['remember', 'Deploys go out on Mondays.', '--db', path]);
    expect(run.code).toBe(0);
    const lines = run.stderr
      .split('\n')
      .filter((line) => line.startsWith('building the quantised vector index'));
    expect(lines[0]).toBe('building the quantised vector index: 0/3');
    expect(lines.at(-1)).toBe('building the quantised vector index: 3/3');
    for (const text of texts) expect(run.stderr).not.toContain(text.slice(0, 8));
    const check = openDatabase(path);
    try {
      expect(check.prepare("SELECT value FROM meta WHERE key = 'vector_index_build'").get()).toBeUndefined();
      expect(check.prepare('SELECT count(*) AS n FROM memories_vec_quant').get()).toEqual({ n: 4 });
    } finally {
      check.close();
    }
  });
});

/** Flips `flips` seeded random bits in the middle third of the file's pages (page 1, the header, is spared). */
function flipBits(path: string, seed: number, flips: number): void {
  const bytes = readFileSync(path);
  const pageSize = bytes.readUInt16BE(16);
  const pages = bytes.length / pageSize;
  let state = seed >>> 0;
  const next = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 4294967296;
  };
  for (let i = 0; i < flips; i += 1) {
    const page = Math.floor(pages / 3) + Math.floor(next() * (pages / 3));
    const at = page * pageSize + Math.floor(next() * pageSize);
    bytes[at] = (bytes[at] ?? 0) ^ (1 << Math.floor(next() * 8));
  }
  writeFileSync(path, bytes);
}

describe('a damaged file', () => {
  it('refuses remember with the corruption error and how to recover; health reports the failure and exits 1', async () => {
    const path = join(dir, 'damaged.db');
    const store = createSqliteMemoryStore({ path, embedding: createDeterministicEmbedder().profile });
    for (let i = 0; i < 300; i += 1) {
      await store.insertMemory({
        agentId: 'default',
        kind: 'fact',
        content: `fact ${i}: the deploy of service ${i} listens on port ${8000 + i}. ${'Some padding words. '.repeat(20)}`,
      });
    }
    store.close();
    flipBits(path, 0x5eed, 200);
    const raw = openDatabase(path, { loadVectorExtension: false });
    expect(raw.prepare('PRAGMA quick_check(1)').get()).not.toEqual({ quick_check: 'ok' });
    raw.close();
    const before = sha256(path);

    const remember = await cli(['remember', 'One more fact.', '--db', path]);
    expect(remember.code).toBe(1);
    expect(remember.stderr).toMatch(/^engram remember: the database file failed its integrity check/);
    expect(remember.stderr).toContain('ENGRAM_STORE_CORRUPT');
    expect(remember.stderr).toContain('.recover');
    expect(remember.stderr).toContain('restore a backup');

    const health = await cli(['health', '--db', path]);
    expect(health.code).toBe(1);
    expect(health.stdout).toMatch(/integrity FAILED \(checked \d{4}-/);
    expect(health.stderr).toContain('ENGRAM_STORE_CORRUPT');
    const json = await cli(['health', '--db', path, '--json']);
    expect(json.code).toBe(1);
    // The report is the health DTO with its failed check (`store.integrity`) when the counts can still be read,
    // or the failed check alone (`integrity`) when the damage keeps them from being read: which one depends on
    // where the flipped bits land in the file's layout.
    const report = JSON.parse(json.stdout) as {
      integrity?: { state: string };
      store?: { integrity?: { state: string } };
    };
    expect(report.integrity ?? report.store?.integrity).toMatchObject({ state: 'failed' });
    expect(sha256(path)).toBe(before);
  });

  it('with a damaged vector chunk only: health says writes stay allowed, and forget repairs it', async () => {
    const path = join(dir, 'damaged-chunk.db');
    const store = createSqliteMemoryStore({ path, embedding: createDeterministicEmbedder().profile });
    const alice = await store.insertMemory({
      agentId: 'default',
      kind: 'fact',
      content: 'Alice likes green tea',
    });
    await store.insertMemory({ agentId: 'default', kind: 'fact', content: 'Bob drinks coffee' });
    const pending = await store.listPendingEmbeddings({ limit: 10 });
    const embedder = createDeterministicEmbedder();
    const vectors = await embedder.embed(pending.map((p) => p.content));
    await store.commitEmbeddings(
      pending.map((p, i) => ({
        id: p.id,
        revision: p.revision,
        state: 'ready',
        vector: vectors[i] as Float32Array,
      })),
    );
    store.close();
    const raw = openDatabase(path);
    raw.exec(`UPDATE memories_vec_vector_chunks00 SET vectors = x'0102'`);
    raw.close();

    const health = await cli(['health', '--db', path]);
    expect(health.code).toBe(1);
    expect(health.stdout).toContain('1 damaged vector chunk; writes stay allowed');
    expect(health.stderr).toContain('writes stay allowed');
    const forget = await cli(['forget', alice.id, '--db', path]);
    expect(forget.stderr).toBe('');
    expect(forget.code).toBe(0);
    const after = await cli(['health', '--db', path]);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/integrity ok \(checked \d{4}-/);
  });
});
