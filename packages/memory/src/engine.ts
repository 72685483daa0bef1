/**
 * The composition root: the only module that wires a store — a SQLite file, or a PostgreSQL database for a URL
 * (`open-store.ts`) — with its embedder (the one it records; for a new one the one asked for, else the one the
 * environment configures, else the offline USE-lite embedder), the retriever, the memory tools, the diagnostics
 * collector, event ingestion, the embedding drain, extraction and maintenance passes — every producer reporting
 * to the one collector. The facade (`memory.ts`) is built on it, and so are the CLI, its MCP server and its demo
 * (`@engram/memory/compose`). What a caller may not need (the PostgreSQL store and `pg`, the maintenance layer)
 * is imported when first needed, so a one-shot search loads only the store, retrieval and its embedder.
 */
import {
  createDiagnosticsCollector,
  createHealthDto,
  type DiagnosticsCollector,
  type HealthDto,
} from '@engram/diagnostics';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createUseEmbedder, createUseEmbedderPool, MAX_USE_THREADS } from '@engram/embedder-use';
import type {
  EmbedderPort,
  EmbeddingDrain,
  EventIngestor,
  ExtractionResult,
  ExtractionTurn,
  Extractor,
  MaintenancePassResult,
  MaintenanceRunner,
  ModelPort,
} from '@engram/maintenance';
import {
  createRetriever,
  isEngramRetrievalError,
  type RerankConfig,
  type Retriever,
} from '@engram/retrieval';
import type { EventRecord, VectorIndexOptions, VectorIndexProgress } from '@engram/store';
import { createToolHandler, type ToolHandler } from '@engram/tools';
import { type ProcessBeatOption, processBeatSettings, startProcessBeats } from './beats.js';
import { type DrainProgress, type DrainSummary, drainAll } from './drain.js';
import { type EmbedderChoice, profileLabel } from './embedder-choice.js';
import { EngramMemoryError, engramErrorCode } from './errors.js';
import { type EngineStore, openEngineStore, optionRule, vectorIndexOr } from './open-store.js';
import { displayPath } from './postgres-module.js';
import { type EnvProvider, loadMaintenance, providerFromEnv } from './providers.js';
import { englishQueries, gatedRetriever } from './query-side.js';

export type { DrainProgress, DrainSummary, DrainTotals } from './drain.js';

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
   * The embedder of a new file or database (default `'use'`, or with `env` the one it configures); an existing
   * one must be given the one it records, or none. `'openai'` (with `env` only) is the OpenAI-compatible
   * embedder the environment configures.
   */
  readonly embedder?: EmbedderOption | 'openai';
  /** A chat model for extraction and the maintenance passes' model steps (default: none, or with `env` its own). */
  readonly model?: ModelPort | null;
  /**
   * Environment variables to configure from: `ENGRAM_EMBEDDER` (`use`, `deterministic` or `openai`; the
   * `embedder` option wins) and an OpenAI-compatible provider (`ENGRAM_OPENAI_*`: its embedder and chat model,
   * behind one gateway with request limits). Default: none. Errors name the variable, never its value.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * `read`: the store opens read-only — nothing is created, converted or migrated, no write lock is taken, and
   * writes reject with `ENGRAM_STORE_READ_ONLY`. `write` (default): the store may create the file, migrate it
   * and write.
   */
  readonly access?: 'read' | 'write';
  /**
   * Start loading the embedder's model at once, in the background. Without it the model loads on the first
   * search, tool call or drain.
   */
  readonly warm?: boolean;
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
  /** A rerank stage after fusion (off by default; see `@engram/retrieval`'s `RerankConfig`). */
  readonly rerank?: RerankConfig;
  /**
   * Process beats (`beats.ts`): a store opened for writing publishes this process's content-free diagnostics
   * every `intervalMs` when they changed (default 2 s, or `ENGRAM_PROCESS_BEAT_MS` in `env`; 50 ms to 60 s),
   * so a health page served by any process shows every process. `false` publishes nothing.
   */
  readonly processBeat?: ProcessBeatOption;
  /**
   * Worker threads of the USE-lite embedder (`'use'` only; ignored for any other): the drain, bulk ingest and
   * `add` embed on them, each with its own model instance, and concurrent calls share batches. Default: the
   * machine's cores less one, at least 1; `0` embeds on the caller's thread; at most 64.
   */
  readonly threads?: number;
}

/** What {@link Engine.drain} takes. */
export interface DrainOptions {
  /** One agent's rows (default: every agent's, each batch reported under its own agent). */
  readonly agentId?: string;
  /** Stops the drain after its current batch. */
  readonly signal?: AbortSignal;
  /** Rows done and rows expected so far. */
  readonly onProgress?: DrainProgress;
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
  /** Which embedder by name (`use`, `deterministic`, `openai`), or null for an embedder object given. */
  readonly embedderChoice: EmbedderChoice | null;
  /** The embedder's profile id and dimensions, e.g. `use-lite-512-v1 (512 d)`. */
  readonly embedderLabel: string;
  /** Whether a chat model is configured. */
  readonly hasModel: boolean;
  /** The chat model's name, or null when none is configured (the heavy phase and extraction are skipped). */
  readonly modelLabel: string | null;
  /**
   * Loads the embedder's model once (later calls return the same promise) and never rejects: a failed load
   * leaves search lexical-only and drained rows in error. Searches and tool calls wait for it.
   */
  warmUp(): Promise<void>;
  /**
   * Embeds pending rows (one agent's, or all) run after run until none are left, a run makes no progress or
   * stops early, or `signal` aborts; at least one run, so the process-wide backlog gauge is reported.
   */
  drain(options?: DrainOptions): Promise<DrainSummary>;
  /** One maintenance pass for an agent. */
  maintain(
    agentId: string,
    options?: { readonly force?: boolean; readonly dryRun?: boolean },
  ): Promise<MaintenancePassResult>;
  /** Runs extraction over archived events of one session (recorded as `skipped` without a model). */
  extract(events: readonly EventRecord[]): Promise<ExtractionResult | null>;
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
  /**
   * The health DTO: store counts, every live process using the store (`processes`, this one included) and the
   * runtime figures — the totals over those processes when `agentId` is null, else this process's figures of
   * that agent.
   */
  health(agentId: string | null): Promise<HealthDto>;
  /** This process's random id, as its beats and the health DTO name it. */
  readonly processId: string;
  /** Agents with at least one memory or event. */
  listAgents(): Promise<readonly string[]>;
  /** Closes the store (idempotent). */
  close(): Promise<void>;
}

/** The drain-side and query-side embedders of a choice, and how to load its model. */
interface Embedders {
  readonly drain: EmbedderPort;
  readonly query: EmbedderPort;
  readonly load: () => Promise<unknown>;
  /** Stops what the embedder runs (worker threads). */
  readonly close: () => Promise<void>;
  /** Rows per drain batch, when not the drain's default: enough for every worker thread to get a full batch. */
  readonly drainBatch?: number;
}

const nothingToClose = (): Promise<void> => Promise.resolve();

/** `threads` as given: an integer from 0 to 64, or undefined for the default. */
function checkThreads(threads: unknown): number | undefined {
  if (threads === undefined) return undefined;
  if (typeof threads !== 'number' || !Number.isInteger(threads) || threads < 0 || threads > MAX_USE_THREADS) {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_INVALID_CONFIG',
      `threads must be an integer from 0 to ${MAX_USE_THREADS}`,
    );
  }
  return threads;
}

function embedders(
  choice: EmbedderOption | 'openai',
  provider: EnvProvider | null,
  threads: number | undefined,
): Embedders {
  if (choice === 'use' && threads !== 0) {
    // Worker threads: the drain, bulk ingest and `add` queue their texts; a search query goes first.
    const pool = createUseEmbedderPool(threads === undefined ? {} : { threads });
    const urgent: EmbedderPort = {
      profile: pool.profile,
      embed: (texts, options) => pool.embed(texts, { ...options, urgent: true }),
    };
    return {
      drain: pool,
      query: englishQueries(urgent),
      // One worker is enough for queries and `add` (it runs one inference after its load, so the first query
      // meets its deadline); the others start, each with its own model, when drain batches wait for them.
      load: () => pool.load({ threads: 1 }),
      close: () => pool.close(),
      drainBatch: Math.min(1_000, Math.max(64, pool.maxBatchSize * pool.threads)),
    };
  }
  if (choice === 'use') {
    const use = createUseEmbedder();
    // The first inference after the load is slow too: run one, so the first query meets its deadline.
    return {
      drain: use,
      query: englishQueries(use),
      load: () => use.load().then(() => use.embed(['warm up'])),
      close: nothingToClose,
    };
  }
  if (choice === 'openai') {
    // `chooseEmbedder` picks `openai` only when the environment configures an embedder.
    const remote = provider?.remote;
    if (remote === undefined || remote === null) {
      throw new EngramMemoryError(
        'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
        "the embedder 'openai' is the one an environment configures (ENGRAM_OPENAI_EMBEDDING_MODEL and ENGRAM_OPENAI_EMBEDDING_DIMENSIONS in env)",
      );
    }
    return { ...remote, load: () => Promise.resolve(), close: nothingToClose };
  }
  const embedder = choice === 'deterministic' ? createDeterministicEmbedder() : choice;
  return { drain: embedder, query: embedder, load: () => Promise.resolve(), close: nothingToClose };
}

/** The background parts of an {@link Engine}, built on first use. */
interface Background {
  readonly ingestor: EventIngestor;
  readonly extractor: Extractor;
  readonly drainer: EmbeddingDrain;
  readonly runner: MaintenanceRunner;
}

/** The store and its embedder: by the environment's rule with `env`, else by the embedder option. */
async function openWired(
  config: EngineConfig,
  collector: DiagnosticsCollector,
): Promise<{
  readonly store: EngineStore;
  readonly choice: EmbedderOption | 'openai';
  readonly provider: EnvProvider | null;
}> {
  const asked = config.embedder;
  const provider =
    config.env === undefined
      ? null
      : await providerFromEnv(config.env, typeof asked === 'string' ? asked : undefined, collector);
  if (provider !== null && typeof asked !== 'object') {
    return { ...(await openEngineStore(config, provider.rule, collector)), provider };
  }
  if (asked === 'openai') {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_INVALID_CONFIG',
      "embedder 'openai' is the one an environment configures: pass env with ENGRAM_OPENAI_EMBEDDING_MODEL and ENGRAM_OPENAI_EMBEDDING_DIMENSIONS",
    );
  }
  return { ...(await openEngineStore(config, optionRule(asked), collector)), provider };
}

/**
 * Opens (or creates) a file or a PostgreSQL database and wires every package around it. Throws a typed error
 * when it cannot be opened, records another embedder than the one given (or one not available here), is given
 * an option its kind of store does not take, or the provider environment is invalid.
 */
export async function openEngine(config: EngineConfig): Promise<Engine> {
  const beatSettings = processBeatSettings(config.processBeat, config.env);
  const threads = checkThreads(config.threads);
  const collector = createDiagnosticsCollector();
  const { store, choice, provider } = await openWired(config, collector);
  let wired: Embedders;
  try {
    wired = embedders(choice, provider, threads);
  } catch (error) {
    await store.close();
    throw error;
  }
  const { drain: drainEmbedder, query: queryEmbedder, load, drainBatch } = wired;
  let warming: Promise<void> | null = null;
  const warmUp = (): Promise<void> => {
    warming ??= load().then(
      () => undefined,
      () => undefined,
    );
    return warming;
  };
  if (config.warm === true) void warmUp();

  const model = config.model ?? provider?.model ?? null;
  // Searches wait for a model that loads; every other embedder is ready at once (nothing to wait for).
  let searcher: Retriever;
  try {
    searcher = createRetriever({
      store,
      embedder: queryEmbedder,
      observer: collector.retrievalObserver,
      ...(config.rerank === undefined ? {} : { rerank: config.rerank }),
    });
  } catch (error) {
    await store.close();
    // The retriever names the invalid setting, never its value.
    throw isEngramRetrievalError(error)
      ? new EngramMemoryError('ENGRAM_MEMORY_INVALID_CONFIG', error.message, { cause: error })
      : error;
  }
  const retriever = gatedRetriever(searcher, warmUp);
  const innerTools = createToolHandler({ store, retriever, embedder: queryEmbedder });
  const tools: ToolHandler = {
    definitions: innerTools.definitions,
    execute: async (name, args, ctx) => {
      await warmUp();
      return innerTools.execute(name, args, ctx);
    },
  };
  const observer = collector.maintenanceObserver;
  let progress: DrainProgress | undefined;
  // Event ingestion, extraction, the drain and maintenance passes load with their first use: a one-shot
  // search never loads them.
  let background: Promise<Background> | null = null;
  const parts = (): Promise<Background> => {
    background ??= loadMaintenance().then((m): Background => {
      const drainer = m.createEmbeddingDrain({
        store,
        embedder: drainEmbedder,
        observer,
        ...(drainBatch === undefined ? {} : { batchSize: drainBatch }),
        onProgress: (done, total) => progress?.(done, total),
      });
      return {
        ingestor: m.createEventIngestor({ store }),
        extractor: m.createExtractor({ store, retriever, model, observer }),
        drainer,
        // The rows a pass writes (merged rows, reflections, personas) are embedded before the pass ends.
        runner: m.createMaintenanceRunner({ store, retriever, model, drain: drainer, observer }),
      };
    });
    return background;
  };
  const ingestor: EventIngestor = {
    ingest: async (...args) => (await parts()).ingestor.ingest(...args),
    appendAndIngest: async (...args) => (await parts()).ingestor.appendAndIngest(...args),
    ingestPending: async (...args) => (await parts()).ingestor.ingestPending(...args),
  };
  const extractor: Extractor = {
    extract: async (...args) => (await parts()).extractor.extract(...args),
  };
  const runner: MaintenanceRunner = {
    run: async (...args) => (await parts()).runner.run(...args),
  };

  async function extract(events: readonly EventRecord[]): Promise<ExtractionResult | null> {
    const first = events[0];
    const last = events[events.length - 1];
    if (first === undefined || last === undefined) return null;
    const turns = events
      .filter((e) => e.type === 'message' && e.content.trim() !== '')
      .map(
        (e): ExtractionTurn => ({
          role: e.role === 'user' || e.role === 'assistant' || e.role === 'system' ? e.role : 'tool',
          content: e.content,
        }),
      );
    if (turns.length === 0) return null;
    return extractor.extract({
      agentId: first.agentId,
      sessionId: first.sessionId,
      turns,
      seqFrom: first.seq,
      seqTo: last.seq,
    });
  }

  const asked = config.vectorIndex?.quantization;
  const storeError = (error: unknown): unknown => vectorIndexOr(error, asked, 'changed');
  const path = await displayPath(config.path);

  const beats = startProcessBeats(store, collector, beatSettings, config.access !== 'read');

  let closed = false;
  return {
    path,
    processId: beats.processId,
    store,
    collector,
    retriever,
    tools,
    ingestor,
    extractor,
    runner,
    embedder: drainEmbedder,
    embedderChoice: typeof choice === 'string' ? choice : null,
    embedderLabel: profileLabel(drainEmbedder.profile),
    hasModel: model !== null,
    modelLabel: config.model != null ? config.model.id : (provider?.modelLabel ?? null),
    warmUp,
    drain: (options: DrainOptions = {}) =>
      drainAll(store, options, {
        warmUp,
        run: async (run, onProgress) => {
          const { drainer } = await parts();
          progress = onProgress;
          return drainer.run(run).finally(() => {
            progress = undefined;
          });
        },
      }),
    maintain: (agentId, options = {}) =>
      runner.run(agentId, {
        ...(options.force === true ? { force: true } : {}),
        ...(options.dryRun === true ? { dryRun: true } : {}),
      }),
    extract,
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
        const damaged = answer.integrity?.state === 'failed' ? '; the file failed its integrity check' : '';
        throw new EngramMemoryError(
          'ENGRAM_MEMORY_STORE_FAILED',
          `the store cannot report its health (${answer.code})${damaged}`,
        );
      }
      const { processes, totals } = await beats.read();
      const runtime = agentId === null ? totals : collector.snapshot(agentId);
      return createHealthDto(answer.health, runtime, processes);
    },
    listAgents: () => store.listAgents(),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      // A clean close deletes this process's beat, so the others' pages stop showing it at once.
      await beats.stop();
      try {
        await store.close();
      } finally {
        await wired.close();
      }
    },
  };
}
