/**
 * Export and import, as a user moving memories from one file to another sees them: a populated file exported
 * and imported into a fresh one gives the same rows, table by table, row by row (derived indexes included);
 * importing twice changes nothing; one agent can be exported alone; a truncated or foreign stream is refused;
 * a file made by the schema-4 store exports and imports.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHUNK_BUDGET, type ExportRecord, formatExportLine, parseExportLine } from '@engram/store/port-kit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase } from './native.js';
import { META_TABLE_SQL, MIGRATIONS } from './schema.js';
import { createSqliteMemoryStore, type SqliteMemoryStore } from './sqlite-store.js';

const profile = { id: 'test-v1', dimensions: 4 };
const SPAN = 1_099_511_627_776;
let dir: string;
let open: SqliteMemoryStore[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engram-transfer-'));
});
afterEach(() => {
  for (const s of open) s.close();
  open = [];
  rmSync(dir, { recursive: true, force: true });
});

function storeAt(
  name: string,
  embedding: typeof profile | null = profile,
  now = () => 5_000_000,
): SqliteMemoryStore {
  let n = 0;
  const s = createSqliteMemoryStore({
    path: join(dir, name),
    embedding,
    now,
    idFactory: () => {
      n += 1;
      return `${name}-${n}`;
    },
  });
  open.push(s);
  return s;
}

function vec(seed: number): Float32Array {
  const v = new Float32Array([seed, 1, seed / 3, 0.5]);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** A file with every kind of record: all kinds and lifecycles, lineage, tags, events, cursors, skills, chunks, vectors. */
async function populate(s: SqliteMemoryStore): Promise<void> {
  const kinds = ['event', 'fact', 'semantic', 'episodic', 'reflection', 'persona', 'skill'] as const;
  const rows = await s.insertMemories(
    kinds.map((kind, i) => ({
      agentId: 'a',
      kind,
      content: `${kind} memory number ${i} about the deploy pipeline`,
      importance: i / 10,
      confidence: 1 - i / 20,
      tags: [`topic:deploy`, `n:${i}`],
      createdAt: 1_000_000 + i,
      ...(kind === 'event' ? { sessionId: 's1', seqFrom: 1, seqTo: 1 } : {}),
    })),
  );
  await s.insertMemory({
    agentId: 'a',
    kind: 'semantic',
    content: '東京の天気は晴れです',
    tags: ['lang:ja'],
  });
  // Scopes, metadata and validity (the columns added by schema 6) travel like every other column.
  const scoped = await s.insertMemory({
    agentId: 'a',
    kind: 'fact',
    content: 'The API listens on port 9090',
    userId: 'u1',
    sessionId: 'run-7',
    metadata: { source: 'chat', priority: 2, nested: { ok: true } },
    validFrom: 900_000,
  });
  const older = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'The API listens on port 8080' });
  await s.linkConflict('a', older.id, scoped.id, 'number');
  const gone = await s.insertMemory({ agentId: 'a', kind: 'semantic', content: 'a note to forget' });
  await s.forgetMemory('a', gone.id, { reason: 'asked by the user' });
  const long = await s.insertMemory({
    agentId: 'a',
    kind: 'semantic',
    content: Array.from({ length: 40 }, (_, i) => `Paragraph ${i} explains the release checklist.`).join(
      '\n\n',
    ),
  });
  expect(long.content.length).toBeGreaterThan(CHUNK_BUDGET);
  // Vectors for every pending item (chunks included), one row left in error and one lexical-only.
  const pending = await s.listPendingEmbeddings({ limit: 1000 });
  const errorId = rows[5]?.id;
  const ftsId = rows[6]?.id;
  await s.commitEmbeddings(
    pending.map((p, i) => {
      const base = { id: p.id, revision: p.revision, ...(p.chunk === undefined ? {} : { chunk: p.chunk }) };
      if (p.id === errorId) return { ...base, state: 'error' as const };
      if (p.id === ftsId) return { ...base, state: 'ftsOnly' as const };
      return { ...base, state: 'ready' as const, vector: vec(i + 1) };
    }),
  );
  // Lineage and every lifecycle.
  const [r0, r1, r2, r3, r4] = rows;
  await s.supersedeMemory('a', r1?.id ?? '', r1?.revision ?? 1, {
    agentId: 'a',
    kind: 'fact',
    content: 'the new fact',
  });
  await s.mergeMemories(
    'a',
    [
      { id: r2?.id ?? '', expectedRevision: 1 },
      { id: r3?.id ?? '', expectedRevision: 1 },
    ],
    { agentId: 'a', kind: 'semantic', content: 'merged note', tags: ['source:merge'] },
  );
  await s.archiveMemory('a', r4?.id ?? '');
  await s.setLifecycle('a', r0?.id ?? '', r0?.revision ?? 1, 'conflicted');
  await s.recordAccess('a', [long.id], 4_000_000);
  // Events, a cursor moved by an ingested batch, skills; a second agent.
  await s.appendEvents('b', 'chat', [
    { seq: 1, type: 'message', role: 'user', content: 'hello', createdAt: 10 },
    { seq: 2, type: 'tool_call', role: 'assistant', content: '', toolName: 'bash', metadata: { cmd: 'ls' } },
  ]);
  await s.ingestBatch({
    agentId: 'b',
    sessionId: 'chat',
    expectedCursor: 0,
    nextCursor: 2,
    memories: [
      { agentId: 'b', kind: 'event', content: 'user said hello', sessionId: 'chat', seqFrom: 1, seqTo: 1 },
    ],
  });
  await s.writeSkill({ agentId: 'b', name: 'deploy', description: 'ship it', content: 'step 1\nstep 2' });
  await s.writeSkill({ agentId: 'a', name: 'review', description: '', content: 'read the diff' });
}

/** Every table of a file, row by row, with row ids replaced by memory ids (an import assigns new ones). */
function dump(path: string): Record<string, unknown[]> {
  const db = openDatabase(path);
  try {
    const all = (sql: string) => db.prepare(sql).all() as Record<string, unknown>[];
    const idOf = new Map(all('SELECT rid, id FROM memories').map((r) => [Number(r.rid), String(r.id)]));
    const unit = (key: unknown) => {
      const k = Number(key);
      return `${idOf.get(k % SPAN)}#${Math.floor(k / SPAN)}`;
    };
    const byUnit = (rows: Record<string, unknown>[], col: string) =>
      rows
        .map(({ [col]: key, ...rest }) => ({ unit: unit(key), ...rest }))
        .sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));
    return {
      memories: all('SELECT * FROM memories ORDER BY id').map(({ rid: _rid, ...rest }) => rest),
      memory_tags: byUnit(all('SELECT * FROM memory_tags'), 'rid'),
      memory_chunks: byUnit(all('SELECT * FROM memory_chunks'), 'rid'),
      vectors: byUnit(all('SELECT rowid AS rid, agent_id, hex(embedding) AS v FROM memories_vec'), 'rid'),
      lexical_postings: byUnit(
        all('SELECT * FROM (SELECT * FROM lexical_postings UNION ALL SELECT * FROM lexical_postings_fresh)'),
        'rid',
      ),
      lexical_docs: byUnit(all('SELECT * FROM lexical_docs'), 'rid'),
      lexical_stats: all('SELECT * FROM lexical_stats ORDER BY agent_id'),
      fts: all(
        'SELECT (SELECT count(*) FROM memories_fts_words) AS words, (SELECT count(*) FROM memories_fts_trigram) AS trigram',
      ),
      events: all('SELECT * FROM events ORDER BY agent_id, session_id, seq'),
      session_cursors: all('SELECT * FROM session_cursors ORDER BY agent_id, session_id'),
      skills: all('SELECT * FROM skills ORDER BY agent_id, name'),
      memory_links: all('SELECT * FROM memory_links ORDER BY agent_id, older_id, newer_id'),
      memory_history: all('SELECT * FROM memory_history ORDER BY seq').map(({ seq: _seq, ...rest }) => rest),
      meta: all("SELECT * FROM meta WHERE key <> 'created_at' ORDER BY key"),
    };
  } finally {
    db.close();
  }
}

async function collect(s: SqliteMemoryStore, options?: Parameters<SqliteMemoryStore['exportRecords']>[0]) {
  const out: ExportRecord[] = [];
  for await (const r of s.exportRecords(options)) out.push(r);
  return out;
}

/** The records through their JSON Lines form, as the CLI writes and reads them. */
function throughLines(records: readonly ExportRecord[]): ExportRecord[] {
  const text = records.map(formatExportLine).join('\n');
  return text.split('\n').map((line, i) => parseExportLine(line, i + 1));
}

describe('export and import', () => {
  it('round-trips a populated file into a fresh one: every table identical, row by row', async () => {
    const source = storeAt('source.db');
    await populate(source);
    const records = throughLines(await collect(source, { vectors: true }));
    expect(records[0]).toMatchObject({ type: 'header', formatVersion: 1, embedder: profile, vectors: true });
    expect(records.at(-1)).toEqual({
      type: 'end',
      counts: { memories: 14, events: 2, cursors: 1, skills: 2, links: 1, history: 6 },
    });
    const target = storeAt('target.db');
    const summary = await target.importRecords(records);
    expect(summary).toEqual({
      imported: { memories: 14, events: 2, cursors: 1, skills: 2, links: 1, history: 6 },
      unchanged: { memories: 0, events: 0, cursors: 0, skills: 0, links: 0, history: 0 },
      conflicts: { memories: 0, events: 0, cursors: 0, skills: 0, links: 0, history: 0 },
      vectorsImported: 9,
    });
    source.close();
    target.close();
    const a = dump(join(dir, 'source.db'));
    const b = dump(join(dir, 'target.db'));
    for (const table of Object.keys(a)) expect({ table, rows: b[table] }).toEqual({ table, rows: a[table] });
    expect(a.memories?.map((m) => (m as { lifecycle: string }).lifecycle).sort()).toEqual(
      expect.arrayContaining(['active', 'archived', 'conflicted', 'superseded']),
    );
  });

  it('importing twice changes nothing; a changed row is a conflict, kept as stored', async () => {
    const source = storeAt('source.db');
    await populate(source);
    const records = await collect(source, { vectors: true });
    const target = storeAt('target.db');
    await target.importRecords(records);
    target.close();
    const before = dump(join(dir, 'target.db'));
    const again = storeAt('target.db');
    const second = await again.importRecords(records);
    expect(second.imported).toEqual({ memories: 0, events: 0, cursors: 0, skills: 0, links: 0, history: 0 });
    expect(second.unchanged).toEqual({
      memories: 14,
      events: 2,
      cursors: 1,
      skills: 2,
      links: 1,
      history: 6,
    });
    const [first] = await again.listMemories('a', { limit: 1 });
    await again.updateMemory('a', first?.id ?? '', first?.revision ?? 1, { importance: 0.99 });
    const third = await again.importRecords(records);
    expect(third.conflicts.memories).toBe(1);
    expect((await again.getMemory('a', first?.id ?? ''))?.importance).toBe(0.99);
    again.close();
    const after = dump(join(dir, 'target.db'));
    expect(after.events).toEqual(before.events);
    expect(after.memories?.length).toBe(before.memories?.length);
  });

  it('without vectors, ready rows import as pending for the drain; with --agent only that agent travels', async () => {
    const source = storeAt('source.db');
    await populate(source);
    const target = storeAt('target.db');
    await target.importRecords(await collect(source, { agentId: 'b' }));
    expect(await target.listAgents()).toEqual(['b']);
    const rows = await target.listMemories('b', { limit: 10 });
    expect(rows.map((r) => [r.content, r.embeddingState])).toEqual([['user said hello', 'pending']]);
    expect(await target.getCursor('b', 'chat')).toBe(2);
    expect((await target.listSkills('b')).map((k) => k.name)).toEqual(['deploy']);
    expect((await target.searchLexical({ agentId: 'b', terms: ['hello'], limit: 5 })).hits).toHaveLength(1);
  });

  it('refuses a truncated stream, a foreign one and a column it does not know; importing the whole stream later completes it', async () => {
    const source = storeAt('source.db');
    await populate(source);
    const records = await collect(source);
    const target = storeAt('target.db');
    await expect(target.importRecords(records.slice(0, 5))).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
      message: expect.stringContaining('truncated'),
    });
    await expect(target.importRecords(records.slice(1))).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    const odd = records.map((r) =>
      r.type === 'skill' ? { ...r, row: { ...r.row, secret_column: 'x' } } : r,
    ) as ExportRecord[];
    await expect(storeAt('other.db').importRecords(odd)).rejects.toMatchObject({
      code: 'ENGRAM_STORE_INVALID_INPUT',
    });
    expect(() => parseExportLine('{"type":"memory","row":{"id":"SECRET-TEXT"', 7)).toThrow(/line 7/);
    try {
      parseExportLine('{"type":"memory","row":{"id":["SECRET-TEXT"]}}', 3);
    } catch (err) {
      expect(String((err as Error).message)).not.toContain('SECRET');
    }
    const done = await target.importRecords(records);
    expect(done.imported.memories + done.unchanged.memories).toBe(14);
  });

  it('a record whose text is already active under another id is a conflict; the rest imports', async () => {
    const source = storeAt('source.db');
    await populate(source);
    const target = storeAt('target.db');
    const mine = await target.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'The API listens on port 8080',
    });
    const summary = await target.importRecords(await collect(source));
    expect(summary.conflicts.memories).toBe(1);
    expect(summary.imported.memories).toBe(13);
    expect(await target.getMemory('a', mine.id)).toMatchObject({ lifecycle: 'active', revision: 1 });
  });

  it('exports and imports a file made by the schema-4 store', async () => {
    const path = join(dir, 'v4.db');
    const db = openDatabase(path, { loadVectorExtension: false });
    db.exec(META_TABLE_SQL);
    // An empty file needs no store context to migrate: migration 4 only chunks existing rows.
    for (const m of MIGRATIONS) if (m.version <= 4) m.up(db, undefined as never);
    const meta = db.prepare('INSERT INTO meta(key, value) VALUES (?, ?)');
    meta.run('schema_version', '4');
    meta.run('created_at', '1700000000000');
    meta.run('embedding_fingerprint', 'none');
    db.prepare(
      `INSERT INTO memories(id, agent_id, kind, content, content_hash, importance, confidence, tags, created_at, updated_at)
       VALUES ('old-1', 'a', 'fact', 'The API listens on port 8080', 'x', 0.5, 1, '["topic:api"]', 1700000000000, 1700000000000)`,
    ).run();
    db.prepare(
      `INSERT INTO events(agent_id, session_id, seq, type, role, content, metadata, content_hash, created_at)
       VALUES ('a', 's', 1, 'message', 'user', 'which port?', '{}', 'x', 1700000000000)`,
    ).run();
    db.close();
    const old = storeAt('v4.db', null);
    const records = await collect(old);
    expect(records[0]).toMatchObject({ type: 'header', embedder: null });
    const target = storeAt('fresh.db', null);
    const summary = await target.importRecords(records);
    expect(summary.imported).toEqual({ memories: 1, events: 1, cursors: 0, skills: 0, links: 0, history: 0 });
    expect(await target.getMemory('a', 'old-1')).toMatchObject({
      content: 'The API listens on port 8080',
      tags: ['topic:api'],
      createdAt: 1700000000000,
    });
    // Derived rows are recomputed: the imported fact is searchable at once.
    expect(
      (await target.searchLexical({ agentId: 'a', terms: ['port'], limit: 5 })).hits.map((h) => h.id),
    ).toEqual(['old-1']);
  });
});
