// Shared by the tests of the revalidation folded into the PostgreSQL searches (`vector-revalidation` and
// `lexical-revalidation`): the deterministic embedder, a retriever over a store port, rows of agent `a`, and
// the part of an answer a user sees.
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import type { MemoryKind, MemoryRecord } from '@engram/store';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import type { RetrievalStore } from './ports.js';
import { createRetriever, type RetrieveOptions, type RetrieverConfig } from './retriever.js';

export const embedder = createDeterministicEmbedder();
const NOW = 1_800_000_000_000;

export function retriever(store: RetrievalStore, extra: Partial<RetrieverConfig> = {}) {
  return createRetriever({ store, embedder, now: () => NOW, trackAccess: false, ...extra });
}

/** Inserts a row of agent `a` (with its deterministic vector unless `vector: false`). */
export async function add(
  store: PostgresMemoryStore,
  content: string,
  options: {
    vector?: boolean;
    kind?: MemoryKind;
    tags?: string[];
    session?: [string, number];
    userId?: string;
  } = {},
): Promise<MemoryRecord> {
  const [vector] = options.vector === false ? [] : await embedder.embed([content]);
  return store.insertMemory({
    agentId: 'a',
    content,
    kind: options.kind ?? 'semantic',
    ...(options.tags === undefined ? {} : { tags: options.tags }),
    ...(options.session === undefined ? {} : { sessionId: options.session[0], seqFrom: options.session[1] }),
    ...(options.userId === undefined ? {} : { userId: options.userId }),
    ...(vector === undefined ? {} : { vector }),
  });
}

export function ids(response: { results: readonly { record: MemoryRecord }[] }): string[] {
  return response.results.map((r) => r.record.id);
}

/** The part of an answer a user sees: results with their explanations, outcome, degradations, arms, counts. */
export function answer(response: Awaited<ReturnType<ReturnType<typeof retriever>['search']>>) {
  const { outcome, degradations, arms, candidates } = response.execution;
  return { results: response.results, outcome, degradations, arms, candidates };
}

/**
 * The call options both fold tests compare with and without the fold: archived rows, a kind, a tag, history,
 * a time before the seeded replacement (`replacedAt` is its `validFrom`), a metadata filter and a limit.
 */
export function foldCalls(replacedAt: number): RetrieveOptions[] {
  return [
    {},
    { includeArchived: true },
    { kinds: ['fact'] },
    { tags: ['area:billing'] },
    { includeHistory: true },
    { asOf: replacedAt - 1 },
    { filter: { sessionId: 's1' } },
    { limit: 2 },
  ];
}
