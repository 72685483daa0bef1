/**
 * The composition under the facade: opens the SQLite store, picks the embedder (the one a file records; for a
 * new file the one asked for, else the offline USE-lite embedder) and wires the retriever, the memory tools,
 * the diagnostics collector, event ingestion, the embedding drain, extraction and maintenance passes — every
 * producer reporting to the one collector. The facade (`memory.ts`) is built on it; a CLI or a server can be
 * too (`@engram/memory/compose`).
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  createDiagnosticsCollector,
  createHealthDto,
  type DiagnosticsCollector,
  type HealthDto,
} from '@engram/diagnostics';
import { createDeterministicEmbedder, DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { createUseEmbedder, USE_LITE_PROFILE } from '@engram/embedder-use';
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
import { createRetriever, createToolHandler, type Retriever, type ToolHandler } from '@engram/retrieval';
import { createSqliteMemoryStore, type EmbeddingProfile, type SqliteMemoryStore } from '@engram/store';
import { EngramMemoryError, engramErrorCode } from './errors.js';
import { englishQueries, gatedRetriever } from './query-side.js';

/** The built-in embedders by name, or any embedder object (an OpenAI-compatible one, your own). */
export type EmbedderOption = 'use' | 'deterministic' | EmbedderPort;

/** Construction of {@link openEngine}. */
export interface EngineConfig {
  /** Path of the SQLite file; its directory is created when missing. */
  readonly path: string;
  /** The embedder of a new file (default `'use'`); an existing file must be given the one it records, or none. */
  readonly embedder?: EmbedderOption;
  /** A chat model for extraction and the maintenance passes' model steps (default: none). */
  readonly model?: ModelPort | null;
  /** The SQLCipher key of an encrypted file; handed to the store only, never logged or put in an error. */
  readonly encryptionKey?: string | Uint8Array;
}

/** Totals of a full drain (every run until the backlog is empty or a run makes no progress). */
export interface DrainTotals {
  readonly rows: number;
  readonly ready: number;
  readonly error: number;
  /** Pending rows left (for the agent, or in total); null when the count failed. */
  readonly backlog: number | null;
}

/** The wired memory system of one file. */
export interface Engine {
  readonly path: string;
  readonly store: SqliteMemoryStore;
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
  /** The health DTO of one agent, or of every agent when null. */
  health(agentId: string | null): Promise<HealthDto>;
  /** Closes the store (idempotent). */
  close(): Promise<void>;
}

const BUILT_IN: { readonly use: EmbeddingProfile; readonly deterministic: EmbeddingProfile } = {
  use: USE_LITE_PROFILE,
  deterministic: DETERMINISTIC_PROFILE,
};

function sameProfile(a: EmbeddingProfile, b: EmbeddingProfile): boolean {
  return a.id === b.id && a.dimensions === b.dimensions;
}

function label(profile: EmbeddingProfile): string {
  return `${profile.id} (${profile.dimensions} d)`;
}

function profileOf(option: EmbedderOption): EmbeddingProfile {
  return typeof option === 'string' ? BUILT_IN[option] : option.profile;
}

/** True when a non-empty file exists at the path (an empty file is a new database to SQLite). */
function hasDatabase(path: string): boolean {
  try {
    return statSync(path).size > 0;
  } catch {
    return false;
  }
}

/**
 * The embedder of a file: a new file gets the one asked for (default USE-lite); an existing file keeps the
 * one it records — `ENGRAM_MEMORY_EMBEDDER_MISMATCH` when another one was asked for,
 * `ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE` when it records one that is not built in and none was given.
 */
export function chooseEngineEmbedder(
  recorded: EmbeddingProfile | null | 'new',
  requested: EmbedderOption | undefined,
): EmbedderOption {
  if (recorded === 'new') return requested ?? 'use';
  if (recorded === null) {
    throw new EngramMemoryError(
      'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
      'the file records no embedder (it was made without a vector index); use another path',
    );
  }
  if (requested !== undefined) {
    if (!sameProfile(profileOf(requested), recorded)) {
      throw new EngramMemoryError(
        'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
        `the file was made with the embedder ${label(recorded)}, not ${label(profileOf(requested))}; open it with that embedder or use another path`,
      );
    }
    return requested;
  }
  if (sameProfile(recorded, BUILT_IN.use)) return 'use';
  if (sameProfile(recorded, BUILT_IN.deterministic)) return 'deterministic';
  throw new EngramMemoryError(
    'ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE',
    `the file was made with the embedder ${label(recorded)}; pass an embedder with that profile`,
  );
}

function openStore(
  config: EngineConfig,
  profile: EmbeddingProfile | undefined,
  collector: DiagnosticsCollector,
): SqliteMemoryStore {
  try {
    mkdirSync(dirname(config.path), { recursive: true });
  } catch (error) {
    throw new EngramMemoryError('ENGRAM_MEMORY_STORE_FAILED', 'cannot create the directory of the file', {
      cause: error,
    });
  }
  try {
    return createSqliteMemoryStore({
      path: config.path,
      // Omitted for an existing file: the store adopts the profile the file records.
      ...(profile === undefined ? {} : { embedding: { id: profile.id, dimensions: profile.dimensions } }),
      observer: collector.storeObserver,
      ...(config.encryptionKey === undefined ? {} : { encryption: { key: config.encryptionKey } }),
    });
  } catch (error) {
    // Another process created the file with another embedder between the check and the open.
    if (engramErrorCode(error) === 'ENGRAM_STORE_FINGERPRINT_MISMATCH') {
      throw new EngramMemoryError(
        'ENGRAM_MEMORY_EMBEDDER_MISMATCH',
        'the file was made with another embedder; open it with that embedder or use another path',
        { cause: error },
      );
    }
    throw error;
  }
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
 * Opens (or creates) a file and wires every package around it. Throws a typed error when the file cannot be
 * opened or records another embedder than the one given.
 */
export function openEngine(config: EngineConfig): Engine {
  const collector = createDiagnosticsCollector();
  let store: SqliteMemoryStore;
  let choice: EmbedderOption;
  if (hasDatabase(config.path)) {
    store = openStore(config, undefined, collector);
    try {
      choice = chooseEngineEmbedder(store.embeddingProfile, config.embedder);
    } catch (error) {
      void store.close();
      throw error;
    }
  } else {
    choice = chooseEngineEmbedder('new', config.embedder);
    store = openStore(config, profileOf(choice), collector);
  }
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

  let closed = false;
  return {
    path: config.path,
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
