/**
 * The SQLite store's memory of which agents have open conflict links (`open-links.ts` of
 * @engram/store-sqlite): a search over an agent known to have none reads no link. (Moved from the corrections
 * suite of @engram/tools, which runs on the PostgreSQL store over PGlite and no longer loads SQLite; the
 * PostgreSQL store reads the links of every search that found facts.)
 */
import type { StatementKind } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import { createSqliteMemoryStore, type SqliteMemoryStore } from '@engram/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';

const embedder = createDeterministicEmbedder();
const stores: SqliteMemoryStore[] = [];
const clock = 1_000_000;

afterEach(() => {
  for (const store of stores.splice(0)) store.close();
});

describe('contradictions', () => {
  it('a search over an agent with no open links reads no link; over one with links, it reads them', async () => {
    const statements: StatementKind[] = [];
    const store = createSqliteMemoryStore({
      path: ':memory:',
      embedding: embedder.profile,
      now: () => clock,
      observer: { onStatement: (kind) => statements.push(kind) },
    });
    stores.push(store);
    const retriever = createRetriever({ store, embedder, trackAccess: false });
    // Two agents with the same facts; only the busy one has its contradiction linked.
    const ids: Record<string, string[]> = {};
    for (const agentId of ['quiet', 'busy']) {
      ids[agentId] = [];
      for (const content of ['the API listens on port 8080', 'the API listens on port 9090']) {
        const vector = (await embedder.embed([content]))[0] as Float32Array;
        ids[agentId]?.push((await store.insertMemory({ agentId, kind: 'fact', content, vector })).id);
      }
    }
    const [older, newer] = ids.busy as [string, string];
    await store.linkConflict('busy', older, newer, 'number');
    const search = async (agentId: string) => {
      const before = statements.length;
      const { results } = await retriever.search(agentId, 'API port');
      return { results, kinds: statements.slice(before) };
    };
    // The first search of each agent learns whether it has open links; later ones reuse the answer.
    await search('quiet');
    await search('busy');
    const quiet = await search('quiet');
    const busy = await search('busy');
    expect(quiet.results).toHaveLength(2);
    expect(quiet.results.every((r) => r.explanation.conflict === undefined)).toBe(true);
    expect(busy.results.map((r) => r.explanation.conflict?.status).sort()).toEqual(['newer', 'older']);
    // The same search over the same facts: the busy agent's one more read is its link query.
    const reads = (kinds: StatementKind[]) => kinds.filter((k) => k === 'read').length;
    expect(reads(busy.kinds)).toBe(reads(quiet.kinds) + 1);
    expect(busy.kinds.length).toBe(quiet.kinds.length + 1);
  });
});
