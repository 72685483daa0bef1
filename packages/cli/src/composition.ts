/**
 * The composition root: the only module that knows every package. It opens the SQLite store, picks the
 * embedder (the one a file records; for a new file the one asked for, else an OpenAI-compatible one configured
 * by environment variables, else the offline USE-lite embedder), and wires the retriever, the memory tools,
 * the diagnostics collector, event ingestion, the embedding drain, extraction and maintenance passes — every
 * producer reporting to the one collector. The packages a command may not need (the PostgreSQL store, the
 * maintenance layer, the USE-lite query wrappers) are imported when first needed, so a one-shot search loads
 * only the store, retrieval and its embedder. Longer than the house's 400 lines: it is the one place that wires
 * every package, and split, the wiring of one command would be spread over several files.
 */
import {
  createDiagnosticsCollector,
  createHealthDto,
  type DiagnosticsCollector,
  type HealthDto,
} from '@engram/diagnostics';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createUseEmbedder } from '@engram/embedder-use';
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
  ProviderGateway,
} from '@engram/maintenance';
import {
  configFromEnv,
  createOpenAICompatibleChatModel,
  createOpenAICompatibleEmbedder,
} from '@engram/provider-openai';
import { createRetriever, type Retriever } from '@engram/retrieval';
import type { EventRecord, VectorIndexProgress } from '@engram/store';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import type { SqliteMemoryStore } from '@engram/store-sqlite';
import { createToolHandler, type ToolHandler } from '@engram/tools';
import {
  BUILT_IN_PROFILES,
  chooseEmbedder,
  type EmbedderChoice,
  embedderChoiceFromEnv,
  profileLabel,
} from './embedder-choice.js';
import { EngramDemoError } from './errors.js';
import { embedderMismatch, hasDatabase, openStore } from './open-store.js';
import { postgresFor } from './postgres-module.js';

/** Construction of {@link openEngram}. */
export interface EngramConfig {
  /** Absolute path of the SQLite file; its directory is created when missing. */
  readonly dbPath: string;
  /**
   * Environment variables read for an OpenAI-compatible provider and for `ENGRAM_EMBEDDER` (default: none,
   * i.e. offline with the default embedder).
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The embedder asked for (overrides `ENGRAM_EMBEDDER`); an existing file must have been made with it. */
  readonly embedder?: EmbedderChoice;
  /**
   * Start loading the embedder's model at once, in the background (for commands that will embed). Without it
   * the model loads on the first search, tool call or drain — never for commands that do not embed.
   */
  readonly warm?: boolean;
  /**
   * The encryption key of the file (SQLCipher): opens an encrypted file, and creates a new file encrypted.
   * It is handed to the store only; never logged, printed or put in an error.
   */
  readonly encryptionKey?: string | Uint8Array;
  /**
   * `read`: the store opens read-only — nothing is created, converted or migrated, no write lock is taken, and
   * writes (remember, ingest, drain …) reject with `ENGRAM_STORE_READ_ONLY`. `write` (default): the store may
   * create the file, migrate it and write.
   */
  readonly access?: 'read' | 'write';
  /**
   * Progress of a quantised vector index build the open finishes (one an interrupted process left on a SQLite
   * file): counts only. Never called for a PostgreSQL database.
   */
  readonly onIndexProgress?: (progress: VectorIndexProgress) => void;
}

/** Totals of a full drain (every run until the backlog is empty or a run stops early). */
export interface DrainSummary {
  readonly runs: number;
  readonly batches: number;
  readonly rows: number;
  readonly ready: number;
  readonly error: number;
  readonly ftsOnly: number;
  readonly stale: number;
  /** Pending rows left (for the agent, or in total); null when the count failed. */
  readonly backlog: number | null;
  /** The last run's outcome. */
  readonly outcome: string;
}

/** Progress of a drain: rows done and rows expected so far. */
export type DrainProgress = (done: number, total: number) => void;

/** The wired memory system of one database file. */
export interface Engram {
  readonly dbPath: string;
  readonly store: EngramStore;
  readonly collector: DiagnosticsCollector;
  readonly retriever: Retriever;
  readonly tools: ToolHandler;
  readonly ingestor: EventIngestor;
  readonly extractor: Extractor;
  /** Which embedder this file uses (the one it records, or the one chosen for a new file). */
  readonly embedder: EmbedderChoice;
  /** The embedder's profile id and dimensions, e.g. `use-lite-512-v1 (512 d)`. */
  readonly embedderLabel: string;
  /**
   * Loads the embedder's model (once; later calls return the same promise) and never rejects: a model that
   * fails to load leaves searches FTS-only and drained rows in error. Searches and tool calls wait for it, so
   * the first query is not degraded by the load; call it early to overlap the load with other work.
   */
  warmUp(): Promise<void>;
  /** The chat model's id, or null when none is configured (the heavy phase and extraction are skipped). */
  readonly modelLabel: string | null;
  /** Embeds pending rows until none are left (or a run stops early), reporting progress. */
  drain(options?: { readonly agentId?: string; readonly onProgress?: DrainProgress }): Promise<DrainSummary>;
  /** One maintenance pass for an agent. */
  maintain(
    agentId: string,
    options?: { readonly force?: boolean; readonly dryRun?: boolean },
  ): Promise<MaintenancePassResult>;
  /** Runs extraction over archived events (recorded as `skipped` without a model). */
  extract(events: readonly EventRecord[]): Promise<ExtractionResult | null>;
  /** The health DTO of one agent, or of every agent when null. */
  health(agentId: string | null): Promise<HealthDto>;
  /** Agents with at least one memory or event. */
  listAgents(): Promise<readonly string[]>;
  /** Closes the store (idempotent). */
  close(): Promise<void>;
}

/** The store behind a CLI database: a SQLite file, or a PostgreSQL database (`--db postgres://…`). */
export type EngramStore = SqliteMemoryStore | PostgresMemoryStore;

/** Most concurrent provider requests in total and per key when a provider is configured. */
const PROVIDER_LIMITS = { global: 4, perKey: 2, maxQueue: 64 } as const;
/** Deadline of one provider request through the gateway. */
const PROVIDER_DEADLINE_MS = 60_000;

/** The background parts of an {@link Engram}, built on first use (see `openEngram`). */
interface Background {
  readonly ingestor: EventIngestor;
  readonly extractor: Extractor;
  readonly drainer: EmbeddingDrain;
  readonly runner: MaintenanceRunner;
}

let maintenanceModule: Promise<typeof import('@engram/maintenance')> | null = null;

/** `@engram/maintenance`, loaded once, by the first command that ingests, drains, extracts or maintains. */
function loadMaintenance(): Promise<typeof import('@engram/maintenance')> {
  maintenanceModule ??= import('@engram/maintenance');
  return maintenanceModule;
}

/**
 * Opens (or creates) a database file and wires every package around it. Throws a typed error when the file
 * cannot be opened, records an embedder that is not available here or not the one asked for, or the
 * provider environment is invalid.
 */
export async function openEngram(config: EngramConfig): Promise<Engram> {
  const env = config.env ?? {};
  // Throws ENGRAM_PROVIDER_CONFIG naming the variable (never its value) when the environment is invalid.
  const provider = configFromEnv(env);
  const requested = config.embedder ?? embedderChoiceFromEnv(env);
  const access = config.access ?? 'write';
  const collector = createDiagnosticsCollector();

  let gateway: ProviderGateway | null = null;
  let model: ModelPort | null = null;
  const remoteEmbedder =
    provider.embedder === null ? null : createOpenAICompatibleEmbedder(provider.embedder);
  if (remoteEmbedder !== null || provider.chat !== null) {
    const chat = provider.chat === null ? null : createOpenAICompatibleChatModel(provider.chat);
    gateway = (await loadMaintenance()).createProviderGateway({
      embedder: remoteEmbedder,
      model: chat,
      observer: collector.providerObserver,
      limits: PROVIDER_LIMITS,
      deadlineMs: PROVIDER_DEADLINE_MS,
    });
    model = gateway.modelFor('maintenance');
  }
  const remote = remoteEmbedder?.profile ?? null;

  // A file keeps the embedder it was made with: open an existing one first and read what it records.
  let store: EngramStore;
  let choice: EmbedderChoice;
  const postgres = await postgresFor(config.dbPath);
  if (postgres !== null) {
    if (config.encryptionKey !== undefined) {
      throw new EngramDemoError(
        'ENGRAM_DEMO_INVALID_ARGUMENTS',
        'a PostgreSQL database takes no encryption key: encryption at rest is the server’s (TLS with sslmode in the URL)',
      );
    }
    try {
      ({ store, choice } = await postgres.open.openBoundPostgres(postgres.postgres, {
        url: config.dbPath,
        choose: (recorded) => {
          const chosen = chooseEmbedder({ recorded, requested, remote });
          return { choice: chosen, profile: chosen === 'openai' ? remote : BUILT_IN_PROFILES[chosen] };
        },
        observer: collector.storeObserver,
      }));
    } catch (error) {
      throw embedderMismatch(error, undefined);
    }
  } else if (hasDatabase(config.dbPath)) {
    store = openStore(
      config.dbPath,
      undefined,
      collector,
      config.encryptionKey,
      access,
      config.onIndexProgress,
    );
    try {
      choice = chooseEmbedder({ recorded: store.embeddingProfile, requested, remote });
    } catch (error) {
      await store.close();
      throw error;
    }
  } else {
    choice = chooseEmbedder({ recorded: 'new', requested, remote });
    const profile = choice === 'openai' ? remote : BUILT_IN_PROFILES[choice];
    store = openStore(
      config.dbPath,
      profile ?? undefined,
      collector,
      config.encryptionKey,
      access,
      config.onIndexProgress,
    );
  }

  let drainEmbedder: EmbedderPort;
  let queryEmbedder: EmbedderPort;
  // The query-side wrappers matter only for a model that loads (USE-lite), and come with that branch.
  let compose: typeof import('@engram/memory/compose') | null = null;
  let load: () => Promise<unknown> = () => Promise.resolve();
  const remoteDrain = gateway?.embedderFor('drain') ?? null;
  const remoteQuery = gateway?.embedderFor('query') ?? null;
  if (choice === 'openai' && remoteDrain !== null && remoteQuery !== null) {
    drainEmbedder = remoteDrain;
    queryEmbedder = remoteQuery;
  } else if (choice === 'use') {
    const use = createUseEmbedder();
    compose = await import('@engram/memory/compose');
    drainEmbedder = use;
    queryEmbedder = compose.englishQueries(use);
    // The first inference after the load is slow too: run one, so the first query meets its deadline.
    load = () => use.load().then(() => use.embed(['warm up']));
  } else {
    const deterministic = createDeterministicEmbedder();
    drainEmbedder = deterministic;
    queryEmbedder = deterministic;
  }
  let warming: Promise<void> | null = null;
  const warmUp = (): Promise<void> => {
    warming ??= load().then(
      () => undefined,
      () => undefined,
    );
    return warming;
  };
  if (config.warm === true) void warmUp();

  const plain = createRetriever({ store, embedder: queryEmbedder, observer: collector.retrievalObserver });
  // Searches wait for a model that loads; every other embedder is ready at once (nothing to wait for).
  const retriever = compose === null ? plain : compose.gatedRetriever(plain, warmUp);
  const innerTools = createToolHandler({ store, retriever, embedder: queryEmbedder });
  const tools: ToolHandler = {
    definitions: innerTools.definitions,
    execute: async (name, args, ctx) => {
      await warmUp();
      return innerTools.execute(name, args, ctx);
    },
  };
  let progress: DrainProgress | undefined;
  // Event ingestion, extraction, the drain and maintenance passes load with their first use: a one-shot
  // search never loads them.
  let background: Promise<Background> | null = null;
  const parts = (): Promise<Background> => {
    background ??= loadMaintenance().then((m): Background => {
      const drainer = m.createEmbeddingDrain({
        store,
        embedder: drainEmbedder,
        observer: collector.maintenanceObserver,
        onProgress: (done, total) => progress?.(done, total),
      });
      return {
        ingestor: m.createEventIngestor({ store }),
        extractor: m.createExtractor({ store, retriever, model, observer: collector.maintenanceObserver }),
        drainer,
        // The rows a pass writes (merged rows, reflections, personas) are embedded before the pass ends.
        runner: m.createMaintenanceRunner({
          store,
          retriever,
          model,
          drain: drainer,
          observer: collector.maintenanceObserver,
        }),
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
  let closed = false;

  /**
   * Drains run after run — one agent's rows, or every agent's (each batch is reported under its own agent) —
   * until the backlog is empty or a run stops early. Always at least one run, so the process-wide backlog
   * gauge is reported even when nothing is pending.
   */
  async function drain(
    options: { readonly agentId?: string; readonly onProgress?: DrainProgress } = {},
  ): Promise<DrainSummary> {
    const agentId = options.agentId;
    const start = await store.countEmbeddingBacklog();
    const total = agentId === undefined ? start.total : (start.byAgent[agentId] ?? 0);
    const totals = { runs: 0, batches: 0, rows: 0, ready: 0, error: 0, ftsOnly: 0, stale: 0 };
    let outcome = 'completed';
    let backlog: number | null = total;
    options.onProgress?.(0, total);
    do {
      const before = totals.rows;
      progress = (done) => options.onProgress?.(Math.min(total, before + done), total);
      const { drainer } = await parts();
      const result = await drainer.run(agentId === undefined ? {} : { agentId }).finally(() => {
        progress = undefined;
      });
      totals.runs += 1;
      totals.batches += result.batches;
      totals.rows += result.rows;
      totals.ready += result.transitions.ready;
      totals.error += result.transitions.error;
      totals.ftsOnly += result.transitions.ftsOnly;
      totals.stale += result.transitions.stale;
      backlog = result.backlog;
      outcome = result.outcome;
      // Rows that keep failing stay in the backlog: stop once a run makes no progress.
      if (result.rows === 0) break;
    } while (outcome === 'completed' && backlog !== null && backlog > 0 && totals.rows < total * 2);
    options.onProgress?.(Math.min(total, totals.rows), total);
    return { ...totals, backlog, outcome };
  }

  async function health(agentId: string | null): Promise<HealthDto> {
    const answer = await store.health(agentId ?? undefined);
    if (!answer.ok) {
      const damaged = answer.integrity?.state === 'failed' ? '; the file failed its integrity check' : '';
      throw new EngramDemoError(
        'ENGRAM_DEMO_STORE_FAILED',
        `the store cannot report its health (${answer.code})${damaged}`,
      );
    }
    return createHealthDto(
      answer.health,
      agentId === null ? collector.snapshot() : collector.snapshot(agentId),
    );
  }

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

  return {
    dbPath: config.dbPath,
    store,
    collector,
    retriever,
    tools,
    ingestor,
    extractor,
    embedder: choice,
    embedderLabel: profileLabel(drainEmbedder.profile),
    warmUp,
    modelLabel: model === null ? null : (provider.chat?.model ?? model.id),
    drain,
    maintain: async (agentId, options = {}) =>
      (await parts()).runner.run(agentId, {
        ...(options.force === true ? { force: true } : {}),
        ...(options.dryRun === true ? { dryRun: true } : {}),
      }),
    extract,
    health,
    listAgents: () => store.listAgents(),
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await store.close();
    },
  };
}
