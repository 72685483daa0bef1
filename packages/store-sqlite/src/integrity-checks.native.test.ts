/**
 * The integrity check sees a row that breaks the schema's CHECK constraints on a read-only open too:
 * `PRAGMA quick_check` verifies CHECK constraints on a writable connection only, and `engram health` opens a
 * file read-only, so a damaged `kind` or `importance` went unreported there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from './raw.js';
import { createSqliteMemoryStore } from './sqlite-store.js';

const dir = mkdtempSync(join(tmpdir(), 'engram-integrity-checks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('integrity check on a read-only open', () => {
  it.each([
    ['kind', "UPDATE memories SET kind = 'bogus' WHERE rowid = 1"],
    ['importance', 'UPDATE memories SET importance = 7 WHERE rowid = 1'],
    ['lifecycle', "UPDATE memories SET lifecycle = 'gone' WHERE rowid = 1"],
  ])('reports a row whose %s breaks the schema as failed, with one bad row', async (_what, sql) => {
    const path = join(dir, `${_what}.db`);
    const store = createSqliteMemoryStore({ path, embedding: null });
    await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The harbour opens at six' });
    await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The ferry leaves at seven' });
    store.close();
    const raw = openDatabase(path, { loadVectorExtension: false });
    raw.exec('PRAGMA ignore_check_constraints = ON');
    raw.exec(sql);
    raw.close();
    const reader = createSqliteMemoryStore({ path, embedding: null, access: 'read' });
    try {
      expect(await reader.checkIntegrity()).toMatchObject({ state: 'failed', badRows: 1 });
    } finally {
      reader.close();
    }
  });
});
