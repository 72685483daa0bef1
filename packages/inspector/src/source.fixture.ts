/**
 * A fixed source for the behavior tests of the handler's guards: the facade calls the inspector makes,
 * answered from a small in-process table (the real facade over SQLite is driven by the native browser test).
 * It counts reads, so a test can prove a refused request read nothing.
 */
import { createEmptySnapshot, createHealthDto, type StoreHealthDto } from '@engram/contracts';
import type { MemoryItem, MemoryVersion, SearchHit } from '@engram/memory';
import type { InspectorMemory, InspectorSource } from './source.js';

/** Builds one memory of agent `coder`. */
export function item(id: string, content: string, extra: Partial<MemoryItem> = {}): MemoryItem {
  return {
    id,
    agentId: 'coder',
    kind: 'fact',
    content,
    tags: [],
    importance: 0.7,
    lifecycle: 'active',
    supersededBy: null,
    sessionId: null,
    userId: null,
    metadata: {},
    validFrom: 1_700_000_000_000,
    validTo: null,
    embedded: true,
    createdAt: 1_700_000_000_000,
    updatedAt: 1_700_000_000_000,
    ...extra,
  };
}

/** A source over `items`, with its read counter and the calls that wrote. */
export function fixedSource(items: MemoryItem[]): {
  source: InspectorSource;
  reads: () => number;
  writes: string[];
} {
  let reads = 0;
  const writes: string[] = [];
  const rows = new Map(items.map((m) => [m.id, m]));
  const tombstones = new Map<string, MemoryVersion>();
  const memory: InspectorMemory = {
    async list() {
      reads++;
      return [...rows.values()].filter((m) => m.lifecycle === 'active');
    },
    async get(id) {
      reads++;
      return rows.get(id) ?? null;
    },
    async history(id) {
      reads++;
      const row = rows.get(id);
      const tomb = tombstones.get(id);
      return row !== undefined ? [row] : tomb !== undefined ? [tomb] : [];
    },
    async search(query) {
      reads++;
      return [...rows.values()]
        .filter((m) => m.content.toLowerCase().includes(query.toLowerCase()))
        .map(
          (m, i): SearchHit => ({
            ...m,
            score: 1 / (i + 1),
            explanation: {
              arms: ['lexical'],
              lexicalRank: i + 1,
              rrf: 0.5,
              relevance: 0.5,
              importance: m.importance,
              recency: 1,
              final: 1 / (i + 1),
            },
          }),
        );
    },
    async update(id, change, options) {
      writes.push(`update ${id} by ${options?.actor} because ${options?.reason}`);
      const row = rows.get(id);
      if (row === undefined) throw new Error('not found');
      const next = { ...row, content: typeof change === 'string' ? change : (change.content ?? row.content) };
      rows.set(id, next);
      return next;
    },
    async delete(id, options) {
      writes.push(`delete ${id} by ${options?.actor} because ${options?.reason}`);
      if (!rows.delete(id)) return false;
      tombstones.set(id, {
        id,
        agentId: 'coder',
        lifecycle: 'forgotten',
        forgottenAt: 1_700_000_100_000,
        forgottenBy: options?.actor ?? null,
        reason: options?.reason ?? null,
      });
      return true;
    },
    async messages() {
      reads++;
      return [];
    },
    async sessions() {
      reads++;
      return [{ sessionId: 'chat-1', entries: 2, firstAt: 1_700_000_000_000, lastAt: 1_700_000_060_000 }];
    },
    async conflicts() {
      reads++;
      const [a, b] = [...rows.values()].filter((m) => m.lifecycle === 'active');
      return a === undefined || b === undefined
        ? []
        : [{ older: a, newer: b, reason: 'number', createdAt: 1_700_000_000_000 }];
    },
    async embeddingFailures() {
      reads++;
      return [
        {
          id: 'm-1',
          userId: null,
          errorCode: 'ENGRAM_PROVIDER_TIMEOUT',
          attempts: 2,
          failedAt: 1_700_000_000_000,
        },
      ];
    },
    async context() {
      reads++;
      return { core: '', recall: '', tokens: { core: 0, recall: 0, total: 0 } };
    },
    async health() {
      reads++;
      const store = {
        totals: { memories: rows.size, events: 0, facts: rows.size, skills: 0 },
        byKind: {},
        byLifecycle: {},
        byEmbeddingState: { ready: rows.size },
      } as unknown as StoreHealthDto;
      return createHealthDto(store, createEmptySnapshot());
    },
  };
  return {
    source: { memory },
    reads: () => reads,
    writes,
  };
}
