/**
 * The conformance suite of the store port, part ten: the vector query's bad input. Every adapter refuses the
 * same queries with the same typed error — the same code and the same fixed message (no query content in it) —
 * in the same order of checks (query, agent, index, vector, k, kinds, tags, filter, time), and a refused query
 * changes nothing. The table is exported so a store's shared validator can be checked against it directly.
 */
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, type ConformancePort, vec4, withPort } from './conformance-port.js';

/** A vector query the port must refuse: what is wrong, the query, and the error's code and message. */
export interface BadVectorQuery {
  readonly what: string;
  readonly query: unknown;
  readonly code: string;
  readonly message: string;
}

const INVALID = 'ENGRAM_STORE_INVALID_INPUT';
const VECTOR_INVALID = 'ENGRAM_STORE_VECTOR_INVALID';
const ok = { agentId: 'alice', vector: vec4(1, 0, 0, 0), k: 3 } as const;

/** Bad vector queries for a store with the 4-d profile bound. */
export const BAD_VECTOR_QUERIES: readonly BadVectorQuery[] = [
  { what: 'null query', query: null, code: INVALID, message: 'invalid input: query must be an object' },
  { what: 'string query', query: 'alice', code: INVALID, message: 'invalid input: query must be an object' },
  {
    what: 'no agent id',
    query: { vector: ok.vector, k: 3 },
    code: INVALID,
    message: 'invalid input: agentId must be a non-empty string',
  },
  {
    what: 'blank agent id',
    query: { ...ok, agentId: ' \t ' },
    code: INVALID,
    message: 'invalid input: agentId must be a non-empty string',
  },
  {
    what: 'oversize agent id',
    query: { ...ok, agentId: 'a'.repeat(257) },
    code: INVALID,
    message: 'invalid input: agentId is longer than 256',
  },
  {
    what: 'agent id not in NFC',
    query: { ...ok, agentId: 'e\u0301' },
    code: INVALID,
    message: 'invalid input: agentId is not in Unicode normalization form NFC',
  },
  {
    what: 'vector as an array',
    query: { ...ok, vector: [1, 0, 0, 0] },
    code: VECTOR_INVALID,
    message: 'invalid vector: query.vector must be a Float32Array',
  },
  {
    what: 'vector as a Float64Array',
    query: { ...ok, vector: new Float64Array([1, 0, 0, 0]) },
    code: VECTOR_INVALID,
    message: 'invalid vector: query.vector must be a Float32Array',
  },
  {
    what: 'no vector',
    query: { agentId: 'alice', k: 3 },
    code: VECTOR_INVALID,
    message: 'invalid vector: query.vector must be a Float32Array',
  },
  {
    what: 'wrong vector length',
    query: { ...ok, vector: new Float32Array([1, 0, 0]) },
    code: 'ENGRAM_STORE_VECTOR_DIMENSIONS',
    message: 'invalid vector: query.vector has 3 dimensions, the store expects 4',
  },
  {
    what: 'NaN in the vector',
    query: { ...ok, vector: vec4(1, Number.NaN, 0, 0) },
    code: VECTOR_INVALID,
    message: 'invalid vector: query.vector contains NaN or Infinity',
  },
  {
    what: 'Infinity in the vector',
    query: { ...ok, vector: vec4(1, 0, Number.NEGATIVE_INFINITY, 0) },
    code: VECTOR_INVALID,
    message: 'invalid vector: query.vector contains NaN or Infinity',
  },
  {
    what: 'zero vector',
    query: { ...ok, vector: vec4(0, 0, 0, 0) },
    code: VECTOR_INVALID,
    message: 'invalid vector: query.vector has zero (or overflowing) length, cosine distance is undefined',
  },
  {
    what: 'no k',
    query: { agentId: 'alice', vector: ok.vector },
    code: INVALID,
    message: 'invalid input: k must be an integer',
  },
  { what: 'k 0', query: { ...ok, k: 0 }, code: INVALID, message: 'invalid input: k must be at least 1' },
  { what: 'k -1', query: { ...ok, k: -1 }, code: INVALID, message: 'invalid input: k must be at least 1' },
  { what: 'k 1.5', query: { ...ok, k: 1.5 }, code: INVALID, message: 'invalid input: k must be an integer' },
  {
    what: 'k as a string',
    query: { ...ok, k: '3' },
    code: INVALID,
    message: 'invalid input: k must be an integer',
  },
  {
    what: 'k NaN',
    query: { ...ok, k: Number.NaN },
    code: INVALID,
    message: 'invalid input: k must be an integer',
  },
  {
    what: 'k Infinity',
    query: { ...ok, k: Number.POSITIVE_INFINITY },
    code: INVALID,
    message: 'invalid input: k must be an integer',
  },
  {
    what: 'kinds not an array',
    query: { ...ok, kinds: 'fact' },
    code: INVALID,
    message: 'invalid input: kinds must be an array',
  },
  {
    what: 'unknown kind',
    query: { ...ok, kinds: ['fact', 'note'] },
    code: INVALID,
    message: 'invalid input: kinds entry is not a memory kind',
  },
  {
    what: 'null kind',
    query: { ...ok, kinds: [null] },
    code: INVALID,
    message: 'invalid input: kinds entry is not a memory kind',
  },
  {
    what: 'tags not an array',
    query: { ...ok, tags: 'file:a' },
    code: INVALID,
    message: 'invalid input: tags must be an array',
  },
  {
    what: '65 tags',
    query: { ...ok, tags: Array.from({ length: 65 }, (_, i) => `t:${i}`) },
    code: INVALID,
    message: 'invalid input: tags filter has more than 64 entries',
  },
  {
    what: 'malformed tag',
    query: { ...ok, tags: ['bad tag'] },
    code: INVALID,
    message: 'invalid input: tags filter entry must have the form prefix:value',
  },
  {
    what: 'filter a string',
    query: { ...ok, filter: 'x' },
    code: INVALID,
    message: 'invalid input: filter is invalid (notObject)',
  },
  {
    what: 'filter an array',
    query: { ...ok, filter: [] },
    code: INVALID,
    message: 'invalid input: filter is invalid (notObject)',
  },
  {
    what: 'filter with an unknown field',
    query: { ...ok, filter: { user: 'u' } },
    code: INVALID,
    message: 'invalid input: filter is invalid (unknownField)',
  },
  {
    what: 'blank user scope',
    query: { ...ok, filter: { userId: '' } },
    code: INVALID,
    message: 'invalid input: filter is invalid (badUserId)',
  },
  {
    what: 'numeric session scope',
    query: { ...ok, filter: { sessionId: 3 } },
    code: INVALID,
    message: 'invalid input: filter is invalid (badSessionId)',
  },
  {
    what: 'metadata conditions not a list',
    query: { ...ok, filter: { metadata: { path: 'a', op: 'exists' } } },
    code: INVALID,
    message: 'invalid input: filter is invalid (badMetadataList)',
  },
  {
    what: 'time a string',
    query: { ...ok, time: 'now' },
    code: INVALID,
    message: 'invalid input: time must be an object',
  },
  {
    what: 'time null',
    query: { ...ok, time: null },
    code: INVALID,
    message: 'invalid input: time must be an object',
  },
  {
    what: 'includeHistory not a boolean',
    query: { ...ok, time: { includeHistory: 'yes' } },
    code: INVALID,
    message: 'invalid input: time.includeHistory must be a boolean',
  },
  {
    what: 'negative asOf',
    query: { ...ok, time: { asOf: -1 } },
    code: INVALID,
    message: 'invalid input: time.asOf must be at least 0',
  },
  {
    what: 'asOf as a date string',
    query: { ...ok, time: { asOf: '2024-01-01' } },
    code: INVALID,
    message: 'invalid input: time.asOf must be an integer',
  },
  // Several problems: the first in the order of checks is the error.
  {
    what: 'bad agent and bad vector',
    query: { agentId: '', vector: vec4(0, 0, 0, 0), k: 0 },
    code: INVALID,
    message: 'invalid input: agentId must be a non-empty string',
  },
  {
    what: 'bad vector and bad k',
    query: { ...ok, vector: new Float32Array(3), k: 0 },
    code: 'ENGRAM_STORE_VECTOR_DIMENSIONS',
    message: 'invalid vector: query.vector has 3 dimensions, the store expects 4',
  },
  {
    what: 'bad k and bad kinds',
    query: { ...ok, k: 0, kinds: ['note'] },
    code: INVALID,
    message: 'invalid input: k must be at least 1',
  },
  {
    what: 'bad kinds and bad tags',
    query: { ...ok, kinds: ['note'], tags: 'x' },
    code: INVALID,
    message: 'invalid input: kinds entry is not a memory kind',
  },
  {
    what: 'bad tags and bad filter',
    query: { ...ok, tags: 'x', filter: 'x' },
    code: INVALID,
    message: 'invalid input: tags must be an array',
  },
  {
    what: 'bad filter and bad time',
    query: { ...ok, filter: 'x', time: 'x' },
    code: INVALID,
    message: 'invalid input: filter is invalid (notObject)',
  },
];

/** The error a call rejects with (undefined when it resolves). */
async function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => undefined,
    (e: unknown) => e,
  );
}

/** Registers the vector query's bad-input conformance tests for one adapter. */
export function describeVectorInputConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: the vector query's bad input`, () => {
    it(
      `refuses ${BAD_VECTOR_QUERIES.length} bad queries with the same code and message, changing nothing`,
      withPort(open, async (s) => {
        await s.insertMemory({
          id: 'seed',
          agentId: 'alice',
          kind: 'fact',
          content: 'seed',
          vector: ok.vector,
        });
        const before = await s.searchVector(ok);
        const wrong: string[] = [];
        for (const c of BAD_VECTOR_QUERIES) {
          const err = await rejection(
            s.searchVector(c.query as Parameters<ConformancePort['searchVector']>[0]),
          );
          const got = err as { readonly name?: unknown; readonly code?: unknown; readonly message?: unknown };
          if (got?.name !== 'EngramStoreError' || got.code !== c.code || got.message !== c.message) {
            wrong.push(`${c.what}: ${String(got?.code)} ${String(got?.message)}`);
          }
        }
        expect(wrong).toEqual([]);
        expect(await s.searchVector(ok)).toEqual(before);
        expect((await s.getMemory('alice', 'seed'))?.revision).toBe(1);
      }),
    );

    it(
      'without an embedder profile: a bad agent id first, then VECTOR_UNAVAILABLE whatever the vector',
      withPort(
        open,
        async (s) => {
          await expect(s.searchVector({ ...ok, agentId: '' })).rejects.toMatchObject({
            code: INVALID,
            message: 'invalid input: agentId must be a non-empty string',
          });
          for (const vector of [ok.vector, new Float32Array(3), vec4(0, 0, 0, 0)]) {
            await expect(s.searchVector({ ...ok, vector, k: 0 })).rejects.toMatchObject({
              code: 'ENGRAM_STORE_VECTOR_UNAVAILABLE',
              message: 'the store has no embedder profile, so it has no vector index',
            });
          }
        },
        { vectors: false },
      ),
    );
  });
}
