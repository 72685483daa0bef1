import { EngramEvalError } from '../errors.js';

/**
 * Parses RFC 4180 CSV: comma-separated fields, optional double quotes, `""` for a quote inside a quoted
 * field, line breaks (LF or CRLF) inside quoted fields. Returns the rows as arrays of strings; a trailing
 * line break does not add an empty row.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i += 1;
        continue;
      }
      field += ch;
      i += 1;
      continue;
    }
    if (ch === '"' && field.length === 0) {
      quoted = true;
      i += 1;
    } else if (ch === ',') {
      row.push(field);
      field = '';
      i += 1;
    } else if (ch === '\n' || ch === '\r') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      field += ch;
      i += 1;
    }
  }
  if (quoted) throw new EngramEvalError('ENGRAM_EVAL_INVALID_DATASET', 'CSV: unterminated quoted field.');
  if (field.length > 0 || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** Parses CSV with a header row into records keyed by column name; rows must have the header's width. */
export function parseCsvRecords(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text.startsWith('\uFEFF') ? text.slice(1) : text);
  if (header === undefined) return [];
  return rows.map((cells, index) => {
    if (cells.length !== header.length) {
      throw new EngramEvalError(
        'ENGRAM_EVAL_INVALID_DATASET',
        `CSV: row ${index + 2} has ${cells.length} fields, the header has ${header.length}.`,
      );
    }
    const record: Record<string, string> = {};
    header.forEach((name, i) => {
      record[name] = cells[i] as string;
    });
    return record;
  });
}
