/**
 * Child of the import crash campaign: opens the store file and imports an export file (JSON Lines) into it with
 * `importRecords`, until the parent kills it with SIGKILL. Protocol (one JSON object per stdout line):
 * `{ t: 'ready' }` once the store is open; `{ t: 'P', records }` at every progress report of the import (the
 * last one before its COMMIT); `{ t: 'done', imported }` once its promise resolved. A rejection is reported as
 * `{ t: 'E', code }` (the code only) and ends the child with exit code 1.
 *
 * Usage: node --import tsx import-crash-child.ts <db path> <export path>
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ExportRecord } from '@engram/store';
import { parseExportLine } from '@engram/store/port-kit';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { codeOf, emit } from './harness.js';

const [path, exportPath] = process.argv.slice(2);
if (path === undefined || exportPath === undefined) {
  process.stderr.write('usage: import-crash-child <db> <export>\n');
  process.exit(2);
}

async function* records(file: string): AsyncGenerator<ExportRecord> {
  const lines = createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let n = 0;
  for await (const line of lines) {
    n += 1;
    if (line.length > 0) yield parseExportLine(line, n);
  }
}

const store = createSqliteMemoryStore({ path, embedding: null });
emit({ t: 'ready' });
try {
  const summary = await store.importRecords(records(exportPath), {
    onProgress: (n) => emit({ t: 'P', records: n }),
  });
  emit({ t: 'done', imported: summary.imported });
  store.close();
} catch (err) {
  emit({ t: 'E', code: codeOf(err) });
  process.exit(1);
}
