import { readFile } from 'node:fs/promises';
import { EngramEvalError } from '../errors.js';
import { cmrcToFixture } from './cmrc.js';
import { DATASET_NAMES, type DatasetFixture, type DatasetName, type DatasetSplit } from './common.js';
import { locomoToFixture } from './locomo.js';
import { locomoLongToFixture } from './locomo-long.js';
import { readSciFactZip, scifactToFixture } from './scifact.js';

/** True when `name` is one of {@link DATASET_NAMES}. */
export function isDatasetName(name: string): name is DatasetName {
  return (DATASET_NAMES as readonly string[]).includes(name);
}

async function readJson(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new EngramEvalError('ENGRAM_EVAL_INVALID_DATASET', 'The dataset file is not valid JSON.', {
      cause: error,
    });
  }
}

/**
 * Reads a dataset file from disk (LoCoMo and CMRC JSON, the SciFact zip) and turns it into a fixture of the
 * given split (default `all`; each adapter documents its rule).
 */
export async function loadDataset(
  name: DatasetName,
  path: string,
  options: { readonly split?: DatasetSplit } = {},
): Promise<DatasetFixture> {
  const split = options.split ?? 'all';
  switch (name) {
    case 'locomo':
      return locomoToFixture(await readJson(path), { split });
    case 'locomo-sessions':
      return locomoToFixture(await readJson(path), { split, granularity: 'session' });
    case 'locomo-long':
      return locomoLongToFixture(await readJson(path), { split });
    case 'cmrc':
      return cmrcToFixture(await readJson(path), { split });
    case 'scifact':
      return scifactToFixture(readSciFactZip(await readFile(path)), { split });
  }
}
