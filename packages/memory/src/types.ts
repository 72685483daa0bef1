/** The public shapes of the facade: what `createMemory` takes and what a {@link Memory} returns. */
import type { HealthDto } from '@engram/diagnostics';
import type { MaintenancePassResult, ModelPort } from '@engram/maintenance';
import type { RerankConfig, RetrievalExplanation } from '@engram/retrieval';
import type {
  ExportRecord,
  ImportSummary,
  Lifecycle,
  MemoryFilter,
  MemoryKind,
  VectorIndexOptions,
  VectorIndexProgress,
} from '@engram/store';
import type {
  ConflictsOptions,
  EmbeddingFailure,
  EmbeddingFailuresOptions,
  MemoryConflict,
  SessionInfo,
  SessionsOptions,
} from './backlog.js';
import type { EmbedderOption } from './engine.js';

/** Options of {@link createMemory}. */
export interface MemoryConfig {
  /**
   * Path of the SQLite file (created with its directory when missing), or the URL of a PostgreSQL database
   * (`postgres://user:password@host:5432/db`; `postgresql://` too) — many processes and machines may share it.
   */
  readonly path: string;
  /**
   * The embedder of a new file: `'use'` (default, offline USE-lite, English), `'deterministic'` (offline,
   * reproducible, for tests) or an embedder object. An existing file keeps the embedder it records: omit this,
   * or pass the same one (another one is `ENGRAM_MEMORY_EMBEDDER_MISMATCH`).
   */
  readonly embedder?: EmbedderOption;
  /** A chat model: `add(messages)` then extracts memories with it, and `maintain` runs its model steps. */
  readonly model?: ModelPort;
  /** The agent every call acts for unless it names another (default `'default'`). */
  readonly agentId?: string;
  /**
   * The user every call acts for unless it names another (default: none — calls act for the whole agent).
   * See {@link Scope}: with a user, no call of this memory can see, change or delete another user's memories.
   */
  readonly userId?: string;
  /** The SQLCipher key of an encrypted file; never logged or put in an error. SQLite only. */
  readonly encryptionKey?: string | Uint8Array;
  /**
   * The SQLite store's vector index: `{ quantization: 'none' | 'int8' | 'bit', rescore? }` (quantised vector
   * search; see `@engram/store`). SQLite only.
   */
  readonly vectorIndex?: VectorIndexOptions;
  /**
   * Progress of a quantised vector index build during the open: the one a file from before quantised search gets
   * when `vectorIndex` asks for one, or one an interrupted process left unfinished (a million 1536-d vectors take
   * minutes). Counts only — `{ phase: 'vectorIndex', quantization, step, done, total }`, once before the first
   * step, after each bounded step and at the end (`done === total`). What it throws or rejects with is ignored.
   * SQLite only; a PostgreSQL database has no such build and never calls it.
   */
  readonly onIndexProgress?: (progress: VectorIndexProgress) => void;
  /**
   * The id of each new memory (default: a time-ordered UUID, version 7, which carries the real time of its
   * insert to the millisecond — even when `createdAt` is given, and after an erasing `forget`, in the history
   * tombstone that keeps the id). Pass e.g. `crypto.randomUUID` if ids must not reveal that time; ids must be
   * unique. SQLite and PostgreSQL.
   */
  readonly idFactory?: () => string;
  /**
   * A rerank stage, off by default: `{ model, candidates?, timeoutMs? }` reorders the first `candidates` (default
   * 20) fused results of `search`, `context` and the recall tool with a cross-encoder (`model`, a `Reranker`
   * such as `createHttpReranker` of `@engram/provider-openai`), within `timeoutMs` (default 1,000); on a
   * timeout or an error the fused order stays and `health()` counts `rerankTimeout` or `rerankError`. The
   * reranker sees the query and the memories' text only.
   */
  readonly rerank?: RerankConfig;
  /**
   * Embed in the background (default true): rows an earlier process left pending are embedded from the open
   * on, and `ingest` and `import` start the drain. `false` opens for looking — nothing runs until a call asks:
   * `add` and `update` still embed what they write, and `flush()` runs the drain. The inspector opens so.
   */
  readonly backgroundDrain?: boolean;
  /**
   * Process beats: a memory publishes its content-free runtime figures into the store every `intervalMs` when
   * they changed (default 2 s; 50 ms to 60 s), so the health page of any process using the same file or
   * database shows them; its row is deleted on `close()` and expires when the process dies. `false` publishes
   * nothing.
   */
  readonly processBeat?: false | { readonly intervalMs?: number };
  /**
   * Worker threads of the USE-lite embedder (ignored for any other embedder): the background drain, bulk
   * `ingest` and `add` embed on them, each thread with its own model instance, and concurrent `add` calls share
   * one batch. Default: the machine's cores less one, at least 1. `0` embeds on the caller's thread, as before.
   * The threads never keep the process alive and `close()` stops them.
   */
  readonly threads?: number;
}

/**
 * The scope of a call: the agent, and the user of that agent the call acts for (defaults: the memory's).
 *
 * A memory belongs to an agent and optionally to one of its users; a memory without a user is the agent's own,
 * shared by all its users. A call that names a `userId` sees the agent's own memories and that user's, never
 * another user's (another user's memory is not found), and stores that user on everything it writes; a call
 * without one acts for the whole agent. Sessions (`sessionId`) name a conversation inside that scope.
 */
export interface Scope {
  readonly agentId?: string;
  readonly userId?: string;
}

/** One memory as the facade returns it. Timestamps are epoch milliseconds. */
export interface MemoryItem {
  readonly id: string;
  readonly agentId: string;
  readonly kind: MemoryKind;
  readonly content: string;
  readonly tags: readonly string[];
  /** 0..1. */
  readonly importance: number;
  /** `active`; `superseded` for an old version (see `history`); `archived`; `conflicted`. */
  readonly lifecycle: Lifecycle;
  /** The newer version of a superseded memory. */
  readonly supersededBy: string | null;
  /** The session (run) scope: the session a memory came from (messages, extraction), else null. */
  readonly sessionId: string | null;
  /** The user scope, else null. */
  readonly userId: string | null;
  /** Free-form JSON metadata (`{}` when none). */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Since when it holds. */
  readonly validFrom: number;
  /** Until when it held (set once superseded); null while current. */
  readonly validTo: number | null;
  /** True once its vector is stored (search finds it by meaning); false while it waits for the drain. */
  readonly embedded: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * What `history` shows of a forgotten memory: its tombstone — who forgot it, when and why. Its text and
 * vectors are gone (an erasing forget) or kept out of every read.
 */
export interface ForgottenMemory {
  readonly id: string;
  readonly agentId: string;
  readonly lifecycle: 'forgotten';
  /** When it was forgotten (epoch ms). */
  readonly forgottenAt: number;
  /** Who asked (`caller`, `agent`, `user`, `maintenance`, an operator's name), when recorded. */
  readonly forgottenBy: string | null;
  /** Why, when given. */
  readonly reason: string | null;
}

/** Who replaced a version and why, when the correction said so (`update` with a `reason`, `memory_update`). */
export interface VersionChange {
  /** When it was replaced (epoch ms). */
  readonly at: number;
  /** Who replaced it (`caller`, `agent`, an operator's name). */
  readonly by: string | null;
  readonly reason: string | null;
}

/** A stored version in {@link Memory.history}; a superseded one carries its `change` when one was recorded. */
export interface StoredVersion extends MemoryItem {
  readonly change?: VersionChange;
}

/** One entry of {@link Memory.history}: a stored version, or the tombstone of a forgotten one. */
export type MemoryVersion = StoredVersion | ForgottenMemory;

/** One search result: the memory, its score and why it ranks where it does. */
export interface SearchHit extends MemoryItem {
  readonly score: number;
  readonly explanation: RetrievalExplanation;
}

/** What a logged chat entry is: a message, a tool call (by the assistant) or a tool's result. */
export type ChatEntryType = 'message' | 'tool_call' | 'tool_result';

/**
 * One chat message, or a tool call or result. A tool call is `{ type: 'tool_call', role: 'assistant', toolName,
 * id: <call id>, content: <arguments as JSON> }`; its result `{ type: 'tool_result', role: 'tool', toolName?,
 * id: <the same call id>, content }`.
 */
export interface ChatMessage {
  readonly role: 'user' | 'assistant' | 'system' | 'tool';
  readonly content: string;
  /** Default `'message'`. */
  readonly type?: ChatEntryType;
  /** The tool's name: required for a tool call, optional for a result, not allowed on a message. */
  readonly toolName?: string;
  /**
   * A stable id — a message's id from the framework, a tool call's id (shared by the call and its result): an
   * entry whose type and id the session logged since its last clear (within its last 1,000 entries) is not logged
   * again, so a retried or resent call records nothing twice.
   */
  readonly id?: string;
}

/** Options of {@link Memory.add}. */
export interface AddOptions extends Scope {
  /** The session messages are logged under (default `'default'`); for a text, the session it came from (none by default). */
  readonly sessionId?: string;
  /**
   * Skip the messages the session's log already ends with (default true: a chat that resends its whole history
   * is logged once). False appends every message as given (a message history that adds one at a time).
   */
  readonly skipLogged?: boolean;
  /**
   * Cut each message's content to this many UTF-16 units (1 to 65,536; never inside a surrogate pair, lone
   * surrogates replaced) instead of refusing a message the store cannot hold: what a recorder that must never fail
   * a model call asks for. Default: messages are logged as given.
   */
  readonly maxContentChars?: number;
  /** Kind of a text memory (default `'fact'`). Messages are logged as events; a model extracts facts from them. */
  readonly kind?: 'fact' | 'semantic' | 'episodic';
  /** `prefix:value` tags of what is written: the text memory, or each logged message and extracted fact. */
  readonly tags?: readonly string[];
  /** 0..1 (default 0.7 for a text memory). */
  readonly importance?: number;
  /** Free-form JSON metadata (a plain object) of what is written, as `tags`. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /**
   * For a text: the time it is about, in epoch ms (default: now), e.g. the day of the event it records. A query
   * that names a time ("last week", "in March 2023") finds memories by this time. Messages take the time they
   * are logged at, so it is refused with messages.
   */
  readonly validFrom?: number;
}

/** The answer of {@link Memory.add}. */
export interface AddResult {
  /** Memories written by this call (embedded already unless longer than one chunk or the embedder failed). */
  readonly added: readonly MemoryItem[];
  /** Memories already stored with the same text (nothing was written for them). */
  readonly unchanged: readonly MemoryItem[];
  /** Messages appended to the session's log (repeats of the log's tail are skipped). */
  readonly events: number;
  /** When a model is configured and extraction failed: its error code (the messages are kept). */
  readonly extractionError?: string;
  /**
   * For messages, whether memories were extracted from them: `extracted`, `failed` (see `extractionError`), or
   * `noModel` — no chat model is configured, so nothing was extracted: the messages are logged, each becomes
   * an `event` memory, and recall finds them as they were said. Absent when `add` was given a text.
   */
  readonly extraction?: 'extracted' | 'failed' | 'noModel';
  /**
   * Current facts the new fact contradicts (same subject, another value: "port 8080" / "port 9090"): both are
   * kept and linked as conflicting — search explains it — until `update`, `delete` or maintenance settles it.
   */
  readonly conflicts?: readonly { readonly id: string; readonly reason: string }[];
}

/** Options of {@link Memory.search}. */
export interface SearchOptions extends Scope {
  /** Results wanted (default 10, at most 100). */
  readonly limit?: number;
  /** Kinds to search (default every recallable kind). */
  readonly kinds?: readonly MemoryKind[];
  /** Exact tags every result must carry. */
  readonly tags?: readonly string[];
  /** User and session scopes and metadata conditions (`eq`, `in`, `range`, `exists`, `absent`) every result passes. */
  readonly filter?: MemoryFilter;
  /** The facts that held at this time (epoch ms) instead of the current ones. */
  readonly asOf?: number;
  /** Current and superseded facts alike. */
  readonly includeHistory?: boolean;
  /**
   * The time (epoch ms) a time the query names is counted from ("last week" is the week before it); default
   * `asOf`, else now.
   */
  readonly referenceTime?: number;
  /**
   * Leave out results scoring below this (≥ 0; a result's `score` is the fused score the explanation shows,
   * higher is better). Fewer than `limit` results may come back.
   */
  readonly minScore?: number;
  readonly signal?: AbortSignal;
}

/** A change of {@link Memory.update}: new text (a new version, the old one kept in history), tags, importance. */
export interface MemoryChange {
  readonly content?: string;
  readonly tags?: readonly string[];
  readonly importance?: number;
  /** Replaces the metadata. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** Options of {@link Memory.update}: who changes it and why, kept in the history of the old version. */
export interface UpdateOptions extends Scope {
  /** Default `'caller'` (recorded when `reason` is given). */
  readonly actor?: string;
  readonly reason?: string;
}

/** Options of {@link Memory.delete}: who forgets and why, kept in the tombstone. */
export interface ForgetOptions extends Scope {
  /** Default `'caller'`. */
  readonly actor?: string;
  readonly reason?: string;
}

/** Options of {@link Memory.list}. */
export interface ListOptions extends Scope {
  readonly kinds?: readonly MemoryKind[];
  readonly tags?: readonly string[];
  /** User and session scopes and metadata conditions. */
  readonly filter?: MemoryFilter;
  /** Also list archived, superseded and conflicted memories. */
  readonly includeInactive?: boolean;
  /** Default 100, at most 10,000. */
  readonly limit?: number;
  /** Keyset pagination: memories after this id, in id order. */
  readonly afterId?: string;
}

/** Options of {@link Memory.ingest}. */
export interface IngestOptions extends Scope {
  /** The session messages are logged under (default `'default'`). */
  readonly sessionId?: string;
}

/** The answer of {@link Memory.ingest}. */
export interface IngestSummary {
  /** Memories written (texts) or messages logged and ingested. */
  readonly added: number;
  /** Texts already stored, or messages already at the log's tail. */
  readonly unchanged: number;
  /**
   * Rows waiting for the background drain right after the call (`flush()` waits for it): the agent's backlog,
   * or for a call with a `userId`, what this call wrote.
   */
  readonly pending: number;
}

/** The context to put before a model call. */
export interface MemoryContext {
  /** The agent's facts: byte-identical while they are unchanged, so a prompt prefix cache keeps hitting. */
  readonly core: string;
  /** Memories recalled for the query, facts of the core block left out ('' without a query or results). */
  readonly recall: string;
  /** Estimated tokens of each block. */
  readonly tokens: { readonly core: number; readonly recall: number; readonly total: number };
}

/** Options of {@link Memory.context}. */
export interface ContextOptions extends Scope {
  /**
   * The conversation the call is part of. Its latest `recentMessages` entries are in the prompt already (a
   * framework resends them), so recall leaves them out.
   */
  readonly sessionId?: string;
  /** How many of the session's latest entries the prompt holds (default 20; 0 recalls them too). */
  readonly recentMessages?: number;
  /** Token budget of both blocks (default 2,000; the core block takes at most 60%). */
  readonly budgetTokens?: number;
  /** Most recalled memories (default 8). */
  readonly recallLimit?: number;
  readonly signal?: AbortSignal;
}

/** The answer of a model tool call: text for the model; `ok: false` for bad arguments or a failure. */
export interface ToolResult {
  readonly ok: boolean;
  readonly text: string;
}

/** A model-facing tool: its name, what it does, and its input as JSON Schema. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

/** A message (or tool call or result) of a session's log. */
export interface LoggedMessage {
  readonly seq: number;
  readonly type: ChatEntryType;
  readonly role: ChatMessage['role'];
  readonly content: string;
  /** The tool of a tool call or result, else null. */
  readonly toolName: string | null;
  /** The id it was logged with, else null. */
  readonly id: string | null;
  /** The user it was logged for, else null. */
  readonly userId: string | null;
  readonly createdAt: number;
}

/** Options of {@link Memory.callTool}: the scope the tool acts in (nothing in its arguments changes it). */
export interface CallToolOptions extends Scope {
  /** The conversation the call is part of: a fact `memory_remember` stores records it as its session. */
  readonly sessionId?: string;
  readonly signal?: AbortSignal;
}

/** Options of {@link Memory.messages}. */
export interface MessagesOptions extends Scope {
  /** Default `'default'`. */
  readonly sessionId?: string;
  /** The last this many events of the session (default 1,000, at most 10,000). */
  readonly limit?: number;
}

/** Options of {@link Memory.clearMessages}. */
export interface ClearMessagesOptions extends Scope {
  /** Default `'default'`. */
  readonly sessionId?: string;
}

/** Long-term memory in one object. Every method validates first: bad input is a typed error and changes nothing. */
export interface Memory {
  /** The agent calls act for by default. */
  readonly agentId: string;
  /** Remembers a text (deduplicated) or a conversation (extracted with the model, else logged as given). */
  add(input: string | readonly ChatMessage[], options?: AddOptions): Promise<AddResult>;
  /** Hybrid search (words and meaning), best first, each hit explained. */
  search(query: string, options?: SearchOptions): Promise<readonly SearchHit[]>;
  /** One memory by id (any lifecycle), or null. */
  get(id: string, options?: Scope): Promise<MemoryItem | null>;
  /** Changes a memory; new text makes a new version (returned) and keeps the old one in its history. */
  update(id: string, change: string | MemoryChange, options?: UpdateOptions): Promise<MemoryItem>;
  /** Forgets a memory and its earlier versions (a tombstone keeps who, when and why); false when there was none. */
  delete(id: string, options?: ForgetOptions): Promise<boolean>;
  /**
   * Forgets every memory of the scope, with its events: the whole agent's (and its skills), or with a `userId`
   * only that user's memories and events (the agent's own and other users' stay); resolves to how many memories.
   */
  deleteAll(options?: Scope): Promise<number>;
  /** Every stored version of a memory, oldest first (the current one last); forgotten versions are gone. */
  history(id: string, options?: Scope): Promise<readonly MemoryVersion[]>;
  /** The agent's memories in id order (active ones unless `includeInactive`). */
  list(options?: ListOptions): Promise<readonly MemoryItem[]>;
  /** Bulk write: stored at once (found by words), embedded in the background; `flush()` waits. */
  ingest(input: readonly string[] | readonly ChatMessage[], options?: IngestOptions): Promise<IngestSummary>;
  /**
   * One maintenance pass (decay, merges, archival; model steps with a model), its output embedded. Merges,
   * reflections and personas stay inside each user; with a `userId`, the pass touches only that user's memories.
   */
  maintain(options?: Scope & { readonly force?: boolean }): Promise<MaintenancePassResult>;
  /**
   * A backup: the store's export records (a header, every memory, event, cursor, skill, link and history
   * row, then an end record counting them) — every agent's, or `agentId`'s; with their vectors when `vectors`.
   * The same records `engram export` writes, one per line with `formatExportLine`.
   */
  export(options?: ExportOptions): AsyncIterable<ExportRecord>;
  /**
   * Restores a backup (records as `export` gives them, or `parseExportLine` reads them), with the store's
   * checks: every record is validated, counts are compared with the end record, and a record stored with
   * other values is a conflict left as stored. Imported memories start their decay clock now unless
   * `keepAges`; `agentId` imports every record into that agent. Resolves to what was written. A restore is
   * for the whole agent: a memory opened with a `userId` refuses it (`ENGRAM_MEMORY_INVALID_INPUT`).
   */
  import(
    records: AsyncIterable<ExportRecord> | Iterable<ExportRecord>,
    options?: ImportOptions,
  ): Promise<ImportSummary>;
  /** Health counts and runtime figures (numbers and enum keys only) for the agent, or every agent. */
  health(options?: { readonly agentId?: string | null }): Promise<HealthDto>;
  /** The core block and the recall block for `query` (null: the core block only), within a token budget. */
  context(query: string | null, options?: ContextOptions): Promise<MemoryContext>;
  /** The model-facing tools (JSON Schema inputs): search, remember, get, update, forget and the skills. */
  readonly toolDefinitions: readonly ToolSpec[];
  /** Runs one model tool call; bad arguments are `ok: false` with a short explanation, never a throw. */
  callTool(name: string, args: unknown, options?: CallToolOptions): Promise<ToolResult>;
  /** A session's logged messages, tool calls and results, in order, since the session was last cleared. */
  messages(options?: MessagesOptions): Promise<readonly LoggedMessage[]>;
  /**
   * Starts the session's history afresh: `messages` reads only what is logged after this call. Nothing is deleted:
   * the log keeps every entry (its memories stay searchable, export carries them); `deleteAll` forgets.
   */
  clearMessages(options?: ClearMessagesOptions): Promise<void>;
  /**
   * The scope's open contradictions: two current facts that say different things, both sides as the scope
   * sees them (a user sees only conflicts between the agent's memories and its own, never another user's).
   */
  conflicts(options?: ConflictsOptions): Promise<readonly MemoryConflict[]>;
  /** The scope's logged conversations by session id, with their entry counts and first and last times. */
  sessions(options?: SessionsOptions): Promise<readonly SessionInfo[]>;
  /** The scope's memories whose embedding failed, by id, each with the embedder's error code and attempts. */
  embeddingFailures(options?: EmbeddingFailuresOptions): Promise<readonly EmbeddingFailure[]>;
  /** Waits until the background drain has embedded every pending row (or stopped making progress). */
  flush(): Promise<void>;
  /** Stops the background drain after its current batch and closes the file (idempotent). */
  close(): Promise<void>;
}

/** Options of {@link Memory.export}. */
export interface ExportOptions {
  /** One agent only (default: every agent of the file; with a user, the memory's agent). */
  readonly agentId?: string | null;
  /**
   * What one user's scope sees: the agent's own memories and this user's, their events, links and history,
   * and the agent's skills (another user's are left out; the end record counts what was kept). Default: the
   * memory's default user, else no user filter.
   */
  readonly userId?: string;
  /** One conversation: its memories and events (with a `userId`, that user's view of it), no skills. */
  readonly sessionId?: string;
  /** Carry each memory's vectors with the embedder profile (default false: they import as pending). */
  readonly vectors?: boolean;
}

/** Options of {@link Memory.import}. */
export interface ImportOptions {
  /** Import every record into this agent (remapped; default: each record's own agent). */
  readonly agentId?: string;
  /** Keep the exported ages (default false: imported memories start their decay clock at the import). */
  readonly keepAges?: boolean;
  /** Called as batches are written, with the records read so far. */
  readonly onProgress?: (records: number) => void;
}
