import { EngramEvalError } from '../errors.js';
import type { FixtureMemory, FixtureQuery } from '../fixture.js';
import { type DatasetFixture, type DatasetSplit, DETERMINISTIC_VECTOR_PROFILE, splitName } from './common.js';
import { parseCsvRecords } from './csv.js';
import { parsePythonStringList } from './python-literal.js';
import { readZip } from './zip.js';

/** The two SciFact files the adapter reads. */
export interface SciFactFiles {
  /** `corpus_train.csv`: doc_id, title, abstract (a Python list literal of sentences), structured. */
  readonly corpusCsv: string;
  /** `claims_validation.csv`: id, claim, …, cited_doc_ids (`[1 2]`-style id lists). */
  readonly claimsCsv: string;
  /** `claims_train.csv` when the archive has it (same columns): the `dev` split. */
  readonly trainClaimsCsv?: string;
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

/** Extracts `corpus_train.csv`, `claims_validation.csv` and (when present) `claims_train.csv` from the zip. */
export function readSciFactZip(archive: Buffer): SciFactFiles {
  const entries = readZip(archive);
  const entry = (name: string) => entries.find((e) => e.name === name || e.name.endsWith(`/${name}`));
  const find = (name: string): string => {
    const found = entry(name);
    if (found === undefined) {
      throw new EngramEvalError('ENGRAM_EVAL_INVALID_DATASET', `SciFact: the archive has no ${name}.`);
    }
    return found.data.toString('utf8');
  };
  const train = entry('claims_train.csv');
  return {
    corpusCsv: find('corpus_train.csv'),
    claimsCsv: find('claims_validation.csv'),
    ...(train === undefined ? {} : { trainClaimsCsv: train.data.toString('utf8') }),
  };
}

/** Options of {@link scifactToFixture}. */
export interface SciFactOptions {
  /**
   * `all` (default) and `test`: the validation claims, the benchmark BEIR reports on. `dev`: the train claims
   * when the archive has them, else the validation claims with an even id (and `test` those with an odd id).
   */
  readonly split?: DatasetSplit;
}

/**
 * Turns SciFact into a fixture: one agent, one `fact` row per abstract (title, then the abstract's
 * sentences joined by spaces), one query per distinct claim id with the union of its `cited_doc_ids` that
 * exist in the corpus; claims left without any are skipped (counted in `stats`). The corpus is the same in
 * every split; the split chooses the claims (see {@link SciFactOptions}).
 */
export function scifactToFixture(files: SciFactFiles, options: SciFactOptions = {}): DatasetFixture {
  const split = options.split ?? 'all';
  const hasTrain = files.trainClaimsCsv !== undefined;
  const claimsFile = split === 'dev' && hasTrain ? 'claims_train.csv' : 'claims_validation.csv';
  const claimsCsv = split === 'dev' && hasTrain ? (files.trainClaimsCsv as string) : files.claimsCsv;
  // Without a train file, dev and test halve the validation claims by the parity of their id.
  const keepClaim = (id: string): boolean =>
    hasTrain || split === 'all' ? true : (Number.parseInt(id, 10) % 2 === 0) === (split === 'dev');
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
  for (const record of parseCsvRecords(claimsCsv)) {
    const id = column(record, 'id', claimsFile).trim();
    if (!keepClaim(id)) continue;
    const text = column(record, 'claim', claimsFile);
    let claim = claims.get(id);
    if (claim === undefined) {
      claim = { text, relevant: [] };
      claims.set(id, claim);
    }
    for (const doc of column(record, 'cited_doc_ids', claimsFile).match(/\d+/g) ?? []) {
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
      name: splitName('scifact', split),
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
