/**
 * Scope and metadata filters, time scopes and forgetting under hostile input (fast-check, seeded). Two agents
 * hold identical rows — same content, user and session scopes and metadata — so an isolation bug shows as a
 * foreign id. For every generated filter: a valid one returns exactly the agent's rows the reference semantics
 * (`matchesMemoryFilter`) accepts, in both search arms and in listing; an invalid one is a typed error; nothing
 * ever comes from the other agent; forgetting and deleting one agent's memories never touch the other's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkMemoryFilter, matchesMemoryFilter } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever, isEngramRetrievalError, type Retriever } from '@engram/retrieval';
import { isEngramStoreError, type MemoryRecord } from '@engram/store';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteSeed } from './harness.js';
import { hostileText, shortText, wrongType } from './hostile-arbitraries.js';

const SEED = suiteSeed(0x5c0_9e5);
const RUNS = { listing: 400, lexical: 300, vector: 300, retriever: 200, forget: 60 };
const AGENTS = ['fuzz-a', 'fuzz-b'] as const;
const USERS = ['alice', 'bob', 'carol'];
const SESSIONS = ['s1', 's2'];
const KEYS = ['lang', 'stars', 'team', 'team.lead', 'flag', 'x-y'];
const VALUES: unknown[] = ['ts', 'go', 'rust', 1, 2, 3, 50, 1.5, -4, true, false, '1', '', null];
const ROWS_PER_AGENT = 60;

const embedder = createDeterministicEmbedder();
let dir: string;
let store: SqliteMemoryStore;
let retriever: Retriever;
/** Every stored row: id → agent. */
const owner = new Map<string, string>();

function metadataFor(i: number): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  if (i % 2 === 0) m.lang = ['ts', 'go', 'rust'][i % 3];
  if (i % 3 !== 0) m.stars = [1, 2, 3, 50, 1.5, -4, '1'][i % 7];
  if (i % 5 === 0) m.team = { lead: i % 10 === 0 ? 'dana' : null };
  if (i % 4 === 1) m.flag = i % 8 === 1;
  if (i % 6 === 2) m['x-y'] = 'go';
  return m;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'engram-hostile-filters-'));
  store = createSqliteMemoryStore({ path: join(dir, 'fuzz.db'), embedding: embedder.profile });
  retriever = createRetriever({ store, embedder, trackAccess: false });
  for (const agentId of AGENTS) {
    const rows = Array.from({ length: ROWS_PER_AGENT }, (_, i) => ({
      agentId,
      kind: 'fact' as const,
      content: `release note ${i} about the deploy pipeline and cache`,
      ...(i % 4 === 3 ? {} : { userId: USERS[i % 3] as string }),
      ...(i % 3 === 1 ? { sessionId: SESSIONS[i % 2] as string } : {}),
      metadata: metadataFor(i),
    }));
    const vectors = await embedder.embed(rows.map((r) => r.content));
    const stored = await store.insertMemories(
      rows.map((r, i) => ({ ...r, vector: vectors[i] as Float32Array })),
    );
    for (const r of stored) owner.set(r.id, agentId);
  }
});

afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const scalar = fc.constantFrom(...VALUES.filter((v) => v !== null));
const validCondition = fc.oneof(
  fc.record({ key: fc.constantFrom(...KEYS), op: fc.constant('eq'), value: scalar }),
  fc.record({
    key: fc.constantFrom(...KEYS),
    op: fc.constant('in'),
    values: fc.array(scalar, { minLength: 1, maxLength: 4 }),
  }),
  fc
    .record(
      {
        key: fc.constantFrom(...KEYS),
        op: fc.constant('range'),
        gt: fc.integer({ min: -5, max: 60 }),
        gte: fc.double({ min: -5, max: 60, noNaN: true }),
        lt: fc.integer({ min: -5, max: 60 }),
        lte: fc.integer({ min: -5, max: 60 }),
      },
      { requiredKeys: ['key', 'op'] },
    )
    .filter((c) => 'gt' in c || 'gte' in c || 'lt' in c || 'lte' in c),
  fc.record({ key: fc.constantFrom(...KEYS), op: fc.constantFrom('exists', 'absent') }),
);
const hostileCondition = fc.oneof(
  fc.record({
    key: fc.oneof(shortText, hostileText, wrongType),
    op: fc.constantFrom('eq', 'exists'),
    value: scalar,
  }),
  fc.record({
    key: fc.constantFrom(...KEYS),
    op: fc.oneof(shortText, wrongType),
    value: fc.oneof(scalar, wrongType),
  }),
  fc.record({
    key: fc.constantFrom(...KEYS),
    op: fc.constant('in'),
    values: fc.oneof(wrongType, fc.array(wrongType)),
  }),
  fc.record({
    key: fc.constantFrom(...KEYS),
    op: fc.constant('range'),
    gt: fc.oneof(wrongType, fc.constant(Number.NaN)),
  }),
  wrongType,
);
const filterArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        userId: fc.constantFrom(...USERS, 'nobody'),
        sessionId: fc.constantFrom(...SESSIONS),
        metadata: fc.array(validCondition, { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        userId: fc.oneof(hostileText, wrongType),
        sessionId: fc.oneof(shortText, wrongType),
        metadata: fc.oneof(
          wrongType,
          fc.array(fc.oneof(validCondition, hostileCondition), { maxLength: 20 }),
        ),
        extra: shortText,
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: wrongType },
);
const agentArb = fc.constantFrom(...AGENTS);

/** The agent's rows the reference semantics accepts, or null for a filter the rule refuses. */
async function expected(agentId: string, filter: unknown): Promise<Set<string> | null> {
  const rows: readonly MemoryRecord[] = await store.listMemories(agentId, { limit: 10_000 });
  // No filter: every row of the agent.
  if (filter === undefined) return new Set(rows.map((r) => r.id));
  const checked = checkMemoryFilter(filter);
  if (!checked.ok) return null;
  return new Set(rows.filter((r) => matchesMemoryFilter(checked.filter, r)).map((r) => r.id));
}

function assertOwn(agentId: string, ids: readonly string[]): void {
  for (const id of ids) expect(owner.get(id), 'a row of another agent came back').toBe(agentId);
}

async function check<T>(name: keyof typeof RUNS, property: fc.IAsyncProperty<T>): Promise<void> {
  let h = SEED;
  for (const ch of name) h = (Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0) ^ (h >>> 7);
  const seed = h >>> 0;
  const details = await fc.check(property, { seed, numRuns: RUNS[name] });
  if (details.failed) {
    const cause = details.errorInstance;
    throw new Error(
      `${name} failed (suite seed ${SEED}, property seed ${seed}): ${cause instanceof Error ? cause.message : String(cause)}\n${(fc.defaultReportMessage(details) ?? '').slice(0, 10_000)}`,
      { cause },
    );
  }
  console.log(`[reliability:hostile-filters] ${name}: seed ${seed}, ${details.numRuns} cases`);
}

describe('hostile scope and metadata filters', () => {
  it('listMemories: exactly the rows the reference semantics accepts, or a typed error', async () => {
    await check(
      'listing',
      fc.asyncProperty(agentArb, filterArb, async (agentId, filter) => {
        const want = await expected(agentId, filter);
        try {
          const rows = await store.listMemories(agentId, { filter: filter as never, limit: 10_000 });
          expect(want, 'a filter the rule refuses was accepted').not.toBeNull();
          assertOwn(
            agentId,
            rows.map((r) => r.id),
          );
          expect(new Set(rows.map((r) => r.id))).toEqual(want);
        } catch (error) {
          if (want !== null) throw error;
          expect(isEngramStoreError(error) && error.code === 'ENGRAM_STORE_INVALID_INPUT').toBe(true);
          expect((error as Error).message).not.toMatch(/SELECT|json_each/);
        }
      }),
    );
  });

  it('searchLexical and searchVector: every passing own row is found, nothing else', async () => {
    await check(
      'lexical',
      fc.asyncProperty(agentArb, filterArb, async (agentId, filter) => {
        const want = await expected(agentId, filter);
        try {
          const { hits } = await store.searchLexical({
            agentId,
            terms: ['deploy'],
            limit: 1000,
            filter: filter as never,
          });
          expect(want).not.toBeNull();
          assertOwn(
            agentId,
            hits.map((h) => h.id),
          );
          expect(new Set(hits.map((h) => h.id))).toEqual(want);
        } catch (error) {
          if (want !== null) throw error;
          expect(isEngramStoreError(error)).toBe(true);
        }
      }),
    );
    const [query] = await embedder.embed(['deploy pipeline cache']);
    await check(
      'vector',
      fc.asyncProperty(agentArb, filterArb, fc.integer({ min: 1, max: 20 }), async (agentId, filter, k) => {
        const want = await expected(agentId, filter);
        try {
          const hits = await store.searchVector({
            agentId,
            vector: query as Float32Array,
            k,
            filter: filter as never,
          });
          expect(want).not.toBeNull();
          assertOwn(
            agentId,
            hits.map((h) => h.id),
          );
          // A filter never starves the top k: as many hits as passing rows, up to k.
          expect(hits).toHaveLength(Math.min(k, want?.size ?? 0));
          for (const h of hits) expect(want?.has(h.id)).toBe(true);
        } catch (error) {
          if (want !== null) throw error;
          expect(isEngramStoreError(error)).toBe(true);
        }
      }),
    );
  });

  it('retriever.search with hostile filter, asOf and includeHistory: own passing rows or a typed error', async () => {
    const timeArb = fc.record(
      {
        asOf: fc.oneof(fc.integer({ min: 0, max: 2 ** 45 }), wrongType),
        includeHistory: fc.oneof(fc.boolean(), wrongType),
      },
      { requiredKeys: [] },
    );
    await check(
      'retriever',
      fc.asyncProperty(agentArb, filterArb, timeArb, async (agentId, filter, time) => {
        const want = await expected(agentId, filter);
        let answer: Awaited<ReturnType<Retriever['search']>>;
        try {
          answer = await retriever.search(agentId, 'deploy pipeline', {
            limit: 10,
            filter: filter as never,
            ...(time as object),
          });
        } catch (error) {
          expect(isEngramRetrievalError(error), 'an untyped error escaped').toBe(true);
          return;
        }
        expect(want, 'a filter the rule refuses was accepted').not.toBeNull();
        expect(answer.execution.outcome).toBe('completed');
        assertOwn(
          agentId,
          answer.results.map((r) => r.record.id),
        );
        for (const r of answer.results) expect(want?.has(r.record.id)).toBe(true);
      }),
    );
  });

  it('forget and deleteAll of one agent never touch the other agent', async () => {
    const victim = 'fuzz-b';
    const before = await store.listMemories(victim, { limit: 10_000 });
    const idsOf = (agent: string) => [...owner].filter(([, a]) => a === agent).map(([id]) => id);
    await check(
      'forget',
      fc.asyncProperty(
        fc.constantFrom(...idsOf('fuzz-a'), ...idsOf(victim)),
        fc.record(
          { actor: fc.oneof(shortText, wrongType), reason: fc.oneof(hostileText, wrongType) },
          { requiredKeys: [] },
        ),
        async (id, options) => {
          try {
            await store.forgetMemory('fuzz-a', id, options as never);
            expect(owner.get(id), 'forgot another agent’s row').toBe('fuzz-a');
          } catch (error) {
            expect(isEngramStoreError(error)).toBe(true);
          }
        },
      ),
    );
    await store.deleteAll('fuzz-a', { actor: 'fuzz' });
    expect(await store.listMemories('fuzz-a')).toEqual([]);
    expect(await store.listMemories(victim, { limit: 10_000 })).toEqual(before);
    const { hits } = await store.searchLexical({ agentId: victim, terms: ['deploy'], limit: 1000 });
    expect(hits).toHaveLength(ROWS_PER_AGENT);
  });
});
