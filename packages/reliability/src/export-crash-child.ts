/**
 * Child of the export crash campaign: opens the store file and writes its export to a file (JSON Lines), one
 * line at a time, until the parent kills it with SIGKILL. Protocol (one JSON object per stdout line):
 * `{ t: 'ready' }` once the store is open; `{ t: 'P', records }` every 200 records written; `{ t: 'done',
 * records }` once the end record is written. A rejection is reported as `{ t: 'E', code }` and ends the child
 * with exit code 1.
 *
 * Usage: node --import tsx export-crash-child.ts <db path> <export path>
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import type { ExportRecord } from '@engram/store';
import { formatExportLine } from '@engram/store/port-kit';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { codeOf, emit } from './harness.js';

const [path, exportPath] = process.argv.slice(2);
if (path === undefined || exportPath === undefined) {
  process.stderr.write('usage: export-crash-child <db> <export>\n');
  process.exit(2);
}

const store = createSqliteMemoryStore({ path, embedding: null });
emit({ t: 'ready' });
const out = openSync(exportPath, 'w');
let written = 0;
try {
  for await (const record of store.exportRecords()) {
    writeSync(out, `${formatExportLine(record as ExportRecord)}\n`);
    written += 1;
    if (written % 200 === 0) emit({ t: 'P', records: written });
  }
  closeSync(out);
  emit({ t: 'done', records: written });
  store.close();
} catch (err) {
  emit({ t: 'E', code: codeOf(err) });
  process.exit(1);
}
