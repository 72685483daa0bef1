/**
 * Hostile and malformed input through the public write, search and tool-call entry points (fast-check,
 * seeded). Each input either succeeds or gets a typed error; the process never crashes; the database stays
 * consistent and its counts match the acknowledged writes; another agent's data — canary rows identical to
 * what the fuzzer writes — never comes back; an exact duplicate of an active row is never stored twice (the
 * insert gives the existing row back); look-alike agent ids (surrounding whitespace, NFD) are refused, never
 * silently a second agent.
 *
 * Longer than 400 lines on purpose: every property shares one fuzzed store and its ledger (owners, counts, the
 * victim's canaries), which the last test checks as a whole.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkAgentIdForm, contentHash, MEMORY_KINDS } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever, isEngramRetrievalError, type Retriever } from '@engram/retrieval';
import { isEngramStoreError, type MemoryRecord, type NewMemory } from '@engram/store';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import { createToolHandler, MEMORY_TOOL_NAMES, type ToolHandler } from '@engram/tools';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSISTENT, consistencyProblems, inspectDatabase, suiteSeed } from './harness.js';
import {
  fragment,
  hostileKind,
  hostileNumber,
  hostileTags,
  hostileText,
  hostileVector,
  LEAK_MARKER,
  rarely,
  rawJson,
  shortStorable,
  shortText,
  storableText,
  unitNumber,
  wrongType,
} from './hostile-arbitraries.js';

const SEED = suiteSeed(0x0bad_f00d);
const RUNS = {
  insertMemory: 3000,
  updateMemory: 1500,
  appendEvents: 1500,
  searchLexical: 2000,
  searchVector: 1500,
  retrieverSearch: 2000,
  toolCalls: 3000,
  batchWrites: 1500,
};
const VICTIM = 'victim-agent';
const CANARY = 'victim-canary';
const TOOL_AGENT = 'fuzz-tools';
/** A skill name both the victim and the fuzzer use: each agent's skill is its own. */
const SHARED_SKILL = 'shared-skill';
const DIMENSIONS = 128;

const embedder = createDeterministicEmbedder();
let dir: string;
let path: string;
let store: SqliteMemoryStore;
let retriever: Retriever;
let tools: ToolHandler;

/** Every memory the fuzzer wrote successfully: id → agent. */
const owner = new Map<string, string>();
/** Acknowledged memories per agent (store inserts and tool `memory_remember` inserts). */
const memoryCount = new Map<string, number>();
/** Acknowledged appended events per agent. */
const eventCount = new Map<string, number>();
const cases: Record<string, number> = {};
const outcomes = { succeeded: 0, typedErrors: 0 };
/** Per entry point: successes, typed errors, search hits checked, cases carrying a 1 MB string. */
const perEntry: Record<string, { ok: number; typedError: number; hits: number; huge1MB: number }> = {};
let current = '';

function entry(): { ok: number; typedError: number; hits: number; huge1MB: number } {
  const existing = perEntry[current];
  if (existing !== undefined) return existing;
  const created = { ok: 0, typedError: 0, hits: 0, huge1MB: 0 };
  perEntry[current] = created;
  return created;
}

function tally(kind: 'ok' | 'typedError', hits = 0): void {
  entry()[kind] += 1;
  entry().hits += hits;
  if (kind === 'ok') outcomes.succeeded += 1;
  else outcomes.typedErrors += 1;
}

/** Counts a case whose input carries a string of at least 1 MB (anywhere one level deep). */
function noteHuge(...values: unknown[]): void {
  const big = (v: unknown): boolean => typeof v === 'string' && v.length >= 1 << 20;
  const found = values.some(
    (v) =>
      big(v) ||
      (Array.isArray(v) && v.some(big)) ||
      (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).some(big)),
  );
  if (found) entry().huge1MB += 1;
}
let canaryRows = 0;
/** What the accepted batch writes did (so the property is not satisfied by refusals alone). */
const batchWritten = { insertMemoriesRows: 0, ingestBatchRows: 0, embeddingsReady: 0, embeddingsOther: 0 };
/** Inserts that stored nothing and gave an exact duplicate's row back (so that path is exercised). */
const duplicatesGivenBack = { insertMemory: 0, batchWrites: 0 };

function bump(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

/** A rejection must be a typed error whose message carries no user content. */
function expectTyped(err: unknown, guard: (e: unknown) => boolean): void {
  expect(guard(err), `untyped error: ${(err as Error)?.name}`).toBe(true);
  expect((err as Error).message).not.toContain(LEAK_MARKER);
  tally('typedError');
}

/** Look-alikes of real agents (surrounding whitespace, the NFD spelling of `fuzz-é`): always refused. */
const LOOKALIKE_AGENTS: readonly string[] = [
  'fuzz-a ',
  ' fuzz-b',
  'fuzz-a\u00a0',
  'fuzz-e\u0301',
  `${VICTIM} `,
  `\u2003${VICTIM}`,
];
/** Refusals of a look-alike agent id, per entry point that took one. */
const lookalikesRefused: Record<string, number> = {};

/** Counts a refusal of a look-alike id; an accepted look-alike fails the test. */
function noteLookalike(agentId: unknown, accepted: boolean): void {
  if (typeof agentId !== 'string' || checkAgentIdForm(agentId) === null) return;
  expect(accepted, 'a look-alike agent id was accepted as a second agent').toBe(false);
  lookalikesRefused[current] = (lookalikesRefused[current] ?? 0) + 1;
}

const agentArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('fuzz-a', 'fuzz-b') },
  { weight: 1, arbitrary: fc.constant('fuzz-\u00e9') },
  { weight: 1, arbitrary: fc.constantFrom(...LOOKALIKE_AGENTS) },
  { weight: 2, arbitrary: shortText.filter((s) => s !== VICTIM) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\u0000', 'a\u0000', '\ud800', 'x'.repeat(300)) },
  { weight: 1, arbitrary: wrongType },
);

/** A valid value three times in four, a hostile number otherwise. */
function mostly(valid: fc.Arbitrary<number>): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 3, arbitrary: valid }, { weight: 1, arbitrary: hostileNumber });
}

function optional<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.option(arb, { nil: undefined, freq: 2 });
}

/** Texts drawn again and again (two spellings of one normalised text among them): exact duplicates. */
const REPEATED_TEXTS: readonly string[] = [
  'The build uses pnpm',
  'the BUILD  uses pnpm',
  'Deploys run on Fridays',
];

const newMemoryArb = fc.record(
  {
    id: rarely(fc.oneof(fc.uuid(), shortStorable, shortText).filter((s) => !s.startsWith(CANARY))),
    agentId: agentArb,
    kind: hostileKind,
    content: fc.oneof(
      { weight: 3, arbitrary: storableText },
      { weight: 2, arbitrary: hostileText },
      { weight: 1, arbitrary: fc.constantFrom(...REPEATED_TEXTS) },
    ),
    importance: optional(unitNumber),
    confidence: rarely(unitNumber),
    tags: optional(hostileTags),
    sessionId: rarely(fc.oneof(shortStorable, shortText)),
    seqFrom: rarely(hostileNumber),
    seqTo: rarely(hostileNumber),
    createdAt: rarely(hostileNumber),
    vector: optional(hostileVector(DIMENSIONS)),
  },
  { requiredKeys: ['agentId', 'kind', 'content'] },
);

/** A memory the store must accept (batches mix these with hostile ones, so that some batches go through). */
const validMemoryArb = fc.record(
  {
    agentId: fc.constantFrom('fuzz-a', 'fuzz-b'),
    kind: fc.constantFrom('fact', 'semantic', 'episodic', 'reflection'),
    content: storableText,
    importance: optional(fc.double({ min: 0, max: 1, noNaN: true })),
    vector: optional(hostileVector(DIMENSIONS).filter(validVector)),
  },
  { requiredKeys: ['agentId', 'kind', 'content'] },
);
const batchMemoryArb = fc.oneof(
  { weight: 4, arbitrary: validMemoryArb },
  { weight: 1, arbitrary: newMemoryArb },
);

beforeAll(async () => {
  console.log(`[reliability:hostile] suite seed ${SEED} (replay: ENGRAM_RELIABILITY_SEED=${SEED})`);
  dir = mkdtempSync(join(tmpdir(), 'engram-hostile-'));
  path = join(dir, 'hostile.db');
  store = createSqliteMemoryStore({ path, embedding: embedder.profile });
  retriever = createRetriever({ store, embedder });
  tools = createToolHandler({ store, retriever, embedder });
  // The victim's canaries that the tools could leak: a skill and an archived range under the same pointer.
  await store.writeSkill({ agentId: VICTIM, name: SHARED_SKILL, description: CANARY, content: CANARY });
  await store.appendEvents(
    VICTIM,
    'sess-1',
    Array.from({ length: 20 }, (_, i) => ({
      seq: i + 1,
      type: 'message' as const,
      role: 'user',
      content: `${CANARY} ${i}`,
    })),
  );
  await store.appendEvents(
    TOOL_AGENT,
    'sess-1',
    Array.from({ length: 20 }, (_, i) => ({
      seq: i + 1,
      type: 'message' as const,
      role: 'user',
      content: `own event ${i}`,
    })),
  );
  bump(eventCount, TOOL_AGENT, 20);
  // Rows for the tool agent's searches to find, each with the victim's identical copy.
  const seedWords = [
    'alpha',
    'bravo',
    'deploy',
    'port 8080',
    'src/auth/login.ts',
    'getUserById',
    'pnpm',
    '数据库连接池',
  ];
  for (let i = 0; i < 40; i += 1) {
    const input = {
      agentId: TOOL_AGENT,
      kind: 'fact' as const,
      content: `${seedWords[i % seedWords.length]} "${seedWords[(i * 3) % seedWords.length]}" NEAR( row ${i}`,
      tags: [`file:src/${i % 4}.ts`],
    };
    const [vector] = await embedder.embed([input.content]);
    const record = await store.insertMemory({ ...input, vector: vector as Float32Array });
    owner.set(record.id, TOOL_AGENT);
    bump(memoryCount, TOOL_AGENT);
    await canaryCopy({ ...input, vector });
  }
});

afterAll(() => {
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Writes the victim's copy of a row the fuzzer just wrote: identical content, tags, kind and vector (none when
 * the victim already holds that text: an exact duplicate is stored once).
 */
async function canaryCopy(input: Record<string, unknown>): Promise<void> {
  const copy = await store.insertUniqueMemory({
    ...input,
    id: `${CANARY}-${canaryRows + 1}`,
    agentId: VICTIM,
  } as NewMemory);
  if (copy.created) canaryRows += 1;
}

function assertOwnIds(agentId: unknown, ids: readonly string[]): void {
  for (const id of ids) {
    expect(id.startsWith(CANARY), 'another agent\u2019s row came back').toBe(false);
    expect(owner.get(id), `a hit of another agent for ${String(agentId)}`).toBe(agentId);
  }
}

/** The documented contract of a unit number (importance, confidence): finite, in [0, 1]. */
function validUnit(value: unknown): boolean {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= 1;
}

/** The documented contract of a vector: a Float32Array of the store's dimensions, finite, non-zero. */
function validVector(value: unknown): boolean {
  if (!(value instanceof Float32Array) || value.length !== DIMENSIONS) return false;
  let norm = 0;
  for (const x of value) {
    if (!Number.isFinite(x)) return false;
    norm += x * x;
  }
  return norm > 0 && Number.isFinite(norm);
}

/**
 * What an accepted new memory must have been: the store may accept only valid input, and stores it as given.
 * A store that silently coerced NaN, a wrong-length vector or an unknown kind would fail here.
 */
function expectAcceptedAsGiven(record: MemoryRecord, given: Record<string, unknown>): void {
  expect(checkAgentIdForm(given.agentId), 'accepted a look-alike agent id').toBeNull();
  expect(record.agentId).toBe(given.agentId);
  expect(record.content).toBe(given.content);
  expect(MEMORY_KINDS as readonly unknown[]).toContain(given.kind);
  expect(record.kind).toBe(given.kind);
  for (const field of ['importance', 'confidence'] as const) {
    if (given[field] === undefined) continue;
    expect(validUnit(given[field]), `accepted an invalid ${field}`).toBe(true);
    expect(record[field] === given[field], `${field} stored as given`).toBe(true);
  }
  if (given.vector !== undefined) expect(validVector(given.vector), 'accepted an invalid vector').toBe(true);
  expect(record.embeddingState).toBe(given.vector === undefined ? 'pending' : 'ready');
}

/** Replaces a generated `{ pick: n }` id with the n-th id stored so far (of any agent). */
function withPickedId(args: unknown): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const id = (args as { id?: unknown }).id;
  if (typeof id !== 'object' || id === null || !('pick' in id)) return args;
  const ids = [...owner.keys()];
  const picked = ids.length === 0 ? 'none' : ids[(id as { pick: number }).pick % ids.length];
  return { ...args, id: picked };
}

/**
 * What an insert that stored nothing must have given back: the fuzzer's own active row of the same agent and
 * kind with the same content hash, for valid input only.
 */
function expectExistingDuplicate(record: MemoryRecord, given: Record<string, unknown>): void {
  expect(checkAgentIdForm(given.agentId), 'accepted a look-alike agent id').toBeNull();
  expect(owner.get(record.id), 'a duplicate resolved to a row the fuzzer did not write').toBe(given.agentId);
  expect(record.agentId).toBe(given.agentId);
  expect(record.kind).toBe(given.kind);
  expect(record.kind).not.toBe('event');
  expect(record.lifecycle).toBe('active');
  expect(record.contentHash).toBe(contentHash(given.content as string));
  for (const field of ['importance', 'confidence'] as const) {
    if (given[field] !== undefined)
      expect(validUnit(given[field]), `accepted an invalid ${field}`).toBe(true);
  }
  if (given.vector !== undefined) expect(validVector(given.vector), 'accepted an invalid vector').toBe(true);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

function seedOf(name: string): number {
  let h = SEED;
  for (const ch of name) h = (Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0) ^ (h >>> 7);
  return h >>> 0;
}

/** Runs a property with its own seed derived from the suite seed; fails with fast-check's report (seed, path). */
async function check<Ts>(name: keyof typeof RUNS, property: fc.IAsyncProperty<Ts>): Promise<void> {
  const seed = seedOf(name);
  current = name;
  const details = await fc.check(property, { seed, numRuns: RUNS[name] });
  if (details.failed) {
    const report = fc.defaultReportMessage(details) ?? 'property failed';
    const cause = details.errorInstance;
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw new Error(
      `${name} failed (suite seed ${SEED}, property seed ${seed}): ${reason.slice(0, 2000)}\n${report.slice(0, 20_000)}`,
      { cause },
    );
  }
  cases[name] = details.numRuns;
  console.log(`[reliability:hostile] ${name}: seed ${seed}, ${details.numRuns} cases`);
}

describe('hostile and malformed input through the public entry points', () => {
  it('store.insertMemory: success (mirrored to the victim), the existing duplicate, or a typed error', async () => {
    await check(
      'insertMemory',
      fc.asyncProperty(
        fc.oneof({ weight: 20, arbitrary: newMemoryArb }, { weight: 1, arbitrary: wrongType }),
        async (input) => {
          noteHuge(input);
          const agentId = (input as { agentId?: unknown } | null)?.agentId;
          let inserted: Awaited<ReturnType<SqliteMemoryStore['insertUniqueMemory']>>;
          try {
            inserted = await store.insertUniqueMemory(input as never);
          } catch (err) {
            noteLookalike(agentId, false);
            expectTyped(err, isEngramStoreError);
            return;
          }
          noteLookalike(agentId, true);
          const given = input as Record<string, unknown>;
          const { record } = inserted;
          if (!inserted.created) {
            expectExistingDuplicate(record, given);
            // The plain insert gives the same row back and stores nothing either.
            const before = await store.health(record.agentId);
            expect(await store.insertMemory(input as never)).toEqual(record);
            expect(await store.health(record.agentId)).toEqual(before);
            duplicatesGivenBack.insertMemory += 1;
            tally('ok');
            return;
          }
          expectAcceptedAsGiven(record, given);
          owner.set(record.id, record.agentId);
          bump(memoryCount, record.agentId);
          tally('ok');
          await canaryCopy(given);
        },
      ),
    );
  });

  it('store.updateMemory: never touches another agent; success or a typed error', async () => {
    const patchArb = fc.record(
      {
        content: optional(hostileText),
        kind: optional(hostileKind),
        importance: optional(unitNumber),
        confidence: optional(unitNumber),
        tags: optional(hostileTags),
        lifecycle: optional(
          fc.oneof(fc.constantFrom('active', 'archived', 'superseded', 'conflicted'), shortText),
        ),
      },
      { requiredKeys: [] },
    );
    await check(
      'updateMemory',
      fc.asyncProperty(
        fc.nat(),
        fc.constantFrom('own', 'own', 'own', 'victim', 'otherAgent', 'hostileId'),
        fc.oneof({ weight: 4, arbitrary: fc.constant('current') }, { weight: 1, arbitrary: hostileNumber }),
        fc.oneof({ weight: 10, arbitrary: patchArb }, { weight: 1, arbitrary: wrongType }),
        shortText,
        async (pick, target, revision, patch, hostileId) => {
          const ids = [...owner.keys()];
          const ownId = ids[pick % Math.max(1, ids.length)] ?? 'missing';
          const ownAgent = owner.get(ownId) ?? 'fuzz-a';
          const [agentId, id] =
            target === 'own'
              ? [ownAgent, ownId]
              : target === 'victim'
                ? [ownAgent, `${CANARY}-${1 + (pick % Math.max(1, canaryRows))}`]
                : target === 'otherAgent'
                  ? [ownAgent === 'fuzz-a' ? 'fuzz-b' : 'fuzz-a', ownId]
                  : [ownAgent, hostileId];
          const current = await store.getMemory(agentId, id).catch(() => null);
          const expected = revision === 'current' ? (current?.revision ?? 1) : revision;
          try {
            const updated = await store.updateMemory(agentId, id, expected as number, patch as never);
            expect(owner.get(updated.id), 'an update reached a row of another agent').toBe(agentId);
            expect(updated.agentId).toBe(agentId);
            const given = patch as Record<string, unknown>;
            for (const field of ['importance', 'confidence'] as const) {
              if (given[field] === undefined) continue;
              expect(validUnit(given[field]), `accepted an invalid ${field}`).toBe(true);
              expect(updated[field] === given[field], `${field} stored as given`).toBe(true);
            }
            if (given.content !== undefined) expect(updated.content).toBe(given.content);
            if (given.kind !== undefined) expect(updated.kind).toBe(given.kind);
            tally('ok');
          } catch (err) {
            expectTyped(err, isEngramStoreError);
          }
        },
      ),
    );
  });

  it('store.appendEvents: success (mirrored to the victim) or a typed error', async () => {
    const eventArb = fc.record(
      {
        seq: fc.oneof(
          { weight: 4, arbitrary: fc.integer({ min: 1, max: 60 }) },
          { weight: 1, arbitrary: hostileNumber },
        ),
        type: fc.oneof(fc.constantFrom('message', 'tool_call', 'tool_result'), shortText),
        role: fc.oneof(fc.constantFrom('user', 'assistant', 'tool'), shortText),
        content: fc.oneof(hostileText, wrongType),
        toolName: optional(fc.oneof(shortText, wrongType)),
        metadata: optional(
          fc.oneof(
            fc.dictionary(
              shortText,
              fc.oneof(hostileText, hostileNumber, fc.constant({ nested: [1, null] })),
            ),
            wrongType,
          ),
        ),
        createdAt: optional(hostileNumber),
      },
      { requiredKeys: ['seq', 'type', 'role', 'content'] },
    );
    await check(
      'appendEvents',
      fc.asyncProperty(
        agentArb,
        fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom('s1', 's2', 'sess-1') },
          { weight: 1, arbitrary: shortText },
        ),
        fc.oneof(
          { weight: 10, arbitrary: fc.array(eventArb, { maxLength: 5 }) },
          { weight: 1, arbitrary: wrongType },
        ),
        async (agentId, sessionId, events) => {
          if (Array.isArray(events)) noteHuge(...events);
          try {
            const result = await store.appendEvents(agentId as string, sessionId as string, events as never);
            bump(eventCount, agentId as string, result.appended);
            tally('ok');
            await store.appendEvents(VICTIM, sessionId as string, events as never).catch((err: unknown) => {
              // The victim may hold a different event at that seq from an earlier case: a typed conflict.
              expect(err).toMatchObject({ code: 'ENGRAM_STORE_CONFLICT' });
            });
            const back = await store.readEvents(agentId as string, sessionId as string, 1, 1000);
            expect(back.every((e) => e.agentId === agentId && !e.content.startsWith(CANARY))).toBe(true);
          } catch (err) {
            expectTyped(err, isEngramStoreError);
          }
        },
      ),
    );
  });

  it('store.searchLexical: only the agent\u2019s own rows, or a typed error', async () => {
    const termsArb = fc.oneof(
      { weight: 10, arbitrary: fc.array(fc.oneof(storableText, hostileText, fragment), { maxLength: 8 }) },
      { weight: 1, arbitrary: fc.constant(Array.from({ length: 100 }, (_, i) => `alpha${i}`)) },
      { weight: 1, arbitrary: wrongType },
    );
    await check(
      'searchLexical',
      fc.asyncProperty(
        agentArb,
        termsArb,
        fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom('any', 'all', undefined) },
          { weight: 1, arbitrary: shortText },
        ),
        fc.oneof(
          { weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }) },
          { weight: 1, arbitrary: hostileNumber },
        ),
        rarely(fc.oneof(fc.array(hostileKind, { maxLength: 3 }), wrongType)),
        rarely(hostileTags),
        async (agentId, terms, mode, limit, kinds, tags) => {
          noteHuge(terms);
          try {
            const result = await store.searchLexical({
              agentId,
              terms,
              mode,
              limit,
              ...(kinds === undefined ? {} : { kinds }),
              ...(tags === undefined ? {} : { tags }),
            } as never);
            assertOwnIds(
              agentId,
              result.hits.map((h) => h.id),
            );
            tally('ok', result.hits.length);
          } catch (err) {
            expectTyped(err, isEngramStoreError);
          }
        },
      ),
    );
  });

  it('store.searchVector: only the agent\u2019s own rows, or a typed error', async () => {
    await check(
      'searchVector',
      fc.asyncProperty(
        agentArb,
        hostileVector(DIMENSIONS),
        fc.oneof(
          { weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }) },
          { weight: 1, arbitrary: hostileNumber },
        ),
        async (agentId, vector, k) => {
          try {
            const hits = await store.searchVector({ agentId, vector, k } as never);
            assertOwnIds(
              agentId,
              hits.map((h) => h.id),
            );
            for (const h of hits) expect(Number.isFinite(h.similarity)).toBe(true);
            tally('ok', hits.length);
          } catch (err) {
            expectTyped(err, isEngramStoreError);
          }
        },
      ),
    );
  });

  it('retriever.search: resolves with the agent\u2019s own rows, or throws a typed retrieval error', async () => {
    const optionsArb = fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record(
          {
            limit: optional(
              fc.oneof(
                { weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }) },
                { weight: 1, arbitrary: hostileNumber },
              ),
            ),
            kinds: optional(fc.oneof(fc.array(hostileKind, { maxLength: 3 }), wrongType)),
            tags: optional(hostileTags),
            signal: optional(fc.constantFrom('aborted', 'live')),
          },
          { requiredKeys: [] },
        ),
      },
      { weight: 1, arbitrary: wrongType },
    );
    await check(
      'retrieverSearch',
      fc.asyncProperty(
        agentArb,
        fc.oneof(
          { weight: 10, arbitrary: storableText },
          { weight: 10, arbitrary: hostileText },
          { weight: 1, arbitrary: wrongType },
        ),
        optionsArb,
        async (agentId, query, options) => {
          noteHuge(query);
          let opts = options as Record<string, unknown> | undefined;
          if (typeof opts === 'object' && opts !== null && 'signal' in opts) {
            const controller = new AbortController();
            if (opts.signal === 'aborted') controller.abort();
            opts = opts.signal === undefined ? opts : { ...opts, signal: controller.signal };
          }
          try {
            const response = await retriever.search(agentId as string, query as string, opts as never);
            expect(['completed', 'disabled', 'emptyQuery', 'cancelled', 'failed']).toContain(
              response.execution.outcome,
            );
            assertOwnIds(
              agentId,
              response.results.map((r) => r.record.id),
            );
            for (const r of response.results) expect(r.record.agentId).toBe(agentId);
            tally('ok', response.results.length);
          } catch (err) {
            expectTyped(err, isEngramRetrievalError);
          }
        },
      ),
    );
  });

  it('tool calls (objects and raw JSON strings): ok or ok:false with a message; never another agent\u2019s data', async () => {
    const argsFor: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
      memory_search: fc.record(
        {
          query: fc.oneof(storableText, hostileText, wrongType),
          limit: optional(mostly(fc.integer({ min: 1, max: 25 }))),
          maxChars: optional(mostly(fc.integer({ min: 200, max: 20_000 }))),
          file: optional(fc.oneof(shortText, wrongType)),
          history: optional(fc.oneof(fc.boolean(), wrongType)),
          extra: optional(shortText),
        },
        { requiredKeys: ['query'] },
      ),
      memory_remember: fc.record(
        {
          content: fc.oneof(storableText, storableText, hostileText, wrongType),
          topic: optional(fc.oneof(shortStorable, shortText, wrongType)),
        },
        { requiredKeys: ['content'] },
      ),
      memory_get: fc.record(
        {
          pointer: fc.oneof(
            fc
              .tuple(
                fc.constantFrom('sess-1', 's1', 'x'),
                fc.integer({ min: 0, max: 30 }),
                fc.integer({ min: 0, max: 300 }),
              )
              .map(([s, a, b]) => `session/${s}#${a}-${b}`),
            shortText,
            wrongType,
          ),
          maxChars: optional(mostly(fc.integer({ min: 200, max: 20_000 }))),
        },
        { requiredKeys: ['pointer'] },
      ),
      // `id`: an index into the ids stored so far (any agent's: another agent's must never be found), or junk.
      memory_update: fc.record(
        {
          id: fc.oneof(
            fc.nat().map((n) => ({ pick: n })),
            shortText,
            wrongType,
          ),
          content: fc.oneof(storableText, hostileText, wrongType),
          reason: optional(fc.oneof(shortStorable, shortText, wrongType)),
        },
        { requiredKeys: ['id'] },
      ),
      memory_forget: fc.record(
        {
          id: fc.oneof(
            fc.nat().map((n) => ({ pick: n })),
            shortText,
            wrongType,
          ),
          reason: optional(fc.oneof(shortStorable, hostileText, wrongType)),
        },
        { requiredKeys: [] },
      ),
      skill_write: fc.record(
        {
          name: fc.oneof(fc.constantFrom('deploy', 'fix-tests', SHARED_SKILL), shortText, wrongType),
          description: fc.oneof(hostileText, wrongType),
          content: fc.oneof(hostileText, wrongType),
        },
        { requiredKeys: [] },
      ),
      skill_delete: fc.record(
        { name: fc.oneof(fc.constantFrom('deploy', SHARED_SKILL), shortText, wrongType) },
        { requiredKeys: [] },
      ),
      skill_list: fc.record(
        { maxChars: optional(mostly(fc.integer({ min: 200, max: 20_000 }))) },
        { requiredKeys: [] },
      ),
    };
    const callArb = fc
      .tuple(
        fc.oneof(
          { weight: 12, arbitrary: fc.constantFrom(...MEMORY_TOOL_NAMES) },
          { weight: 1, arbitrary: fc.constantFrom('memory_delete', '', 'MEMORY_SEARCH', '__proto__') },
        ),
        fc.oneof({ weight: 12, arbitrary: fc.constant(TOOL_AGENT) }, { weight: 1, arbitrary: agentArb }),
        fc.constantFrom('object', 'json', 'json'),
      )
      .chain(([name, agentId, form]) =>
        (Object.hasOwn(argsFor, name)
          ? (argsFor[name] as fc.Arbitrary<Record<string, unknown>>)
          : fc.dictionary(shortText, hostileText)
        ).chain((args) =>
          (form === 'object' ? fc.constant<unknown>(args) : rawJson(args)).map((a) => ({
            name,
            agentId,
            args: a,
          })),
        ),
      );
    await check(
      'toolCalls',
      fc.asyncProperty(
        fc.oneof(
          { weight: 20, arbitrary: callArb },
          {
            weight: 1,
            arbitrary: fc.record({
              name: fc.constant('memory_search'),
              agentId: fc.constant(TOOL_AGENT),
              args: wrongType,
            }),
          },
        ),
        async ({ name, agentId, args: generated }) => {
          const args = withPickedId(generated);
          noteHuge(args);
          let result: { ok: boolean; text: string; data?: unknown };
          try {
            result = await tools.execute(name, args, { agentId: agentId as string });
          } catch (err) {
            noteLookalike(agentId, false);
            expectTyped(err, isEngramRetrievalError);
            return;
          }
          noteLookalike(agentId, true);
          expect(typeof result.ok).toBe('boolean');
          expect(typeof result.text === 'string' && result.text.length > 0).toBe(true);
          // The victim's canaries never show up, unless the call itself named one (an echoed skill name).
          const named = (typeof args === 'string' ? args : safeJson(args)).includes(CANARY);
          if (!named) expect(result.text).not.toContain(CANARY);
          // The same answer as fields (an MCP client's structuredContent) keeps agents apart just as well.
          if (!named) expect(safeJson(result.data ?? null)).not.toContain(CANARY);
          if (!result.ok) {
            // Failures never echo content or queries; skill tools echo only the (pattern-checked) skill name.
            if (!name.startsWith('skill_')) expect(result.text).not.toContain(LEAK_MARKER);
            expect(result.text, 'a tool failed with an unexpected internal error').not.toContain(
              'internal error',
            );
            tally('typedError');
            return;
          }
          tally('ok', Number(/^(\d+) memor/.exec(result.text)?.[1] ?? 0));
          // A correction adds the new version; a forget erases the memory and its earlier versions.
          const updated = /^Updated: \S+ (\S+) is current; (\S+) is superseded/.exec(result.text);
          if (updated?.[1] !== undefined && updated[2] !== undefined) {
            expect(owner.get(updated[2]), 'corrected another agent’s memory').toBe(agentId);
            // A correction equal to a row the agent already has makes that row the successor: no new row.
            if (!owner.has(updated[1])) {
              owner.set(updated[1], agentId as string);
              bump(memoryCount, agentId as string);
            }
          }
          const forgot = /^Forgot memory (\S+?)(?: and (\d+) earlier versions?)?\./.exec(result.text);
          if (forgot?.[1] !== undefined) {
            expect(owner.get(forgot[1]), 'forgot another agent’s memory').toBe(agentId);
            bump(memoryCount, agentId as string, -(1 + Number(forgot[2] ?? 0)));
          }
          const remembered = /^Remembered as fact (\S+)\./.exec(result.text);
          if (remembered?.[1] !== undefined) {
            const record = await store.getMemory(agentId as string, remembered[1]);
            expect(record?.agentId).toBe(agentId);
            owner.set(remembered[1], agentId as string);
            bump(memoryCount, agentId as string);
            if (record !== null) {
              await canaryCopy({
                agentId: VICTIM,
                kind: record.kind,
                content: record.content,
                tags: [...record.tags],
              });
            }
          }
        },
      ),
    );
  });

  it('batch writes (insertMemories, ingestBatch, commitEmbeddings): all or nothing, only valid input stored', async () => {
    const outcomeArb = fc.record({
      pick: fc.nat(),
      id: rarely(shortText),
      state: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom('ready', 'ready', 'error', 'ftsOnly') },
        { weight: 1, arbitrary: fc.oneof(shortText, wrongType) },
      ),
      revision: fc.oneof(
        { weight: 4, arbitrary: fc.constant('current') },
        { weight: 1, arbitrary: hostileNumber },
      ),
      vector: hostileVector(DIMENSIONS),
    });
    const batchArb = fc.oneof(
      fc.record({
        op: fc.constant('insertMemories' as const),
        memories: fc.oneof(
          { weight: 10, arbitrary: fc.array(batchMemoryArb, { maxLength: 4 }) },
          { weight: 1, arbitrary: wrongType },
        ),
      }),
      fc.record({
        op: fc.constant('ingestBatch' as const),
        agentId: agentArb,
        sessionId: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom('ingest-1', 'ingest-2') },
          { weight: 1, arbitrary: shortText },
        ),
        sameAgent: fc.boolean(),
        expected: fc.oneof(
          { weight: 4, arbitrary: fc.constant('current') },
          { weight: 1, arbitrary: hostileNumber },
        ),
        next: fc.oneof(
          { weight: 4, arbitrary: fc.constant('advance') },
          { weight: 1, arbitrary: hostileNumber },
        ),
        memories: fc.array(batchMemoryArb, { maxLength: 3 }),
      }),
      fc.record({
        op: fc.constant('commitEmbeddings' as const),
        agentId: fc.constantFrom('fuzz-a', 'fuzz-b'),
        outcomes: fc.array(outcomeArb, { maxLength: 4 }),
      }),
    );
    const total = async (): Promise<number> => {
      const h = await store.health();
      return h.ok ? h.health.totals.memories : -1;
    };
    await check(
      'batchWrites',
      fc.asyncProperty(batchArb, async (batch) => {
        const before = await total();
        if (batch.op === 'commitEmbeddings') {
          const pending = await store.listPendingEmbeddings({ agentId: batch.agentId, limit: 16 });
          const outcomes = batch.outcomes.map((o) => {
            const row = pending[o.pick % Math.max(1, pending.length)];
            return {
              id: o.id ?? row?.id ?? 'missing',
              revision: o.revision === 'current' ? (row?.revision ?? 1) : o.revision,
              state: o.state,
              vector: o.vector,
            };
          });
          let result: Awaited<ReturnType<SqliteMemoryStore['commitEmbeddings']>>;
          try {
            result = await store.commitEmbeddings(outcomes as never);
          } catch (err) {
            expectTyped(err, isEngramStoreError);
            return;
          }
          // Accepted: every outcome was valid (a batch with one bad outcome is refused whole).
          for (const o of outcomes) {
            expect(['ready', 'error', 'ftsOnly']).toContain(o.state);
            expect(Number.isInteger(o.revision) && (o.revision as number) >= 1).toBe(true);
            if (o.state === 'ready') expect(validVector(o.vector), 'stored an invalid vector').toBe(true);
          }
          expect(result.ready + result.error + result.ftsOnly + result.stale).toBe(outcomes.length);
          batchWritten.embeddingsReady += result.ready;
          batchWritten.embeddingsOther += result.error + result.ftsOnly;
          tally('ok');
          return;
        }
        let memories: unknown = batch.memories;
        let call: () => Promise<readonly MemoryRecord[]>;
        if (batch.op === 'insertMemories') {
          call = () => store.insertMemories(memories as never);
        } else {
          if (batch.sameAgent) {
            memories = batch.memories.map((m) => ({
              ...(m as Record<string, unknown>),
              agentId: batch.agentId,
            }));
          }
          const cursor = await store.getCursor(batch.agentId as string, batch.sessionId).catch(() => 0);
          const expected = batch.expected === 'current' ? cursor : batch.expected;
          const next = batch.next === 'advance' ? cursor + batch.memories.length : batch.next;
          call = () =>
            store.ingestBatch({
              agentId: batch.agentId,
              sessionId: batch.sessionId,
              expectedCursor: expected,
              nextCursor: next,
              memories,
            } as never);
        }
        if (Array.isArray(memories)) noteHuge(...memories);
        let records: readonly MemoryRecord[];
        try {
          records = await call();
        } catch (err) {
          expectTyped(err, isEngramStoreError);
          // Refused: nothing of the batch was written.
          expect(await total(), 'a refused batch wrote rows').toBe(before);
          return;
        }
        const given = memories as Record<string, unknown>[];
        expect(records).toHaveLength(given.length);
        // A record whose row was stored before, or earlier in this batch, is an exact duplicate given back.
        const fresh = new Set<string>();
        records.forEach((record, i) => {
          const input = given[i] as Record<string, unknown>;
          if (owner.has(record.id)) {
            expectExistingDuplicate(record, input);
            duplicatesGivenBack.batchWrites += 1;
            return;
          }
          expectAcceptedAsGiven(record, input);
          fresh.add(record.id);
          owner.set(record.id, record.agentId);
          bump(memoryCount, record.agentId);
        });
        expect(await total()).toBe(before + fresh.size);
        if (batch.op === 'insertMemories') batchWritten.insertMemoriesRows += fresh.size;
        else batchWritten.ingestBatchRows += fresh.size;
        tally('ok');
      }),
    );
  });

  it('leaves the database consistent, with counts equal to the acknowledged writes', async () => {
    expect(consistencyProblems(inspectDatabase(path))).toEqual(CONSISTENT);
    for (const [agentId, n] of memoryCount) {
      const health = await store.health(agentId);
      expect(health.ok && health.health.totals.memories, `memories of ${agentId}`).toBe(n);
    }
    for (const [agentId, n] of eventCount) {
      const health = await store.health(agentId);
      expect(health.ok && health.health.totals.events, `events of ${agentId}`).toBe(n);
    }
    const victim = await store.health(VICTIM);
    expect(victim.ok && victim.health.totals.memories).toBe(canaryRows);
    // No look-alike id ever became an agent, and each entry point that takes an agent id refused some.
    for (const agent of await store.listAgents()) expect(checkAgentIdForm(agent), agent).toBeNull();
    expect(lookalikesRefused.insertMemory, 'insertMemory look-alike refusals').toBeGreaterThan(20);
    expect(lookalikesRefused.toolCalls, 'tool-call look-alike refusals').toBeGreaterThan(5);
    expect(duplicatesGivenBack.insertMemory, 'duplicates given back by insertMemory').toBeGreaterThan(10);
    expect(duplicatesGivenBack.batchWrites, 'duplicates given back by batch writes').toBeGreaterThan(10);
    // No two active rows of an agent and kind (events apart) share a content hash.
    for (const agent of await store.listAgents()) {
      const rows = await store.listMemories(agent, { lifecycles: ['active'], limit: 10_000 });
      const keys = rows.filter((r) => r.kind !== 'event').map((r) => `${r.kind}:${r.contentHash}`);
      expect(new Set(keys).size, `active duplicates of ${agent}`).toBe(keys.length);
    }
    // The victim's skill and archived range were never changed through another agent's tool calls.
    expect(await store.getSkill(VICTIM, SHARED_SKILL)).toMatchObject({
      description: CANARY,
      content: CANARY,
    });
    const archived = await store.readEvents(VICTIM, 'sess-1', 1, 20);
    expect(archived.map((e) => e.content)).toEqual(Array.from({ length: 20 }, (_, i) => `${CANARY} ${i}`));
    const total = Object.values(cases).reduce((a, b) => a + b, 0);
    console.log(
      `[reliability:hostile] ${JSON.stringify({
        seed: SEED,
        totalCases: total,
        ...outcomes,
        cases,
        canaryRows,
        lookalikesRefused,
        duplicatesGivenBack,
        fuzzAgentsWithMemories: memoryCount.size,
        acknowledgedMemories: [...memoryCount.values()].reduce((a, b) => a + b, 0),
        acknowledgedEvents: [...eventCount.values()].reduce((a, b) => a + b, 0),
        batchWritten,
        perEntry,
      })}`,
    );
    // Every entry point saw both accepted and rejected input, the searches returned rows to check, and
    // 1 MB strings were among the inputs.
    for (const [name, e] of Object.entries(perEntry)) {
      expect(e.ok, `${name} successes`).toBeGreaterThan(50);
      expect(e.typedError, `${name} typed errors`).toBeGreaterThan(50);
    }
    for (const name of ['searchLexical', 'searchVector', 'retrieverSearch', 'toolCalls']) {
      expect(perEntry[name]?.hits, `${name} hits`).toBeGreaterThan(100);
    }
    expect(Object.values(perEntry).reduce((n, e) => n + e.huge1MB, 0)).toBeGreaterThan(20);
    for (const [what, n] of Object.entries(batchWritten))
      expect(n, `batch writes: ${what}`).toBeGreaterThan(10);
    expect(total).toBeGreaterThanOrEqual(10_000);
    expect(outcomes.succeeded).toBeGreaterThan(1000);
    expect(outcomes.typedErrors).toBeGreaterThan(1000);
  });
});
