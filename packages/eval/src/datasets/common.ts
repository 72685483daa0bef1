import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import type { FixtureVectorProfile, RetrievalFixture } from '../fixture.js';

/** The vector profile dataset fixtures are run with: the deterministic embedder's. */
export const DETERMINISTIC_VECTOR_PROFILE: FixtureVectorProfile = Object.freeze({
  id: DETERMINISTIC_PROFILE.id,
  dimensions: DETERMINISTIC_PROFILE.dimensions,
  normalized: true,
});

/** A dataset turned into a fixture, with counts of what the adapter repaired or dropped. */
export interface DatasetFixture {
  readonly fixture: RetrievalFixture;
  /** Named counts (rows, queries, skipped questions …), for the CLI's progress output and the README. */
  readonly stats: Readonly<Record<string, number>>;
}

/**
 * The datasets `eval:dataset` knows (`locomo-sessions`: LoCoMo with one document per session; `locomo-long`:
 * five sessions per document, every conversation in one agent).
 */
export const DATASET_NAMES: readonly ['locomo', 'scifact', 'cmrc', 'locomo-sessions', 'locomo-long'] = [
  'locomo',
  'scifact',
  'cmrc',
  'locomo-sessions',
  'locomo-long',
] as const;
/** One dataset name. */
export type DatasetName = (typeof DATASET_NAMES)[number];

/**
 * The splits of a dataset: `dev` to set parameters on, `test` to report on, `all` (the default) the whole
 * benchmark. Each adapter documents its rule; every rule is deterministic (file order or ids).
 */
export const DATASET_SPLITS: readonly ['dev', 'test', 'all'] = ['dev', 'test', 'all'] as const;
/** One split. */
export type DatasetSplit = (typeof DATASET_SPLITS)[number];

/** True when `name` is one of {@link DATASET_SPLITS}. */
export function isDatasetSplit(name: string): name is DatasetSplit {
  return (DATASET_SPLITS as readonly string[]).includes(name);
}

/** The fixture name of a split: the dataset's name, suffixed with `-dev` / `-test` (nothing for `all`). */
export function splitName(name: string, split: DatasetSplit): string {
  return split === 'all' ? name : `${name}-${split}`;
}
