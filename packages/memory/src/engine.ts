/**
 * The composition under the facade: opens the store — a SQLite file, or a PostgreSQL database for a URL
 * (`open-store.ts`) — with its embedder (the one it records; for a new one the one asked for, else the offline
 * USE-lite embedder) and wires the retriever, the memory tools,
 * the diagnostics collector, event ingestion, the embedding drain, extraction and maintenance passes — every
 * producer reporting to the one collector. The facade (`memory.ts`) is built on it; a CLI or a server can be
 * too (`@engram/memory/compose`).
 */
import {
  createDiagnosticsCollector,
  createHealthDto,
  type DiagnosticsCollector,
  type HealthDto,
} from '@engram/diagnostics';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createUseEmbedder } from '@engram/embedder-use';
import {
  createEmbeddingDrain,
  createEventIngestor,
  createExtractor,
  createMaintenanceRunner,
  type EmbedderPort,
  type EmbeddingDrain,
  type EventIngestor,
  type Extractor,
  type MaintenanceRunner,
  type ModelPort,
} from '@engram/maintenance';
import { createRetriever, type Retriever } from '@engram/retrieval';
import type { VectorIndexOptions, VectorIndexProgress } from '@engram/store';
import { redactPostgresUrl } from '@engram/store-postgres/open';
import { createToolHandler, type ToolHandler } from '@engram/tools';
import { EngramMemoryError, engramErrorCode } from './errors.js';
import { type EngineStore, openEngineStore, vectorIndexOr } from './open-store.js';
import { englishQueries, gatedRetriever } from './query-side.js';

/** The built-in embedders by name, or any embedder object (an OpenAI-compatible one, your own). */
export type EmbedderOption = 'use' | 'deterministic' | EmbedderPort;

/** Construction of {@link openEngine}. */
export interface EngineConfig {
  /**
   * Path of the SQLite file (its directory is created when missing), or the URL of a PostgreSQL database
   * (`postgres://…` or `postgresql://…`; `@engram/store-postgres` is loaded only then).
   */
  readonly path: string;
  /**
   * The embedder of a new file or database (default `'use'`); an existing one must be given the one it records,
   * or none.
   */
  readonly embedder?: EmbedderOption;
  /** A chat model for extraction and the maintenance passes' model steps (default: none). */
  readonly model?: ModelPort | null;
  /**
   * The SQLCipher key of an encrypted file; handed to the store only, never logged or put in an error. A
   * PostgreSQL URL refuses it (`ENGRAM_MEMORY_INVALID_CONFIG`).
   */
  readonly encryptionKey?: string | Uint8Array;
  /** The SQLite store's vector index (quantised search); a PostgreSQL URL refuses it (`ENGRAM_MEMORY_INVALID_CONFIG`). */
  readonly vectorIndex?: VectorIndexOptions;
  /** Progress of a quantised vector index build at open (SQLite only; see the store's `onIndexProgress`). */
  readonly onIndexProgress?: (progress: VectorIndexProgress) => void;
  /** The id of each new memory (default: the store's time-ordered UUID). */
  readonly idFactory?: () => string;
}

/** Totals of a full drain (every run until the backlog is empty or a run makes no progress). */
export interface DrainTotals {
  readonly rows: number;
  readonly ready: number;
  readonly error: number;
  /** Pending rows left (for the agent, or in total); null when the count failed. */
  readonly backlog: number | null;
}

/** The wired memory system of one file or database. */
export interface Engine {
  /** The file path, or the PostgreSQL URL with its password masked. */
  readonly path: string;
  readonly store: EngineStore;
  readonly collector: DiagnosticsCollector;
  readonly retriever: Retriever;
  readonly tools: ToolHandler;
  readonly ingestor: EventIngestor;
  readonly extractor: Extractor;
  readonly runner: MaintenanceRunner;
  /** The embedder rows are embedded with (its profile is the one the file records). */
  readonly embedder: EmbedderPort;
  /** Whether a chat model is configured. */
  readonly hasModel: boolean;
  /** Loads the embedder's model once; never rejects (a failed load leaves search lexical-only). */
  warmUp(): Promise<void>;
  /** Embeds pending rows (one agent's, or all) until none are left, a run makes no progress, or `signal` aborts. */
  drain(options?: { readonly agentId?: string; readonly signal?: AbortSignal }): Promise<DrainTotals>;
  /**
   * A store error of a vector write (embedding, delete) as the facade reports it: the file's vector index
   * quantization changed by another connection since this memory was opened with another one is
   * `ENGRAM_MEMORY_VECTOR_INDEX_MISMATCH`; anything else as is.
   */
  storeError(error: unknown): unknown;
  /**
   * After a search whose vector arm the store refused (`storeUnusable`): rejects with that facade error when the
   * store is refused for its vector index now; resolves otherwise (the answer stands as degraded).
   */
  checkVectorIndex(): Promise<void>;
  /** The health DTO of one agent, or of every agent when null. */
  health(agentId: string | null): Promise<HealthDto>;
  /** Closes the store (idempotent). */
  close(): Promise<void>;
}

/** The drain-side and query-side embedders of a choice, and how to load its model. */
function embedders(choice: EmbedderOption): {
  readonly drain: EmbedderPort;
  readonly query: EmbedderPort;
  readonly load: () => Promise<unknown>;
} {
  if (choice === 'use') {
    const use = createUseEmbedder();
    // The first inference after the load is slow too: run one, so the first query meets its deadline.
    return {
      drain: use,
      query: englishQueries(use),
      load: () => use.load().then(() => use.embed(['warm up'])),
    };
  }
  const embedder = choice === 'deterministic' ? createDeterministicEmbedder() : choice;
  return { drain: embedder, query: embedder, load: () => Promise.resolve() };
}

/**
 * Opens (or creates) a file or a PostgreSQL database and wires every package around it. Throws a typed error
 * when it cannot be opened, records another embedder than the one given, or is given an option its kind of
 * store does not take.
 */
export async function openEngine(config: EngineConfig): Promise<Engine> {
  const collector = createDiagnosticsCollector();
  const { store, choice } = await openEngineStore(config, collector);
  const { drain: drainEmbedder, query: queryEmbedder, load } = embedders(choice);
  let warming: Promise<void> | null = null;
  const warmUp = (): Promise<void> => {
    warming ??= load().then(
      () => undefined,
      () => undefined,
    );
    return warming;
  };

  const model = config.model ?? null;
  const retriever = gatedRetriever(
    createRetriever({ store, embedder: queryEmbedder, observer: collector.retrievalObserver }),
    warmUp,
  );
  const innerTools = createToolHandler({ store, retriever, embedder: queryEmbedder });
  const tools: ToolHandler = {
    definitions: innerTools.definitions,
    execute: async (name, args, ctx) => {
      await warmUp();
      return innerTools.execute(name, args, ctx);
    },
  };
  const observer = collector.maintenanceObserver;
  const drainer: EmbeddingDrain = createEmbeddingDrain({ store, embedder: drainEmbedder, observer });

  async function drain(
    options: { readonly agentId?: string; readonly signal?: AbortSignal } = {},
  ): Promise<DrainTotals> {
    const { agentId, signal } = options;
    await warmUp();
    const totals = { rows: 0, ready: 0, error: 0 };
    let backlog: number | null = null;
    for (;;) {
      if (signal?.aborted === true) break;
      const result = await drainer.run({
        ...(agentId === undefined ? {} : { agentId }),
        ...(signal === undefined ? {} : { signal }),
      });
      totals.rows += result.rows;
      totals.ready += result.transitions.ready;
      totals.error += result.transitions.error;
      backlog = result.backlog;
      // Rows that keep failing stay in the backlog: stop once a run makes no progress.
      if (result.rows === 0 || result.outcome !== 'completed' || backlog === null || backlog === 0) break;
    }
    return { ...totals, backlog };
  }

  const asked = config.vectorIndex?.quantization;
  const storeError = (error: unknown): unknown => vectorIndexOr(error, asked, 'changed');

  let closed = false;
  return {
    path: redactPostgresUrl(config.path),
    store,
    collector,
    retriever,
    tools,
    ingestor: createEventIngestor({ store }),
    extractor: createExtractor({ store, retriever, model, observer }),
    // The rows a pass writes (merged rows, reflections, personas) are embedded before the pass ends.
    runner: createMaintenanceRunner({ store, retriever, model, drain: drainer, observer }),
    embedder: drainEmbedder,
    hasModel: model !== null,
    warmUp,
    drain,
    storeError,
    async checkVectorIndex(): Promise<void> {
      if (!('refreshVectorIndex' in store)) return;
      try {
        await store.refreshVectorIndex();
      } catch (error) {
        // Only the vector index refusal turns the degraded answer into an error; anything else leaves it as is.
        if (engramErrorCode(error) === 'ENGRAM_STORE_VECTOR_INDEX_MISMATCH') throw storeError(error);
      }
    },
    async health(agentId: string | null): Promise<HealthDto> {
      const answer = await store.health(agentId ?? undefined);
      if (!answer.ok) {
        throw new EngramMemoryError(
          'ENGRAM_MEMORY_STORE_FAILED',
          `the store cannot report its health (${answer.code})`,
        );
      }
      const snapshot = agentId === null ? collector.snapshot() : collector.snapshot(agentId);
      return createHealthDto(answer.health, snapshot);
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await store.close();
    },
  };
}
