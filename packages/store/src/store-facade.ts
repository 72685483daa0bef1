/**
 * The facade every adapter's store class is: one method per method of the port, each forwarding to a function
 * of a slice over the adapter's connection context. Written once here, so an adapter names only its slice
 * table (which function serves which method) and what it adds of its own (`close`, `info`, …).
 *
 * Slightly over 300 lines on purpose: one documented one-line delegation per method of the port.
 */
import type { MemoryKind } from '@engram/contracts';
import type { ConflictLink, ConflictResolution, ConflictState, ForgetMode } from './facts-types.js';
import type { ProcessBeatInput } from './process-beats.js';
import type { UserScope } from './scope.js';
import type { SessionWindow } from './session-read.js';
import {
  type IntegrityResult,
  integrityAllowsWrites,
  type RepairEmbeddingIntegrityOptions,
} from './store-options.js';
import type { ExportOptions, ExportRecord, ImportOptions, ImportSummary } from './transfer.js';
import type {
  ClaimMaintenanceOptions,
  EmbeddingProfile,
  EventInput,
  EventRecord,
  LexicalQuery,
  LexicalResult,
  ListMemoriesOptions,
  ListPendingOptions,
  MemoryBrief,
  MemoryRecord,
  MemoryStore,
  NewMemory,
  RevalidateOptions,
  RevalidationCandidate,
  SkillInput,
  VectorQuery,
} from './types.js';

/** What both adapters offer besides the port: the integrity check, the transfer streams, the re-index. */
export interface AdapterExtras {
  checkIntegrity(): Promise<IntegrityResult>;
  exportRecords(options?: ExportOptions): AsyncIterable<ExportRecord>;
  importRecords(
    records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
    options?: ImportOptions,
  ): Promise<ImportSummary>;
  resetEmbeddings(profile: EmbeddingProfile | null): Promise<void>;
}

type Method = (...args: never[]) => unknown;
/** Every method of the port (the optional ones included) and of {@link AdapterExtras}. */
type Forwarded = Omit<Required<MemoryStore>, 'insertMemory'> & AdapterExtras;
/** The names of the methods a facade forwards (`insertMemory` is `insertUniqueMemory`'s record). */
export type ForwardedMethod = {
  [K in keyof Forwarded]: Forwarded[K] extends Method ? K : never;
}[keyof Forwarded];

/** The function serving one method: the method's own parameters after the adapter's context. */
export type SliceFunction<Ctx, K extends ForwardedMethod> = Forwarded[K] extends (...args: infer A) => infer R
  ? (ctx: Ctx, ...args: A) => R
  : never;

/** An adapter's slice table: which of its functions serves each method of the port. */
export type StoreSlices<Ctx> = { readonly [K in ForwardedMethod]: SliceFunction<Ctx, K> };

/** What the facade reads of an adapter's context for its own properties. */
export interface FacadeContext {
  readonly profile: EmbeddingProfile | null;
  readonly closed: boolean;
  readonly integrity: IntegrityResult;
  readonly forgetMode: ForgetMode;
  readonly limits: { readonly maxContentLength: number };
}

/** What the method `K` resolves with (its return type in the port). */
export type ForwardedResult<K extends ForwardedMethod> = ReturnType<Forwarded[K]>;

/**
 * The store facade over a context `Ctx` and a slice table: every method of the port delegates to its slice
 * function with the context first. An adapter extends it with its constructor and its own members.
 */
export abstract class MemoryStoreFacade<Ctx extends FacadeContext> implements MemoryStore, AdapterExtras {
  /** The content length cap in UTF-16 code units. */
  readonly maxContentLength: number;
  readonly #ctx: Ctx;
  readonly #slices: StoreSlices<Ctx>;

  protected constructor(ctx: Ctx, slices: StoreSlices<Ctx>) {
    this.#ctx = ctx;
    this.#slices = slices;
    this.maxContentLength = ctx.limits.maxContentLength;
  }

  /** The embedder profile the store is bound to, or null (no vector index). */
  get embeddingProfile(): EmbeddingProfile | null {
    return this.#ctx.profile;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#ctx.closed;
  }

  /**
   * The last integrity check in this process (`notChecked` until `checkIntegrity` runs), when it ran, and the
   * counts of a failure that leaves writes allowed (`badRows`, `damagedVectorChunks`).
   */
  get integrity(): IntegrityResult {
    return { ...this.#ctx.integrity };
  }

  /** Whether the last integrity check leaves writes allowed (see `integrityAllowsWrites`). */
  get integrityAllowsWrites(): boolean {
    return integrityAllowsWrites(this.#ctx.integrity);
  }

  /** The forget setting this store was opened with. */
  get forgetMode(): ForgetMode {
    return this.#ctx.forgetMode;
  }

  /** Runs the store's integrity check now and records it (see the adapter's README for what it checks). */
  checkIntegrity(): Promise<IntegrityResult> {
    return this.#slices.checkIntegrity(this.#ctx);
  }

  /** Streams the store's records (or one agent's) in the export format of `@engram/store`. */
  exportRecords(options?: ExportOptions): AsyncIterable<ExportRecord> {
    return this.#slices.exportRecords(this.#ctx, options);
  }

  /** Imports an export stream (of either store): validated, batched, idempotent. */
  importRecords(
    records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
    options?: ImportOptions,
  ): Promise<ImportSummary> {
    return this.#slices.importRecords(this.#ctx, records, options);
  }

  // ---------------------------------------------------------------- read slice

  getMemory(agentId: string, id: string, scope?: UserScope): ForwardedResult<'getMemory'> {
    return this.#slices.getMemory(this.#ctx, agentId, id, scope);
  }
  listMemories(agentId: string, options?: ListMemoriesOptions): ForwardedResult<'listMemories'> {
    return this.#slices.listMemories(this.#ctx, agentId, options);
  }
  findByContentHash(agentId: string, hash: string, kind?: MemoryKind): ForwardedResult<'findByContentHash'> {
    return this.#slices.findByContentHash(this.#ctx, agentId, hash, kind);
  }
  searchLexical(query: LexicalQuery): Promise<LexicalResult> {
    return this.#slices.searchLexical(this.#ctx, query);
  }
  searchVector(query: VectorQuery): ForwardedResult<'searchVector'> {
    return this.#slices.searchVector(this.#ctx, query);
  }
  revalidate(
    agentId: string,
    candidates: readonly RevalidationCandidate[],
    options?: RevalidateOptions,
  ): Promise<readonly MemoryRecord[]> {
    return this.#slices.revalidate(this.#ctx, agentId, candidates, options);
  }
  revalidateBrief(
    agentId: string,
    candidates: readonly RevalidationCandidate[],
    options?: RevalidateOptions,
  ): Promise<readonly MemoryBrief[]> {
    return this.#slices.revalidateBrief(this.#ctx, agentId, candidates, options);
  }
  sessionNeighbours(
    agentId: string,
    windows: readonly SessionWindow[],
    options?: RevalidateOptions,
  ): Promise<readonly MemoryBrief[]> {
    return this.#slices.sessionNeighbours(this.#ctx, agentId, windows, options);
  }

  // ---------------------------------------------------------------- write slice

  /** Inserts a memory; resolves with the stored row (the active exact duplicate's, when there is one). */
  async insertMemory(input: NewMemory): Promise<MemoryRecord> {
    return (await this.#slices.insertUniqueMemory(this.#ctx, input)).record;
  }
  insertUniqueMemory(input: NewMemory): ForwardedResult<'insertUniqueMemory'> {
    return this.#slices.insertUniqueMemory(this.#ctx, input);
  }
  insertMemories(inputs: readonly NewMemory[]): Promise<readonly MemoryRecord[]> {
    return this.#slices.insertMemories(this.#ctx, inputs);
  }
  updateMemory(...args: Parameters<MemoryStore['updateMemory']>): Promise<MemoryRecord> {
    return this.#slices.updateMemory(this.#ctx, ...args);
  }
  recordAccess(agentId: string, ids: readonly string[], at?: number): Promise<void> {
    return this.#slices.recordAccess(this.#ctx, agentId, ids, at);
  }
  deleteMemory(agentId: string, id: string, scope?: UserScope): Promise<boolean> {
    return this.#slices.deleteMemory(this.#ctx, agentId, id, scope);
  }

  // ---------------------------------------------------------------- lifecycle slice

  archiveMemory(...args: Parameters<MemoryStore['archiveMemory']>): Promise<MemoryRecord> {
    return this.#slices.archiveMemory(this.#ctx, ...args);
  }
  supersedeMemory(...args: Parameters<MemoryStore['supersedeMemory']>): ForwardedResult<'supersedeMemory'> {
    return this.#slices.supersedeMemory(this.#ctx, ...args);
  }
  setLifecycle(...args: Parameters<MemoryStore['setLifecycle']>): Promise<MemoryRecord> {
    return this.#slices.setLifecycle(this.#ctx, ...args);
  }
  mergeMemories(...args: Parameters<MemoryStore['mergeMemories']>): ForwardedResult<'mergeMemories'> {
    return this.#slices.mergeMemories(this.#ctx, ...args);
  }

  // ---------------------------------------------------------------- facts slice

  history(agentId: string, id: string, scope?: UserScope): ForwardedResult<'history'> {
    return this.#slices.history(this.#ctx, agentId, id, scope);
  }
  forgetMemory(...args: Parameters<MemoryStore['forgetMemory']>): ForwardedResult<'forgetMemory'> {
    return this.#slices.forgetMemory(this.#ctx, ...args);
  }
  deleteAll(...args: Parameters<MemoryStore['deleteAll']>): ForwardedResult<'deleteAll'> {
    return this.#slices.deleteAll(this.#ctx, ...args);
  }
  linkConflict(agentId: string, olderId: string, newerId: string, reason: string): Promise<boolean> {
    return this.#slices.linkConflict(this.#ctx, agentId, olderId, newerId, reason);
  }
  listConflicts(
    agentId: string,
    options?: {
      readonly ids?: readonly string[];
      readonly state?: ConflictState;
      readonly limit?: number;
    } & UserScope,
  ): Promise<readonly ConflictLink[]> {
    return this.#slices.listConflicts(this.#ctx, agentId, options);
  }
  resolveConflict(
    agentId: string,
    olderId: string,
    newerId: string,
    resolution: ConflictResolution,
  ): Promise<ConflictLink> {
    return this.#slices.resolveConflict(this.#ctx, agentId, olderId, newerId, resolution);
  }

  // ---------------------------------------------------------------- embedding slice

  listPendingEmbeddings(options: ListPendingOptions): ForwardedResult<'listPendingEmbeddings'> {
    return this.#slices.listPendingEmbeddings(this.#ctx, options);
  }
  commitEmbeddings(
    ...args: Parameters<MemoryStore['commitEmbeddings']>
  ): ForwardedResult<'commitEmbeddings'> {
    return this.#slices.commitEmbeddings(this.#ctx, ...args);
  }
  countEmbeddingBacklog(): ForwardedResult<'countEmbeddingBacklog'> {
    return this.#slices.countEmbeddingBacklog(this.#ctx);
  }
  /** The agent's rows whose embedding failed, each with its error code (see `backlog-reads.ts`). */
  listFailedEmbeddings(
    ...args: Parameters<MemoryStore['listFailedEmbeddings']>
  ): ForwardedResult<'listFailedEmbeddings'> {
    return this.#slices.listFailedEmbeddings(this.#ctx, ...args);
  }
  /** The agent's sessions with their entry counts and times (see `backlog-reads.ts`). */
  listSessionSummaries(
    ...args: Parameters<MemoryStore['listSessionSummaries']>
  ): ForwardedResult<'listSessionSummaries'> {
    return this.#slices.listSessionSummaries(this.#ctx, ...args);
  }
  /** The explicit re-index: drops every vector, rebinds to `profile` (or none), resets every row to `pending`. */
  resetEmbeddings(profile: EmbeddingProfile | null): Promise<void> {
    return this.#slices.resetEmbeddings(this.#ctx, profile);
  }

  // ---------------------------------------------------------------- integrity slice

  repairEmbeddingIntegrity(
    agentId: string,
    options?: RepairEmbeddingIntegrityOptions,
  ): Promise<{ readonly repaired: number }> {
    return this.#slices.repairEmbeddingIntegrity(this.#ctx, agentId, options);
  }
  pruneOrphanedVectors(agentId?: string): Promise<{ readonly pruned: number }> {
    return this.#slices.pruneOrphanedVectors(this.#ctx, agentId);
  }

  // ---------------------------------------------------------------- maintenance lease

  /** The agent's maintenance lease; without `owner`, this store instance's own owner id. */
  claimMaintenance(agentId: string, options: ClaimMaintenanceOptions): ForwardedResult<'claimMaintenance'> {
    return this.#slices.claimMaintenance(this.#ctx, agentId, options);
  }
  releaseMaintenance(agentId: string, options?: { readonly owner?: string }): Promise<void> {
    return this.#slices.releaseMaintenance(this.#ctx, agentId, options);
  }

  // ---------------------------------------------------------------- process beats

  /** Writes this process's diagnostics beat and deletes expired rows (refused on a read-only store). */
  publishProcessBeat(beat: ProcessBeatInput): ForwardedResult<'publishProcessBeat'> {
    return this.#slices.publishProcessBeat(this.#ctx, beat);
  }
  removeProcessBeat(processId: string): Promise<void> {
    return this.#slices.removeProcessBeat(this.#ctx, processId);
  }
  /** The live process beats; malformed rows are skipped and counted, never thrown. */
  listProcessBeats(): ForwardedResult<'listProcessBeats'> {
    return this.#slices.listProcessBeats(this.#ctx);
  }

  // ---------------------------------------------------------------- event log

  appendEvents(
    agentId: string,
    sessionId: string,
    input: readonly EventInput[],
  ): ForwardedResult<'appendEvents'> {
    return this.#slices.appendEvents(this.#ctx, agentId, sessionId, input);
  }
  readEvents(...args: Parameters<MemoryStore['readEvents']>): Promise<readonly EventRecord[]> {
    return this.#slices.readEvents(this.#ctx, ...args);
  }
  listEventsAfter(...args: Parameters<MemoryStore['listEventsAfter']>): Promise<readonly EventRecord[]> {
    return this.#slices.listEventsAfter(this.#ctx, ...args);
  }
  listSessions(agentId: string): ForwardedResult<'listSessions'> {
    return this.#slices.listSessions(this.#ctx, agentId);
  }
  getCursor(agentId: string, sessionId: string): Promise<number> {
    return this.#slices.getCursor(this.#ctx, agentId, sessionId);
  }
  ingestBatch(...args: Parameters<MemoryStore['ingestBatch']>): Promise<readonly MemoryRecord[]> {
    return this.#slices.ingestBatch(this.#ctx, ...args);
  }

  // ---------------------------------------------------------------- skills slice

  writeSkill(input: SkillInput): ForwardedResult<'writeSkill'> {
    return this.#slices.writeSkill(this.#ctx, input);
  }
  deleteSkill(agentId: string, name: string): Promise<boolean> {
    return this.#slices.deleteSkill(this.#ctx, agentId, name);
  }
  listSkills(agentId: string): ForwardedResult<'listSkills'> {
    return this.#slices.listSkills(this.#ctx, agentId);
  }
  getSkill(agentId: string, name: string): ForwardedResult<'getSkill'> {
    return this.#slices.getSkill(this.#ctx, agentId, name);
  }

  // ---------------------------------------------------------------- health slice

  /** Counts for the health page; never rejects (`{ ok: false, code }` when the store cannot be counted). */
  health(agentId?: string): ForwardedResult<'health'> {
    return this.#slices.health(this.#ctx, agentId);
  }
  listAgents(): Promise<readonly string[]> {
    return this.#slices.listAgents(this.#ctx);
  }
}
