/**
 * Schema v14 → v15 (the user key in the search indexes): a file made by schema 14, whose vec0 tables and BM25
 * postings had no `user_key`, opens with every vector and posting keyed by its memory's user, the float table
 * declared as before otherwise (its chunk size too), and the quantised table rebuilt with the keys; every
 * search, unscoped or scoped to a user, answers as it did before the migration, and new writes carry their key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MemoryFilter, NewMemory, VectorHit } from '@engram/store/port-kit';
import { mulberry32 } from '@engram/test-support/prng';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { SCHEMA_VERSION, vec0PartitionIndexSql } from './schema.js';
import { userKey } from './sqlite/user-key.js';
import { QUANT_TABLE, type VectorQuantization } from './sqlite/vector-quant.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const DIMS = 16;
let dir: string;
const open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-v15-'));
});

afterEach(() => {
  for (const s of open.splice(0)) s.close();
  rmSync(dir, { recursive: true, force: true });
});

function openStore(path: string, quantization?: VectorQuantization): SqliteMemoryStore {
  const store = createSqliteMemoryStore({
    path,
    embedding: { id: 'p16', dimensions: DIMS },
    vectorWorker: false,
    ...(quantization === undefined ? {} : { vectorIndex: { quantization } }),
  });
  open.push(store);
  return store;
}

function closeAll(): void {
  for (const s of open.splice(0)) s.close();
}

const random = mulberry32(15);
const unit = (): Float32Array => {
  const v = Float32Array.from({ length: DIMS }, () => random() - 0.5);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

const USERS = [null, 'alice', 'bob', 'carol@example.com'] as const;

/** 120 memories of agent `a`, spread over the agent itself and three users, and 10 of agent `b`. */
function corpus(): NewMemory[] {
  const rows: NewMemory[] = Array.from({ length: 120 }, (_, i) => {
    const user = USERS[i % USERS.length] ?? null;
    return {
      id: `m${i}`,
      agentId: 'a',
      kind: 'event' as const,
      content: `memory ${i}`,
      importance: 0.5,
      vector: unit(),
      ...(user === null ? {} : { userId: user }),
    };
  });
  for (let i = 0; i < 10; i += 1) {
    rows.push({
      id: `b${i}`,
      agentId: 'b',
      kind: 'event',
      content: `other ${i}`,
      vector: unit(),
      userId: 'alice',
    });
  }
  return rows;
}

const FILTERS: readonly (MemoryFilter | undefined)[] = [
  undefined,
  { forUser: 'alice' },
  { forUser: 'carol@example.com' },
  { forUser: 'nobody' },
  { userId: 'bob' },
];

/** Every search of the test: each query vector, agent and filter, k = 10 and 200. */
async function answers(store: SqliteMemoryStore, queries: readonly Float32Array[]): Promise<VectorHit[][]> {
  const out: VectorHit[][] = [];
  for (const vector of queries) {
    for (const agentId of ['a', 'b']) {
      for (const filter of FILTERS) {
        for (const k of [10, 200]) {
          out.push([
            ...(await store.searchVector({
              agentId,
              vector,
              k,
              ...(filter === undefined ? {} : { filter }),
            })),
          ]);
        }
      }
    }
  }
  return out;
}

/** The declaration of a vec0 table, as the file holds it. */
function declaration(path: string, table: string): string {
  const db = openDatabase(path);
  try {
    const row = db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(table) as
      | { sql: string }
      | undefined;
    return row?.sql ?? '';
  } finally {
    db.close();
  }
}

/**
 * Turns a file back into what schema 14 wrote: the vec0 tables without `user_key` (the float one with vec0's
 * default chunk size, as files made before `vec0ChunkSize` have it), the same vectors.
 */
function backToV14(path: string, quantization: VectorQuantization): void {
  const raw = openDatabase(path);
  try {
    const floats = raw.prepare('SELECT rowid, agent_id, embedding FROM memories_vec').all() as {
      rowid: number;
      agent_id: string;
      embedding: Uint8Array;
    }[];
    raw.exec('DROP TABLE memories_vec');
    raw.exec(
      `CREATE VIRTUAL TABLE memories_vec USING vec0(agent_id text partition key, embedding float[${DIMS}] distance_metric=cosine)`,
    );
    raw.exec(vec0PartitionIndexSql('memories_vec'));
    const put = raw.prepare('INSERT INTO memories_vec(rowid, agent_id, embedding) VALUES (?, ?, ?)');
    for (const f of floats) put.run(BigInt(f.rowid), f.agent_id, f.embedding);
    if (quantization === 'int8') {
      const quant = raw.prepare(`SELECT rowid, agent_id, embedding, vector FROM ${QUANT_TABLE}`).all() as {
        rowid: number;
        agent_id: string;
        embedding: Uint8Array;
        vector: Uint8Array;
      }[];
      raw.exec(`DROP TABLE ${QUANT_TABLE}`);
      raw.exec(
        `CREATE VIRTUAL TABLE ${QUANT_TABLE} USING vec0(agent_id text partition key, embedding int8[${DIMS}] distance_metric=cosine, +vector blob, chunk_size=1024)`,
      );
      raw.exec(vec0PartitionIndexSql(QUANT_TABLE));
      const putQuant = raw.prepare(
        `INSERT INTO ${QUANT_TABLE}(rowid, agent_id, embedding, vector) VALUES (?, ?, vec_int8(?), ?)`,
      );
      for (const q of quant) putQuant.run(BigInt(q.rowid), q.agent_id, q.embedding, q.vector);
    }
    raw.exec(
      'ALTER TABLE lexical_postings DROP COLUMN user_key; ALTER TABLE lexical_postings_fresh DROP COLUMN user_key',
    );
    raw.prepare("UPDATE meta SET value = '14' WHERE key = 'schema_version'").run();
  } finally {
    raw.close();
  }
}

/** The user keys of the postings of the file, by memory id (one key per memory). */
function postingKeys(path: string): Map<string, number> {
  const db = openDatabase(path);
  try {
    const rows = db
      .prepare(
        `SELECT DISTINCT m.id AS id, p.user_key AS uk FROM (
           SELECT rid, user_key FROM lexical_postings UNION ALL SELECT rid, user_key FROM lexical_postings_fresh) p
         JOIN memories m ON m.rid = p.rid`,
      )
      .all() as { id: string; uk: number }[];
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length);
    return new Map(rows.map((r) => [r.id, r.uk]));
  } finally {
    db.close();
  }
}

/** The user key of every vector of the file, by memory id. */
function vectorKeys(path: string, table: string): Map<string, number> {
  const db = openDatabase(path);
  try {
    const rows = db
      .prepare(`SELECT m.id AS id, v.user_key AS uk FROM ${table} v JOIN memories m ON m.rid = v.rowid`)
      .all() as { id: string; uk: number }[];
    return new Map(rows.map((r) => [r.id, r.uk]));
  } finally {
    db.close();
  }
}

describe('schema v14 → v15', () => {
  for (const quantization of ['none', 'int8'] as const) {
    it(`keys every vector by its user and answers as before (${quantization} index)`, async () => {
      const path = join(dir, `v14-${quantization}.db`);
      const first = openStore(path, quantization);
      const memories = corpus();
      await first.insertMemories(memories);
      const queries = Array.from({ length: 3 }, () => unit());
      const before = await answers(first, queries);
      const lexical = async (store: SqliteMemoryStore): Promise<unknown[]> => {
        const out: unknown[] = [];
        for (const filter of FILTERS) {
          const r = await store.searchLexical({
            agentId: 'a',
            terms: ['memory'],
            limit: 50,
            ...(filter === undefined ? {} : { filter }),
          });
          out.push(r.hits);
        }
        return out;
      };
      const lexicalBefore = await lexical(first);
      closeAll();
      backToV14(path, quantization);
      expect(declaration(path, 'memories_vec')).not.toContain('user_key');

      expect(SCHEMA_VERSION).toBe(20);
      const store = openStore(path, quantization);
      expect(store.info.schemaVersion).toBe(20);
      // The float table as it was declared, with the key; its chunk size kept.
      const declared = declaration(path, 'memories_vec');
      expect(declared).toContain('user_key integer');
      expect(declared).not.toContain('chunk_size');
      expect(await answers(store, queries)).toEqual(before);
      expect(await lexical(store)).toEqual(lexicalBefore);
      const expected = new Map(memories.map((m) => [m.id as string, userKey(m.userId ?? null)]));
      expect(vectorKeys(path, 'memories_vec')).toEqual(expected);
      if (quantization === 'int8') expect(vectorKeys(path, QUANT_TABLE)).toEqual(expected);
      expect(postingKeys(path)).toEqual(expected);

      // A scoped search sees the agent's own rows and the user's, never another user's.
      const hits = await store.searchVector({
        agentId: 'a',
        vector: unit(),
        k: 200,
        filter: { forUser: 'bob' },
      });
      const byId = new Map(memories.map((m) => [m.id as string, m.userId ?? null]));
      expect(hits).toHaveLength(60);
      expect(new Set(hits.map((h) => byId.get(h.id)))).toEqual(new Set([null, 'bob']));

      // A memory written after the migration carries its key.
      await store.insertMemory({
        id: 'new',
        agentId: 'a',
        kind: 'event',
        content: 'after',
        userId: 'dave',
        vector: unit(),
      });
      expect(vectorKeys(path, 'memories_vec').get('new')).toBe(userKey('dave'));
      expect(postingKeys(path).get('new')).toBe(userKey('dave'));
      expect((await store.checkIntegrity()).state).toBe('ok');
    });
  }
});
