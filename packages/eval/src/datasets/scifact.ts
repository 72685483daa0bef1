import { EngramEvalError } from '../errors.js';
import type { FixtureMemory, FixtureQuery } from '../fixture.js';
import { type DatasetFixture, DETERMINISTIC_VECTOR_PROFILE } from './common.js';
import { parseCsvRecords } from './csv.js';
import { parsePythonStringList } from './python-literal.js';
import { readZip } from './zip.js';

/** The two SciFact files the adapter reads. */
export interface SciFactFiles {
  /** `corpus_train.csv`: doc_id, title, abstract (a Python list literal of sentences), structured. */
  readonly corpusCsv: string;
  /** `claims_validation.csv`: id, claim, …, cited_doc_ids (`[1 2]`-style id lists). */
  readonly claimsCsv: string;
}

/** The agent every SciFact row belongs to. */
export const SCIFACT_AGENT = 'scifact';

function column(record: Record<string, string>, name: string, file: string): string {
  const value = record[name];
  if (value === undefined) {
    throw new EngramEvalError('ENGRAM_EVAL_INVALID_DATASET', `SciFact: ${file} has no column ${name}.`);
  }
  return value;
}

/** Extracts `corpus_train.csv` and `claims_validation.csv` from the SciFact zip archive. */
export function readSciFactZip(archive: Buffer): SciFactFiles {
  const entries = readZip(archive);
  const find = (name: string): string => {
    const entry = entries.find((e) => e.name === name || e.name.endsWith(`/${name}`));
    if (entry === undefined) {
      throw new EngramEvalError('ENGRAM_EVAL_INVALID_DATASET', `SciFact: the archive has no ${name}.`);
    }
    return entry.data.toString('utf8');
  };
  return { corpusCsv: find('corpus_train.csv'), claimsCsv: find('claims_validation.csv') };
}

/**
 * Turns SciFact into a fixture: one agent, one `fact` row per abstract (title, then the abstract's
 * sentences joined by spaces), one query per distinct claim id with the union of its `cited_doc_ids` that
 * exist in the corpus; claims left without any are skipped (counted in `stats`).
 */
export function scifactToFixture(files: SciFactFiles): DatasetFixture {
  const corpus: FixtureMemory[] = [];
  const docIds = new Set<string>();
  for (const record of parseCsvRecords(files.corpusCsv)) {
    const id = column(record, 'doc_id', 'corpus_train.csv').trim();
    if (id === '' || docIds.has(id)) continue;
    const title = column(record, 'title', 'corpus_train.csv').trim();
    const sentences = parsePythonStringList(column(record, 'abstract', 'corpus_train.csv')).map((s) =>
      s.trim(),
    );
    const content = [title, sentences.filter((s) => s !== '').join(' ')].filter((s) => s !== '').join('\n');
    if (content === '') continue;
    docIds.add(id);
    corpus.push({ id, agentId: SCIFACT_AGENT, kind: 'fact', content, importance: 0.5 });
  }

  const claims = new Map<string, { text: string; relevant: string[] }>();
  let missingDocs = 0;
  for (const record of parseCsvRecords(files.claimsCsv)) {
    const id = column(record, 'id', 'claims_validation.csv').trim();
    const text = column(record, 'claim', 'claims_validation.csv');
    let claim = claims.get(id);
    if (claim === undefined) {
      claim = { text, relevant: [] };
      claims.set(id, claim);
    }
    for (const doc of column(record, 'cited_doc_ids', 'claims_validation.csv').match(/\d+/g) ?? []) {
      if (!docIds.has(doc)) {
        missingDocs += 1;
        continue;
      }
      if (!claim.relevant.includes(doc)) claim.relevant.push(doc);
    }
  }

  const queries: FixtureQuery[] = [];
  let skippedClaims = 0;
  for (const [id, claim] of claims) {
    if (claim.relevant.length === 0 || claim.text.trim() === '') {
      skippedClaims += 1;
      continue;
    }
    queries.push({
      id: `claim-${id}`,
      agentId: SCIFACT_AGENT,
      text: claim.text,
      subsets: ['claims'],
      relevantIds: claim.relevant,
    });
  }

  return {
    fixture: {
      version: 1,
      name: 'scifact',
      vectorProfile: DETERMINISTIC_VECTOR_PROFILE,
      subsets: ['claims'],
      corpus,
      queries,
    },
    stats: {
      rows: corpus.length,
      queries: queries.length,
      judgements: queries.reduce((n, q) => n + q.relevantIds.length, 0),
      missingDocs,
      skippedClaims,
    },
  };
}
