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

/** The datasets `eval:dataset` knows. */
export const DATASET_NAMES: readonly ['locomo', 'scifact', 'cmrc'] = ['locomo', 'scifact', 'cmrc'] as const;
/** One dataset name. */
export type DatasetName = (typeof DATASET_NAMES)[number];
