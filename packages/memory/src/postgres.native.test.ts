/**
 * The facade on a PostgreSQL database (`createMemory({ path: 'postgres://…' })`): PGlite over the wire protocol
 * started here, or the scratch server named by ENGRAM_PG_URL. What a user notices: the same calls work as on a
 * file, the database keeps the embedder it was made with, SQLite-only options are refused before anything is
 * created, PostgreSQL is loaded only for a URL, the README's example runs, and close() ends the connections so
 * the process can exit.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readPostgresBinding } from '@engram/store-postgres';
import { resetTestPostgres, runNode, startTestPostgres, type TestPostgres } from '@engram/test-support';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createMemory } from './memory.js';

let server: TestPostgres;
let dir: string;

beforeAll(async () => {
  server = await startTestPostgres({ database: 'engram_test_memory' });
  dir = await mkdtemp(join(tmpdir(), 'engram-memory-pg-'));
});
beforeEach(async () => {
  await resetTestPostgres(server.url);
});
afterAll(async () => {
  await server.stop();
  await rm(dir, { recursive: true, force: true });
});

async function codeOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => 'resolved',
    (error: unknown) => (error as { code?: unknown }).code,
  );
}

it('conflicts, sessions and embedding failures read the same on a PostgreSQL URL', async () => {
  const memory = await createMemory({ path: server.url, embedder: 'deterministic', agentId: 'coder' });
  try {
    await memory.add('The staging API port is 8080', { userId: 'alice' });
    await memory.add('The staging API port is 9090', { userId: 'alice' });
    expect((await memory.conflicts()).map((c) => c.newer.content)).toEqual(['The staging API port is 9090']);
    expect(await memory.conflicts({ userId: 'bob' })).toEqual([]);
    await memory.add([{ role: 'user', content: 'Which port?' }], { sessionId: 'chat-1', userId: 'alice' });
    expect((await memory.sessions()).map((x) => [x.sessionId, x.entries])).toEqual([['chat-1', 1]]);
    expect(await memory.sessions({ userId: 'bob' })).toEqual([]);
    expect(await memory.embeddingFailures()).toEqual([]);
  } finally {
    await memory.close();
  }
}, 60_000);

it('add, search, update, history and delete work on a PostgreSQL URL as on a file', async () => {
  const memory = await createMemory({ path: server.url, embedder: 'deterministic' });
  try {
    const { added } = await memory.add('The API server listens on port 8080');
    expect(added[0]?.embedded).toBe(true);
    await memory.add('Deploys go out on Fridays');
    const hits = await memory.search('which port does the API server listen on?');
    expect(hits[0]?.content).toBe('The API server listens on port 8080');
    expect(hits[0]?.explanation.arms).toContain('vector');
    expect(hits[0]?.explanation.arms).toContain('lexical');

    const id = added[0]?.id ?? '';
    const updated = await memory.update(id, 'The API server listens on port 9090');
    expect(updated.content).toBe('The API server listens on port 9090');
    const versions = await memory.history(updated.id);
    expect(versions.map((m) => ('content' in m ? m.content : null))).toContain(
      'The API server listens on port 8080',
    );
    expect((await memory.search('API server port'))[0]?.content).toBe('The API server listens on port 9090');

    expect(await memory.delete(updated.id)).toBe(true);
    expect(await memory.get(updated.id)).toBeNull();
    expect((await memory.search('API server port')).map((h) => h.content)).not.toContain(
      'The API server listens on port 9090',
    );
  } finally {
    await memory.close();
  }
});

it('an existing database keeps its embedder: adopted when none is given, another one is the typed mismatch', async () => {
  const first = await createMemory({ path: server.url, embedder: 'deterministic' });
  await first.add('The staging database runs on port 5433');
  await first.close();

  const refused = createMemory({ path: server.url, embedder: 'use' });
  expect(await codeOf(refused)).toBe('ENGRAM_MEMORY_EMBEDDER_MISMATCH');
  await expect(refused).rejects.toThrow(/deterministic/);

  const again = await createMemory({ path: server.url });
  try {
    expect((await again.search('staging database port'))[0]?.content).toBe(
      'The staging database runs on port 5433',
    );
  } finally {
    await again.close();
  }
});

it('SQLite-only options (encryptionKey, vectorIndex) are refused for a URL, and nothing is created', async () => {
  expect(
    await codeOf(
      createMemory({ path: server.url, embedder: 'deterministic', encryptionKey: 'k'.repeat(32) }),
    ),
  ).toBe('ENGRAM_MEMORY_INVALID_CONFIG');
  expect(
    await codeOf(
      createMemory({ path: server.url, embedder: 'deterministic', vectorIndex: { quantization: 'int8' } }),
    ),
  ).toBe('ENGRAM_MEMORY_INVALID_CONFIG');
  expect(await readPostgresBinding(server.url)).toBe('new');
});

it('an unreachable server is a typed error that names neither the URL nor its password', async () => {
  const failed = await createMemory({ path: 'postgresql://someone:secret-pass@127.0.0.1:1/db' }).then(
    () => null,
    (error: unknown) => error as Error & { code?: string },
  );
  expect(failed?.code).toMatch(/^ENGRAM_/);
  expect(failed?.message).not.toContain('secret-pass');
});

// A module hook that reports every module URL the child loads on stderr.
const HOOK = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(
  "export async function load(url, context, next) { process.stderr.write('LOADED ' + url + '\\\\n'); return next(url, context); }"));`;

/** The module URLs a script that adds to the memory at `path` loads. */
async function loadedFor(path: string): Promise<string[]> {
  const script = join(dir, 'load.mjs');
  const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  await writeFile(
    script,
    [
      `const { createMemory } = await import(${JSON.stringify(entry)});`,
      'const memory = await createMemory({ path: process.argv[2], embedder: "deterministic" });',
      'await memory.add("The cache expires after ten minutes");',
      'await memory.close();',
    ].join('\n'),
  );
  const env = { ...process.env, NODE_OPTIONS: `--import=data:text/javascript,${encodeURIComponent(HOOK)}` };
  const run = await runNode(script, [path], { env });
  expect(run.code).toBe(0);
  return run.stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length));
}

it('a SQLite file never loads the PostgreSQL store or pg; a URL loads them', async () => {
  const heavy = (urls: readonly string[]) =>
    urls.filter((url) => url.includes('/pg/') || url.includes('/store-postgres/dist/store.js'));
  expect(heavy(await loadedFor(join(dir, 'file', 'memory.db')))).toEqual([]);
  expect(heavy(await loadedFor(server.url)).length).toBeGreaterThan(0);
});

it('the README’s PostgreSQL example, run against this server, prints the fact it remembered', async () => {
  const packageDir = fileURLToPath(new URL('..', import.meta.url));
  const readme = await readFile(join(packageDir, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## PostgreSQL'));
  const example = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  expect(example.trim().split('\n')).toHaveLength(5);
  const url = /'(postgres:\/\/[^']+)'/.exec(example)?.[1] ?? '';
  expect(url).not.toBe('');
  // Inside the package, so that `import '@engram/memory'` resolves to this package (self-reference).
  const scratch = await mkdtemp(join(packageDir, '.example-pg-'));
  try {
    const script = join(scratch, 'example.mjs');
    await writeFile(script, example.replace(url, server.url));
    const run = await runNode(script, [], { cwd: scratch });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('The API server listens on port 8080.\n');
    expect(run.code).toBe(0);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
});

it('close() ends the connections: a script that closes its memory exits by itself', async () => {
  const script = join(dir, 'close.mjs');
  const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  await writeFile(
    script,
    [
      `const { createMemory } = await import(${JSON.stringify(entry)});`,
      'const memory = await createMemory({ path: process.argv[2], embedder: "deterministic" });',
      'await memory.add("The cache expires after ten minutes");',
      'const hits = await memory.search("cache expiry");',
      'await memory.close();',
      // A leaked pool would keep the process alive until its idle clients time out (10 s): this watchdog,
      // which does not itself keep the process alive, fails the run before that.
      'setTimeout(() => { console.error("still open after close()"); process.exit(3); }, 8000).unref();',
      'console.log(JSON.stringify({ found: hits.length }));',
    ].join('\n'),
  );
  const run = await runNode(script, [server.url]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout)).toEqual({ found: 1 });
});
