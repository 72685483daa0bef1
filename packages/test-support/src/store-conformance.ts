/**
 * The conformance suite of the store port (`MemoryStore` of `@engram/store`): the behaviours every adapter
 * promises, written once and run by each adapter's native tests (SQLite, PostgreSQL) with its own factory.
 * Store-specific behaviour (files, encryption, FTS5 internals, leases) stays with each store's tests.
 *
 * This file holds the first part and registers the others (`conformance-*.ts`: records, events, search, the
 * vector query's bad input, the duplicate rule, facts, maintenance, chunks, embedding states, user scopes). The port is described structurally
 * (`ConformanceStore` here, `ConformancePort` in `conformance-port.ts`: the methods and fields the suite uses),
 * so this package needs no dependency on the store; both adapters satisfy it as they are.
 *
 * Longer than 400 lines: the structural port of the first part and its tests are one contract, read as a
 * whole by anyone writing an adapter.
 */
import { describe, expect, it } from 'vitest';
import { describeBacklogConformance } from './conformance-backlog.js';
import { describeProcessBeatConformance } from './conformance-beats.js';
import { describeChunkConformance } from './conformance-chunks.js';
import { describeDedupeConformance } from './conformance-dedupe.js';
import { describeEmbeddingConformance } from './conformance-embedding.js';
import { describeEventConformance } from './conformance-events.js';
import { describeFactsConformance } from './conformance-facts.js';
import { describeLeaseConformance } from './conformance-lease.js';
import { describeLifecycleConformance } from './conformance-lifecycle.js';
import { type ConformanceOpen, type ConformancePort, withPort } from './conformance-port.js';
import { describeRecordConformance } from './conformance-records.js';
import { describeScopeConformance } from './conformance-scope.js';
import { describeSearchConformance } from './conformance-search.js';
import { describeTransferConformance } from './conformance-transfer.js';
import { describeVectorInputConformance } from './conformance-vector-input.js';

/** The fields of a memory record the suite reads. */
export interface ConformanceRecord {
  readonly id: string;
  readonly agentId: string;
  readonly content: string;
  readonly revision: number;
  readonly lifecycle: string;
  readonly supersededBy: string | null;
  readonly embeddingState: string;
  readonly accessCount: number;
  readonly tags: readonly string[];
}

type Rec = ConformanceRecord;
type NewMem = {
  readonly id?: string;
  readonly agentId: string;
  readonly kind: 'fact' | 'semantic' | 'event';
  readonly content: string;
  readonly tags?: readonly string[];
  readonly vector?: Float32Array;
};

/** The store port as the suite uses it (both adapters satisfy it structurally). */
export interface ConformanceStore {
  insertMemory(input: NewMem): Promise<Rec>;
  insertMemories(inputs: readonly NewMem[]): Promise<readonly Rec[]>;
  getMemory(agentId: string, id: string): Promise<Rec | null>;
  listMemories(
    agentId: string,
    options?: { readonly limit?: number; readonly afterId?: string },
  ): Promise<readonly Rec[]>;
  updateMemory(
    agentId: string,
    id: string,
    expectedRevision: number,
    patch: { readonly content?: string; readonly importance?: number; readonly tags?: readonly string[] },
  ): Promise<Rec>;
  deleteMemory(agentId: string, id: string): Promise<boolean>;
  recordAccess(agentId: string, ids: readonly string[], at?: number): Promise<void>;
  archiveMemory(agentId: string, id: string, expectedRevision?: number): Promise<Rec>;
  supersedeMemory(
    agentId: string,
    oldId: string,
    expectedRevision: number,
    replacement: NewMem,
  ): Promise<{ readonly superseded: Rec; readonly replacement: Rec }>;
  revalidate(
    agentId: string,
    candidates: readonly { readonly id: string; readonly revision?: number }[],
  ): Promise<readonly Rec[]>;
  searchLexical(query: {
    readonly agentId: string;
    readonly terms: readonly string[];
    readonly limit: number;
    readonly mode?: 'any' | 'all';
    readonly tags?: readonly string[];
  }): Promise<{
    readonly hits: readonly {
      readonly id: string;
      readonly score: number;
      readonly chunk?: { readonly index: number; readonly start: number; readonly end: number };
    }[];
  }>;
  searchVector(query: {
    readonly agentId: string;
    readonly vector: Float32Array;
    readonly k: number;
  }): Promise<readonly { readonly id: string; readonly similarity: number }[]>;
  listPendingEmbeddings(options: { readonly limit: number; readonly agentId?: string }): Promise<
    readonly {
      readonly id: string;
      readonly revision: number;
      readonly content: string;
      readonly chunk?: number;
    }[]
  >;
  commitEmbeddings(
    outcomes: readonly (
      | {
          readonly id: string;
          readonly revision: number;
          readonly state: 'ready';
          readonly vector: Float32Array;
          readonly chunk?: number;
        }
      | {
          readonly id: string;
          readonly revision: number;
          readonly state: 'error' | 'ftsOnly';
          readonly chunk?: number;
        }
    )[],
  ): Promise<{
    readonly ready: number;
    readonly error: number;
    readonly ftsOnly: number;
    readonly stale: number;
  }>;
  countEmbeddingBacklog(): Promise<{
    readonly total: number;
    readonly byAgent: Readonly<Record<string, number>>;
  }>;
  appendEvents(
    agentId: string,
    sessionId: string,
    events: readonly {
      readonly seq: number;
      readonly type: 'message';
      readonly role: string;
      readonly content: string;
    }[],
  ): Promise<{ readonly appended: number; readonly skipped: number; readonly lastSeq: number }>;
  readEvents(
    agentId: string,
    sessionId: string,
    fromSeq: number,
    toSeq: number,
  ): Promise<readonly { readonly seq: number; readonly content: string }[]>;
  getCursor(agentId: string, sessionId: string): Promise<number>;
  ingestBatch(batch: {
    readonly agentId: string;
    readonly sessionId: string;
    readonly expectedCursor: number;
    readonly nextCursor: number;
    readonly memories: readonly NewMem[];
  }): Promise<readonly Rec[]>;
  writeSkill(input: {
    readonly agentId: string;
    readonly name: string;
    readonly description: string;
    readonly content: string;
  }): Promise<{
    readonly created: boolean;
    readonly skill: { readonly name: string; readonly content: string };
  }>;
  listSkills(agentId: string): Promise<readonly { readonly name: string }[]>;
  getSkill(agentId: string, name: string): Promise<{ readonly content: string } | null>;
  health(agentId?: string): Promise<
    | {
        readonly ok: true;
        readonly health: {
          readonly totals: {
            readonly memories: number;
            readonly events: number;
            readonly facts: number;
            readonly skills: number;
          };
          readonly byLifecycle: Readonly<Record<string, number>>;
        };
      }
    | { readonly ok: false; readonly code: string }
  >;
  listAgents(): Promise<readonly string[]>;
}

/** One store under test and how to close it. */
export interface ConformanceHarness {
  readonly store: ConformancePort;
  /** A second store instance on the same database or file (another worker), with the same clock. */
  openSecond(): Promise<{ readonly store: ConformancePort; close(): Promise<void> | void }>;
  /** Runs one statement on the store's database behind the store's back (the damaged-row cases). */
  corrupt?(sql: string): Promise<void>;
  close(): Promise<void> | void;
}

const v = (...xs: number[]): Float32Array => new Float32Array(xs);

/**
 * Registers the conformance suite for one adapter. `open` makes an empty store with the given clock, bound to
 * `CONFORMANCE_PROFILE` (or to no profile when `vectors` is false).
 */
export function describeStoreConformance(name: string, open: ConformanceOpen): void {
  const withStore = (fn: (s: ConformanceStore) => Promise<void>) => withPort(open, fn);
  describeRecordConformance(name, open);
  describeEventConformance(name, open);
  describeSearchConformance(name, open);
  describeVectorInputConformance(name, open);
  describeDedupeConformance(name, open);
  describeFactsConformance(name, open);
  describeLifecycleConformance(name, open);
  describeChunkConformance(name, open);
  describeEmbeddingConformance(name, open);
  describeLeaseConformance(name, open);
  describeProcessBeatConformance(name, open);
  describeTransferConformance(name, open);
  describeScopeConformance(name, open);
  describeBacklogConformance(name, open);

  describe(`store port conformance: ${name}`, () => {
    it(
      'bad input is a typed error and writes nothing; a taken id is a conflict',
      withStore(async (s) => {
        await expect(s.insertMemory({ agentId: '', kind: 'fact', content: 'x' })).rejects.toMatchObject({
          code: 'ENGRAM_STORE_INVALID_INPUT',
        });
        await expect(
          s.insertMemories([
            { agentId: 'a', kind: 'fact', content: 'ok' },
            { agentId: 'a', kind: 'fact', content: '   ' },
          ]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_INVALID_INPUT' });
        await expect(
          s.insertMemory({ agentId: 'a', kind: 'fact', content: 'v', vector: v(1, 0) }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_DIMENSIONS' });
        expect(await s.listMemories('a')).toEqual([]);
        await s.insertMemory({ id: 'fixed', agentId: 'a', kind: 'fact', content: 'one' });
        await expect(
          s.insertMemory({ id: 'fixed', agentId: 'b', kind: 'fact', content: 'two' }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
        expect(await s.listAgents()).toEqual(['a']);
      }),
    );

    it(
      'agents are isolated in reads, lexical and vector search',
      withStore(async (s) => {
        const a = await s.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: 'the blue falcon nests high',
          vector: v(1, 0, 0, 0),
        });
        const b = await s.insertMemory({
          agentId: 'b',
          kind: 'fact',
          content: 'the blue falcon of agent b',
          vector: v(1, 0, 0, 0),
        });
        expect(await s.getMemory('a', b.id)).toBeNull();
        const lex = await s.searchLexical({ agentId: 'a', terms: ['falcon'], limit: 10 });
        expect(lex.hits.map((h) => h.id)).toEqual([a.id]);
        const vec = await s.searchVector({ agentId: 'a', vector: v(1, 0.1, 0, 0), k: 10 });
        expect(vec.map((h) => h.id)).toEqual([a.id]);
        expect(vec[0]?.similarity).toBeGreaterThan(0.99);
      }),
    );

    it(
      'lexical any-mode ranks by BM25, filters tags, drops deleted and archived rows',
      withStore(async (s) => {
        const one = await s.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: 'kafka consumer lag alert',
          tags: ['topic:ops'],
        });
        const two = await s.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: 'kafka kafka partitions rebalance',
        });
        await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'postgres vacuum schedule' });
        const hits = (await s.searchLexical({ agentId: 'a', terms: ['kafka', 'lag'], limit: 10 })).hits;
        expect(hits.map((h) => h.id)).toEqual([one.id, two.id]);
        expect(hits[0]?.score ?? 0).toBeGreaterThan(hits[1]?.score ?? 0);
        const tagged = await s.searchLexical({
          agentId: 'a',
          terms: ['kafka'],
          limit: 10,
          tags: ['topic:ops'],
        });
        expect(tagged.hits.map((h) => h.id)).toEqual([one.id]);
        await s.archiveMemory('a', one.id);
        expect(await s.deleteMemory('a', two.id)).toBe(true);
        expect(await s.deleteMemory('a', two.id)).toBe(false);
        expect((await s.searchLexical({ agentId: 'a', terms: ['kafka'], limit: 10 })).hits).toEqual([]);
      }),
    );

    it(
      'lexical all-mode needs every term; a path matches only as a phrase; CJK terms match',
      withStore(async (s) => {
        const both = await s.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: 'retry budget for the payment worker',
        });
        await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'payment refunds are manual' });
        const login = await s.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: 'see src/auth/login.ts for the flow',
        });
        await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'see src/auth/logout.ts for the flow' });
        const cjk = await s.insertMemory({ agentId: 'a', kind: 'fact', content: '数据库连接池的配置' });
        const all = await s.searchLexical({
          agentId: 'a',
          terms: ['payment', 'retry'],
          limit: 10,
          mode: 'all',
        });
        expect(all.hits.map((h) => h.id)).toEqual([both.id]);
        const path = await s.searchLexical({ agentId: 'a', terms: ['src/auth/login.ts'], limit: 10 });
        expect(path.hits.map((h) => h.id)).toEqual([login.id]);
        const zh = await s.searchLexical({ agentId: 'a', terms: ['连接池'], limit: 10 });
        expect(zh.hits.map((h) => h.id)).toEqual([cjk.id]);
        const short = await s.searchLexical({ agentId: 'a', terms: ['配置'], limit: 10 });
        expect(short.hits.map((h) => h.id)).toEqual([cjk.id]);
      }),
    );

    it(
      'a long memory is chunked: a hit names the chunk, the drain embeds each chunk',
      withStore(async (s) => {
        const filler = 'Routine notes about the weekly planning meeting and its agenda. '.repeat(30);
        const long = await s.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: `${filler}The zebra migration starts in July.`,
        });
        const hit = (await s.searchLexical({ agentId: 'a', terms: ['zebra'], limit: 5 })).hits[0];
        expect(hit?.id).toBe(long.id);
        expect(hit?.chunk?.index ?? 0).toBeGreaterThan(0);
        expect(long.content.slice(hit?.chunk?.start, hit?.chunk?.end)).toContain('zebra');
        const pending = await s.listPendingEmbeddings({ limit: 100 });
        expect(pending.length).toBeGreaterThan(1);
        expect(pending.every((p) => p.id === long.id && p.chunk !== undefined)).toBe(true);
        const result = await s.commitEmbeddings(
          pending.map((p) => ({
            id: p.id,
            revision: p.revision,
            state: 'ready' as const,
            vector: v(0, 1, 0, p.chunk ?? 0),
            ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
          })),
        );
        expect(result.ready).toBe(pending.length);
        expect((await s.getMemory('a', long.id))?.embeddingState).toBe('ready');
        expect((await s.countEmbeddingBacklog()).total).toBe(0);
      }),
    );

    it(
      'embedding commits are revision-checked: an edited row is stale and stays pending',
      withStore(async (s) => {
        const m = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'first text' });
        const n = await s.insertMemory({ agentId: 'b', kind: 'fact', content: 'other agent' });
        expect(await s.countEmbeddingBacklog()).toEqual({ total: 2, byAgent: { a: 1, b: 1 } });
        const [item] = await s.listPendingEmbeddings({ limit: 10, agentId: 'a' });
        expect(item?.id).toBe(m.id);
        await s.updateMemory('a', m.id, 1, { content: 'second text' });
        const r = await s.commitEmbeddings([
          { id: m.id, revision: 1, state: 'ready', vector: v(1, 0, 0, 0) },
          { id: n.id, revision: 1, state: 'ready', vector: v(0, 1, 0, 0) },
        ]);
        expect(r).toEqual({ ready: 1, error: 0, ftsOnly: 0, stale: 1 });
        expect((await s.getMemory('a', m.id))?.embeddingState).toBe('pending');
        expect((await s.getMemory('b', n.id))?.embeddingState).toBe('ready');
        expect(
          (await s.searchVector({ agentId: 'b', vector: v(0, 1, 0, 0), k: 3 })).map((h) => h.id),
        ).toEqual([n.id]);
      }),
    );

    it(
      'supersede keeps the lineage; revalidate keeps only active rows of the expected revision',
      withStore(async (s) => {
        const old = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'the office is in Lyon' });
        const { superseded, replacement } = await s.supersedeMemory('a', old.id, 1, {
          agentId: 'a',
          kind: 'fact',
          content: 'the office is in Paris',
        });
        expect(superseded.lifecycle).toBe('superseded');
        expect(superseded.supersededBy).toBe(replacement.id);
        await expect(
          s.supersedeMemory('a', old.id, 1, { agentId: 'a', kind: 'fact', content: 'x' }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
        const live = await s.revalidate('a', [
          { id: old.id },
          { id: replacement.id, revision: 1 },
          { id: replacement.id },
        ]);
        expect(live.map((r) => r.id)).toEqual([replacement.id]);
        expect(await s.revalidate('a', [{ id: replacement.id, revision: 2 }])).toEqual([]);
      }),
    );

    it(
      'ingestion moves the cursor by compare-and-set with its memories, all or nothing',
      withStore(async (s) => {
        expect(await s.getCursor('a', 's1')).toBe(0);
        const mem = { agentId: 'a', kind: 'semantic' as const, content: 'learned fact' };
        await s.ingestBatch({
          agentId: 'a',
          sessionId: 's1',
          expectedCursor: 0,
          nextCursor: 3,
          memories: [mem],
        });
        expect(await s.getCursor('a', 's1')).toBe(3);
        await expect(
          s.ingestBatch({ agentId: 'a', sessionId: 's1', expectedCursor: 0, nextCursor: 5, memories: [mem] }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
        await expect(
          s.ingestBatch({ agentId: 'a', sessionId: 's2', expectedCursor: 2, nextCursor: 5, memories: [mem] }),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_REVISION_CONFLICT' });
        expect(await s.listMemories('a')).toHaveLength(1);
        expect(await s.getCursor('a', 's1')).toBe(3);
      }),
    );
  });
}
