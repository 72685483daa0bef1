import { existsSync } from 'node:fs';
import { isZeroVector } from '@engram/embedder-deterministic';
import {
  createRetriever,
  type Reranker,
  type RetrievalArms,
  type RetrievalObserver,
  type Retriever,
} from '@engram/retrieval';
import { CHUNK_BUDGET, type EmbeddingOutcome, type NewMemory, type StoreObserver } from '@engram/store';
import { createPostgresMemoryStore, type PostgresMemoryStore } from '@engram/store-postgres';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import { bm25Rankings } from './bm25.js';
import { DETERMINISTIC_VECTOR_PROFILE } from './datasets/common.js';
import { createEvalEmbedder, createVectorSource, type EvalEmbedder, type VectorSource } from './embedders.js';
import { EngramEvalError } from './errors.js';
import { fixtureSubsets, type RetrievalFixture } from './fixture.js';
import { scoreRanking } from './metrics.js';
import {
  REPORT_VERSION,
  RETRIEVER_VARIANTS,
  type RetrievalReport,
  type RetrieverVariantName,
  type ScoredQuery,
  summarizeVariant,
  type VariantName,
  type VariantReport,
} from './report.js';
import type { VectorCache } from './vector-cache.js';

/** Results asked per query: enough for MRR@10 and nDCG@10. */
export const RANKING_DEPTH = 10;
/** Rows per insert transaction by default. */
export const DEFAULT_INSERT_BATCH = 500;
/** Default clock of a run when no row carries `createdAt`: 2025-06-01T00:00:00Z. */
export const DEFAULT_RUN_EPOCH: number = Date.UTC(2025, 5, 1);

/** One progress step of a run (counts only, never content). */
export type RunProgress =
  | { readonly phase: 'load'; readonly done: number; readonly total: number }
  | { readonly phase: 'query'; readonly variant: VariantName; readonly done: number; readonly total: number };

/** Retriever knobs a run may override (everything else is the production default). */
export interface RunRetrieverOptions {
  readonly similarityThreshold?: number;
  readonly candidateBudget?: number;
  readonly fusion?: {
    readonly k?: number;
    readonly lexical?: number;
    readonly vector?: number;
    readonly importance?: number;
    readonly recency?: number;
  };
  /** Conversation scoring of the lexical arm (`false` off; see `@engram/retrieval`). */
  readonly conversation?:
    | { readonly neighbour?: number; readonly session?: number; readonly depth?: number }
    | false;
  /** The long-memory prior of the lexical arm (`false` off; see `@engram/retrieval`). */
  readonly longMemory?: { readonly weight?: number } | false;
  /** The vector arm's margin evidence (`false` off; see `@engram/retrieval`). */
  readonly vectorEvidence?:
    | { readonly noiseMargin?: number; readonly fullMargin?: number; readonly depth?: number }
    | false;
}

/** Configuration of {@link runFixture}. */
export interface RunFixtureConfig {
  readonly fixture: RetrievalFixture;
  /**
   * Store location: `':memory:'` (default) or the path of a file that does not exist yet (an existing one is
   * refused: its rows would mix into the figures).
   */
  readonly storePath?: string;
  /**
   * A PostgreSQL store instead (`postgres://…`, see `@engram/store-postgres`): its database must hold no memory
   * yet (rows of another run would mix into the figures). Excludes `storePath`.
   */
  readonly storeUrl?: string;
  /** The deterministic embedder's synonym-concept features (default `true`; `false` is the ablation). */
  readonly conceptFeatures?: boolean;
  /**
   * The embedder to run with, and its name in the report (e.g. `use`). Without it the run uses the
   * deterministic embedder and refuses a fixture declaring another vector profile; with it, the fixture's
   * declared profile is not enforced (a fixture holds no vectors), which is how another embedder is measured
   * on the same fixture.
   */
  readonly embedder?: { readonly name: string; readonly embedder: EvalEmbedder };
  /** On-disk vectors of the embedder's profile: hits are not embedded again, misses are appended. */
  readonly vectorCache?: VectorCache;
  /**
   * Arms of the `hybrid` variant (default both). Dropping one breaks fusion on purpose: the gate's own test
   * uses it to prove the gate fails.
   */
  readonly hybridArms?: RetrievalArms;
  /** Rows per insert transaction (default 500). */
  readonly batchSize?: number;
  /** The run's clock in epoch ms (default: one day after the newest `createdAt`, or 2025-06-01). */
  readonly now?: number;
  /**
   * A rerank stage for every variant of the production retriever (see `@engram/retrieval`'s `rerank`), and its
   * name in the report. A query whose rerank timed out or failed fails the run: its figures would measure the
   * fused order.
   */
  readonly rerank?: {
    readonly name: string;
    readonly model: Reranker;
    readonly candidates?: number;
    readonly timeoutMs?: number;
  };
  /** Retriever overrides, for investigation only; the gate runs the defaults. */
  readonly retriever?: RunRetrieverOptions;
  /** The store's BM25 settings (default the store's), for investigation only. */
  readonly lexical?: { readonly k1?: number; readonly b?: number };
  /** Store statement observer (perf tests count statements through it). */
  readonly storeObserver?: StoreObserver;
  /** Retrieval observer, called once per query of every variant. */
  readonly retrievalObserver?: RetrievalObserver;
  /** Called after each insert batch and each query (counts only). */
  readonly onProgress?: (progress: RunProgress) => void;
}

/** The arms of each variant. */
export const VARIANT_ARMS: Readonly<Record<RetrieverVariantName, RetrievalArms>> = Object.freeze({
  fts: Object.freeze({ lexical: true, vector: false }),
  vector: Object.freeze({ lexical: false, vector: true }),
  hybrid: Object.freeze({ lexical: true, vector: true }),
});

// Degradations that mean a variant did not run as configured: its figures would measure a fallback.
const INVALIDATING = new Set([
  'embeddingTimeout',
  'embeddingError',
  'embeddingCircuitOpen',
  'storeError',
  'storeTimeout',
  'storeUnusable',
  'ftsUnavailable',
  'rerankTimeout',
  'rerankError',
]);

/**
 * Inserts a fixture's corpus with its vectors (from `vectors`, by default the deterministic embedder), in
 * batches of one transaction each. A row longer than the store's chunk budget is stored in chunks: it is
 * inserted without a vector and its chunks are embedded afterwards, as the embedding drain would.
 */
export async function loadFixture(
  store: Pick<SqliteMemoryStore, 'insertMemories' | 'listPendingEmbeddings' | 'commitEmbeddings'>,
  fixture: RetrievalFixture,
  options: {
    readonly conceptFeatures?: boolean;
    readonly vectors?: VectorSource;
    readonly batchSize?: number;
    readonly createdAt: number;
    readonly onProgress?: (progress: RunProgress) => void;
  },
): Promise<{ readonly rows: number; readonly batches: number; readonly withoutVector: number }> {
  const source =
    options.vectors ??
    createVectorSource(
      (
        await createEvalEmbedder('deterministic', {
          ...(options.conceptFeatures === undefined ? {} : { conceptFeatures: options.conceptFeatures }),
        })
      ).embedder,
    );
  const batchSize = options.batchSize ?? DEFAULT_INSERT_BATCH;
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new EngramEvalError('ENGRAM_EVAL_INVALID_ARGUMENTS', 'batchSize must be an integer ≥ 1.');
  }
  const total = fixture.corpus.length;
  let batches = 0;
  let withoutVector = 0;
  for (let start = 0; start < total; start += batchSize) {
    const slice = fixture.corpus.slice(start, start + batchSize);
    const short = slice.filter((row) => row.content.length <= CHUNK_BUDGET);
    const shortVectors = await source.vectors(short.map((row) => row.content));
    const byRow = new Map(short.map((row, i) => [row, shortVectors[i] as Float32Array]));
    const rows: NewMemory[] = slice.map((row) => {
      const fields = {
        id: row.id,
        agentId: row.agentId,
        kind: row.kind,
        content: row.content,
        importance: row.importance,
        createdAt: row.createdAt ?? options.createdAt,
        ...(row.sessionId === undefined ? {} : { sessionId: row.sessionId }),
        ...(row.seq === undefined ? {} : { seqFrom: row.seq, seqTo: row.seq }),
      };
      const vector = byRow.get(row);
      if (vector === undefined) return fields;
      // A text without features embeds to the zero vector, which cannot be cosine-compared: such a row
      // stays without a vector (lexical search still finds it).
      const zero = isZeroVector(vector);
      if (zero) withoutVector += 1;
      return zero ? fields : { ...fields, vector };
    });
    await store.insertMemories(rows);
    batches += 1;
    options.onProgress?.({ phase: 'load', done: Math.min(start + batchSize, total), total });
  }
  // The chunks of long rows, embedded batch by batch like the drain (zero vectors: lexical only).
  for (;;) {
    const pending = await store.listPendingEmbeddings({ limit: batchSize });
    if (pending.length === 0) break;
    const vectors = await source.vectors(pending.map((p) => p.content));
    const committed = await store.commitEmbeddings(
      pending.map((p, i): EmbeddingOutcome => {
        const vector = vectors[i] as Float32Array;
        const target = {
          id: p.id,
          revision: p.revision,
          ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
        };
        return isZeroVector(vector) ? { ...target, state: 'ftsOnly' } : { ...target, state: 'ready', vector };
      }),
    );
    if (committed.stale === pending.length) break;
  }
  return { rows: total, batches, withoutVector };
}

function runClock(fixture: RetrievalFixture, now: number | undefined): number {
  if (now !== undefined) return now;
  let newest = Number.NEGATIVE_INFINITY;
  for (const row of fixture.corpus)
    if (row.createdAt !== undefined && row.createdAt > newest) newest = row.createdAt;
  return Number.isFinite(newest) ? newest + 24 * 60 * 60 * 1000 : DEFAULT_RUN_EPOCH;
}

async function runVariant(
  variant: RetrieverVariantName,
  retriever: Retriever,
  fixture: RetrievalFixture,
  onProgress: ((progress: RunProgress) => void) | undefined,
): Promise<VariantReport> {
  const scored: ScoredQuery[] = [];
  const total = fixture.queries.length;
  for (const query of fixture.queries) {
    const response = await retriever.search(query.agentId, query.text, {
      limit: RANKING_DEPTH,
      ...(query.referenceTime === undefined ? {} : { referenceTime: query.referenceTime }),
    });
    const { outcome, degradations } = response.execution;
    const invalid = degradations.filter((d) => INVALIDATING.has(d));
    if (outcome === 'failed' || outcome === 'cancelled' || outcome === 'disabled' || invalid.length > 0) {
      throw new EngramEvalError(
        'ENGRAM_EVAL_RETRIEVAL_FAILED',
        `Variant ${variant}, query ${query.id}: retrieval ended ${outcome}${invalid.length > 0 ? ` (${invalid.join(', ')})` : ''}; the figures would not measure this variant.`,
      );
    }
    const ranked = response.results.map((r) => r.record.id);
    scored.push({ id: query.id, subsets: query.subsets, ranked, ...scoreRanking(ranked, query.relevantIds) });
    onProgress?.({ phase: 'query', variant, done: scored.length, total });
  }
  return summarizeVariant(scored, fixtureSubsets(fixture));
}

function runReference(
  fixture: RetrievalFixture,
  onProgress: ((progress: RunProgress) => void) | undefined,
): VariantReport {
  const rankings = bm25Rankings(fixture, RANKING_DEPTH);
  const scored = fixture.queries.map((query): ScoredQuery => {
    const ranked = rankings.get(query.id) ?? [];
    return { id: query.id, subsets: query.subsets, ranked, ...scoreRanking(ranked, query.relevantIds) };
  });
  const total = fixture.queries.length;
  onProgress?.({ phase: 'query', variant: 'bm25', done: total, total });
  return summarizeVariant(scored, fixtureSubsets(fixture));
}

/**
 * Runs a fixture end to end: a fresh SQLite store bound to the embedder's profile, the corpus inserted with
 * its vectors in batched transactions (each distinct text embedded once, or read from the vector cache),
 * then every query through the production retriever three ways — FTS-only, vector-only, hybrid — and the
 * plain BM25 reference, scored with Recall@5, MRR@10 and nDCG@10 overall and per subset. The store is
 * closed before returning (also on failure).
 */
export async function runFixture(config: RunFixtureConfig): Promise<RetrievalReport> {
  const { fixture } = config;
  const chosen = config.embedder ?? {
    name: 'deterministic',
    embedder: (
      await createEvalEmbedder('deterministic', {
        ...(config.conceptFeatures === undefined ? {} : { conceptFeatures: config.conceptFeatures }),
      })
    ).embedder,
  };
  const source = createVectorSource(chosen.embedder, config.vectorCache);
  const embedder = source.port;
  const expected = DETERMINISTIC_VECTOR_PROFILE;
  if (
    config.embedder === undefined &&
    (fixture.vectorProfile.id !== expected.id ||
      fixture.vectorProfile.dimensions !== expected.dimensions ||
      fixture.vectorProfile.normalized !== expected.normalized)
  ) {
    const describe = (p: typeof expected): string =>
      `${p.id}:${p.dimensions}${p.normalized ? ' (normalized)' : ' (not normalized)'}`;
    throw new EngramEvalError(
      'ENGRAM_EVAL_INVALID_FIXTURE',
      `The fixture is meant for the vector profile ${describe(fixture.vectorProfile)}; this runner embeds with ${describe(expected)}.`,
    );
  }
  if (config.storePath !== undefined && config.storePath !== ':memory:' && existsSync(config.storePath)) {
    // Rows already in the file (other ids of the same agents) would silently join the rankings.
    throw new EngramEvalError(
      'ENGRAM_EVAL_INVALID_ARGUMENTS',
      'The store file already exists; a run needs a fresh file (or the default in-memory store).',
    );
  }
  const now = runClock(fixture, config.now);
  let longest = 0;
  for (const row of fixture.corpus) if (row.content.length > longest) longest = row.content.length;

  const storeConfig = {
    embedding: { id: embedder.profile.id, dimensions: embedder.profile.dimensions },
    now: () => now,
    // External corpora may hold long documents; the cap is a guard for agents, not for a benchmark.
    ...(longest > 65_536 ? { maxContentLength: longest } : {}),
    ...(config.lexical === undefined ? {} : { lexical: stripUndefined(config.lexical) }),
    ...(config.storeObserver === undefined ? {} : { observer: config.storeObserver }),
  };
  const store = await openRunStore(config, storeConfig);
  try {
    await loadFixture(store, fixture, {
      vectors: source,
      ...(config.batchSize === undefined ? {} : { batchSize: config.batchSize }),
      createdAt: now,
      ...(config.onProgress === undefined ? {} : { onProgress: config.onProgress }),
    });

    // Every query is embedded before the timed retriever calls: the query embedder then answers from memory,
    // so a slow embedder cannot hit the retriever's embedding deadline and degrade the figures.
    await source.vectors(fixture.queries.map((q) => q.text));

    const rerank =
      config.rerank === undefined
        ? undefined
        : {
            model: config.rerank.model,
            ...(config.rerank.candidates === undefined ? {} : { candidates: config.rerank.candidates }),
            ...(config.rerank.timeoutMs === undefined ? {} : { timeoutMs: config.rerank.timeoutMs }),
          };
    const variants = {} as Record<VariantName, VariantReport>;
    for (const variant of RETRIEVER_VARIANTS) {
      const arms =
        variant === 'hybrid' && config.hybridArms !== undefined ? config.hybridArms : VARIANT_ARMS[variant];
      const retriever = createRetriever({
        store,
        embedder,
        arms,
        now: () => now,
        // Evaluation reads only: no access bookkeeping writes between queries.
        trackAccess: false,
        ...(config.retrievalObserver === undefined ? {} : { observer: config.retrievalObserver }),
        ...(rerank === undefined ? {} : { rerank }),
        ...(config.retriever?.similarityThreshold === undefined
          ? {}
          : { similarityThreshold: config.retriever.similarityThreshold }),
        ...(config.retriever?.candidateBudget === undefined
          ? {}
          : { candidateBudget: config.retriever.candidateBudget }),
        ...(config.retriever?.fusion === undefined
          ? {}
          : { fusion: stripUndefined(config.retriever.fusion) }),
        ...(config.retriever?.conversation === undefined
          ? {}
          : {
              conversation:
                config.retriever.conversation === false
                  ? false
                  : stripUndefined(config.retriever.conversation),
            }),
        ...(config.retriever?.longMemory === undefined
          ? {}
          : {
              longMemory:
                config.retriever.longMemory === false ? false : stripUndefined(config.retriever.longMemory),
            }),
        ...(config.retriever?.vectorEvidence === undefined
          ? {}
          : {
              vectorEvidence:
                config.retriever.vectorEvidence === false
                  ? false
                  : stripUndefined(config.retriever.vectorEvidence),
            }),
      });
      variants[variant] = await runVariant(variant, retriever, fixture, config.onProgress);
    }
    variants.bm25 = runReference(fixture, config.onProgress);

    return {
      version: REPORT_VERSION,
      fixture: { name: fixture.name, version: fixture.version },
      vectorProfile: fixture.vectorProfile,
      embedder: { name: chosen.name, id: source.profile.id, dimensions: source.profile.dimensions },
      vectors: source.counts(),
      ...(config.rerank === undefined
        ? {}
        : {
            rerank: {
              name: config.rerank.name,
              ...(config.rerank.model.id === undefined ? {} : { id: config.rerank.model.id }),
            },
          }),
      variants,
    };
  } finally {
    await store.close();
  }
}

/**
 * The store of a run: SQLite (`storePath`, in memory by default) or PostgreSQL (`storeUrl`, an empty
 * database). Both are closed by the caller.
 */
async function openRunStore(
  config: RunFixtureConfig,
  storeConfig: {
    readonly embedding: { readonly id: string; readonly dimensions: number };
    readonly now: () => number;
    readonly maxContentLength?: number;
    readonly lexical?: { readonly k1?: number; readonly b?: number };
    readonly observer?: StoreObserver;
  },
): Promise<SqliteMemoryStore | PostgresMemoryStore> {
  if (config.storeUrl === undefined) {
    return createSqliteMemoryStore({ path: config.storePath ?? ':memory:', ...storeConfig });
  }
  if (config.storePath !== undefined) {
    throw new EngramEvalError(
      'ENGRAM_EVAL_INVALID_ARGUMENTS',
      'A run takes a store file or a store URL, not both.',
    );
  }
  const store = await createPostgresMemoryStore({ connectionString: config.storeUrl, ...storeConfig });
  if ((await store.listAgents()).length > 0) {
    await store.close();
    throw new EngramEvalError(
      'ENGRAM_EVAL_INVALID_ARGUMENTS',
      'The PostgreSQL database already holds memories; a run needs an empty database.',
    );
  }
  return store;
}

function stripUndefined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]: Exclude<T[K], undefined>;
  };
}
