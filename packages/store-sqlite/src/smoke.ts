/**
 * Native smoke check (`pnpm smoke:native`): opens a FILE database in a temporary directory, creates the
 * schema, writes, reads, searches both arms, closes. One line per step; exit code 1 on any failure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkNativeCapabilities } from './native.js';
import { createSqliteMemoryStore } from './sqlite-store.js';

function describe(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { code?: unknown; message?: unknown };
    return `${typeof e.code === 'string' ? `${e.code}: ` : ''}${typeof e.message === 'string' ? e.message : ''}`;
  }
  return String(err);
}

/** Runs the smoke check; resolves to the process exit code. */
export async function runSmoke(
  log: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'engram-smoke-'));
  const path = join(dir, 'nested', 'smoke.db');
  let step = 'capabilities';
  try {
    const report = checkNativeCapabilities();
    if (!report.ok) {
      log(`FAIL capabilities: missing ${report.missing.join(', ')}`);
      for (const d of report.details) log(`  ${d}`);
      return 1;
    }
    log(`ok   capabilities (${report.details.slice(1).join('; ')})`);

    step = 'open';
    const profile = { id: 'smoke-v1', dimensions: 4 };
    let store = createSqliteMemoryStore({ path, embedding: profile });
    log(
      `ok   open file database, schema v${store.info.schemaVersion}, fingerprint ${store.info.fingerprint}`,
    );

    step = 'write';
    const a = await store.insertMemory({
      agentId: 'smoke',
      kind: 'fact',
      content: 'The deployment pipeline lives in src/deploy/pipeline.ts',
      tags: ['file:src/deploy/pipeline.ts'],
      vector: new Float32Array([1, 0, 0, 0]),
    });
    const b = await store.insertMemory({
      agentId: 'smoke',
      kind: 'fact',
      content: '数据库连接池的大小是二十',
      vector: new Float32Array([0, 1, 0, 0]),
    });
    log('ok   write two memories (English + Chinese) with vectors');

    step = 'reopen';
    store.close();
    store = createSqliteMemoryStore({ path, embedding: profile });
    log('ok   close and reopen (migrations idempotent, fingerprint matches)');

    step = 'read';
    const got = await store.getMemory('smoke', a.id);
    if (got === null || got.content !== a.content || got.embeddingState !== 'ready') {
      throw new Error('read back a different row');
    }
    log('ok   read back');

    step = 'search words';
    const words = await store.searchLexical({ agentId: 'smoke', terms: ['deployment'], limit: 5 });
    if (words.hits[0]?.id !== a.id || !words.paths.words) throw new Error('word search missed the row');
    log('ok   lexical search (word index)');

    step = 'search trigram';
    const tri = await store.searchLexical({ agentId: 'smoke', terms: ['连接池'], limit: 5 });
    if (tri.hits[0]?.id !== b.id || !tri.paths.trigram) throw new Error('trigram search missed the row');
    log('ok   lexical search (trigram index)');

    step = 'search like';
    const like = await store.searchLexical({ agentId: 'smoke', terms: ['大小'], limit: 5 });
    if (like.hits[0]?.id !== b.id || !like.paths.like) throw new Error('LIKE search missed the row');
    log('ok   lexical search (bounded LIKE path)');

    step = 'search vector';
    const vec = await store.searchVector({
      agentId: 'smoke',
      vector: new Float32Array([0.1, 0.9, 0, 0]),
      k: 2,
    });
    if (vec[0]?.id !== b.id) throw new Error('vector search missed the row');
    log('ok   vector search (vec0, agent partition)');

    step = 'close';
    store.close();
    log('ok   close');
    return 0;
  } catch (err) {
    log(`FAIL ${step}: ${describe(err)}`);
    return 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = await runSmoke();
