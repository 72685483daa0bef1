/**
 * Corrections and time through the agent's tools and the retriever, over a real store: the MCP example
 * ("port 8080" then "port 9090"), near duplicates of other subjects, memory_update, memory_forget, and search
 * with scope and metadata filters, `asOf` and `includeHistory`.
 */
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import { describe, expect, it } from 'vitest';
import { correctMemory } from './corrections.js';
import { openPgStore } from './pg-store.fixture.js';
import { createToolHandler } from './tools.js';

const embedder = createDeterministicEmbedder();
let clock = 1_000_000;

async function setup() {
  const store = await openPgStore({ embedding: embedder.profile, now: () => clock });
  const retriever = createRetriever({ store, embedder, trackAccess: false });
  const tools = createToolHandler({ store, retriever, embedder });
  return { store, retriever, tools };
}

const ctx = { agentId: 'a' } as const;

function idIn(text: string): string {
  const match = /fact ([\w-]+)/.exec(text);
  if (match?.[1] === undefined) throw new Error('no id in the answer');
  return match[1];
}

describe('contradictions', () => {
  it('the MCP example: "port 8080" then "port 9090" are linked, and search says which is current', async () => {
    const { store, tools, retriever } = await setup();
    const first = await tools.execute('memory_remember', { content: 'the API listens on port 8080' }, ctx);
    const oldId = idIn(first.text);
    clock += 1000;
    const second = await tools.execute('memory_remember', { content: 'the API listens on port 9090' }, ctx);
    expect(second.ok).toBe(true);
    const newId = idIn(second.text);
    expect(second.text).toContain(`It contradicts fact ${oldId} (different number) on the same subject`);
    expect(await store.listConflicts('a', { state: 'open' })).toMatchObject([
      { olderId: oldId, newerId: newId },
    ]);

    const found = await tools.execute('memory_search', { query: 'which port does the API listen on' }, ctx);
    expect(found.text).toContain(
      `id:${newId}] "the API listens on port 9090" [current: contradicts older fact ${oldId}]`,
    );
    expect(found.text).toContain(
      `id:${oldId}] "the API listens on port 8080" [conflicting: contradicted by newer fact ${newId}]`,
    );
    const { results } = await retriever.search('a', 'API port');
    const byId = new Map(results.map((r) => [r.record.id, r.explanation.conflict]));
    expect(byId.get(newId)).toEqual({ status: 'newer', with: [oldId] });
    expect(byId.get(oldId)).toEqual({ status: 'older', with: [newId] });
  });

  it('never links or retires near duplicates about other subjects', async () => {
    const { store, tools } = await setup();
    const pairs = [
      ['the web API listens on port 8080', 'the admin API listens on port 9090'],
      ['staging deploys run at 9 pm', 'production deploys run at 11 pm'],
      ['Alice reviews the frontend code', 'Bob reviews the backend code'],
    ];
    for (const [a, b] of pairs) {
      await tools.execute('memory_remember', { content: a }, ctx);
      const second = await tools.execute('memory_remember', { content: b }, ctx);
      expect(second.text).not.toContain('contradicts');
    }
    expect(await store.listConflicts('a')).toEqual([]);
    const current = await store.listMemories('a', { kinds: ['fact'], lifecycles: ['active'] });
    expect(current.map((m) => m.content).sort()).toEqual(pairs.flat().sort());
    const found = await tools.execute('memory_search', { query: 'API port', limit: 10 }, ctx);
    expect(found.text).toContain('the web API listens on port 8080');
    expect(found.text).toContain('the admin API listens on port 9090');
    expect(found.text).not.toContain('conflict');
  });
});

describe('memory_update and memory_forget', () => {
  it('memory_update supersedes: search returns the correction, asOf the old text, history both', async () => {
    const { store, tools, retriever } = await setup();
    const remembered = await tools.execute(
      'memory_remember',
      { content: 'the staging database is Postgres 14' },
      ctx,
    );
    const oldId = idIn(remembered.text);
    const before = clock;
    clock += 5000;
    const updated = await tools.execute(
      'memory_update',
      { id: oldId, content: 'the staging database is Postgres 16', reason: 'upgraded' },
      ctx,
    );
    expect(updated.ok).toBe(true);
    const newId = idIn(updated.text);
    expect(updated.text).toBe(
      `Updated: fact ${newId} is current; ${oldId} is superseded and kept in its history.`,
    );
    const now = await retriever.search('a', 'staging database Postgres');
    expect(now.results.map((r) => r.record.content)).toEqual(['the staging database is Postgres 16']);
    const then = await retriever.search('a', 'staging database Postgres', { asOf: before });
    expect(then.results.map((r) => r.record.content)).toEqual(['the staging database is Postgres 14']);
    const all = await retriever.search('a', 'staging database Postgres', { includeHistory: true });
    expect(all.results.map((r) => r.record.id).sort()).toEqual([oldId, newId].sort());
    // The model sees the current fact, or asks for the history and sees the old one marked.
    const current = await tools.execute('memory_search', { query: 'staging database' }, ctx);
    expect(current.text).toContain('Postgres 16');
    expect(current.text).not.toContain('Postgres 14');
    const withHistory = await tools.execute(
      'memory_search',
      { query: 'staging database', history: true },
      ctx,
    );
    expect(withHistory.text).toContain(
      `id:${oldId}] "the staging database is Postgres 14" [superseded by ${newId}]`,
    );
    expect(withHistory.text).toContain(`id:${newId}] "the staging database is Postgres 16"\n`);
    const history = await store.history('a', newId);
    expect(history.chain).toEqual([oldId, newId]);
    expect(history.entries.map((e) => e.action)).toEqual(['created', 'created', 'superseded']);
    // The old id is no longer current: updating it again is refused, nothing changes.
    const stale = await tools.execute('memory_update', { id: oldId, content: 'Postgres 17' }, ctx);
    expect(stale).toEqual({
      ok: false,
      text: 'memory_update: no current memory with that id (search for its current id).',
    });
  });

  it('memory_forget erases the memory and its earlier versions, leaving a tombstone', async () => {
    const { store, tools, retriever } = await setup();
    const first = await tools.execute('memory_remember', { content: 'my phone number is 555 0100' }, ctx);
    const fixed = await tools.execute(
      'memory_update',
      { id: idIn(first.text), content: 'my phone number is 555 0199' },
      ctx,
    );
    const currentId = idIn(fixed.text);
    clock += 1000;
    const forgot = await tools.execute('memory_forget', { id: currentId, reason: 'user asked' }, ctx);
    expect(forgot).toEqual({
      ok: true,
      text: `Forgot memory ${currentId} and 1 earlier version. Its content is erased; a tombstone records when and why.`,
    });
    const found = await retriever.search('a', 'phone number', { includeHistory: true });
    expect(found.results).toEqual([]);
    const tombstones = (await store.history('a', currentId)).entries.filter((e) => e.action === 'forgotten');
    expect(tombstones).toHaveLength(2);
    expect(tombstones[1]).toMatchObject({
      memoryId: currentId,
      actor: 'agent',
      reason: 'user asked',
      at: clock,
    });
    expect(await tools.execute('memory_forget', { id: currentId }, ctx)).toEqual({
      ok: false,
      text: 'memory_forget: no memory with that id.',
    });
  });

  it('refuses bad arguments with a typed message that names no content', async () => {
    const { tools } = await setup();
    const answer = await tools.execute('memory_update', { id: 'x', content: '' }, ctx);
    expect(answer.ok).toBe(false);
    expect(answer.text).toMatch(/^Invalid arguments for memory_update: "content" must be at least 1 /);
    await expect(correctMemory((await setup()).store, '', 'x', 'y')).rejects.toMatchObject({
      code: 'ENGRAM_RETRIEVAL_INVALID_INPUT',
    });
  });
});

describe('retriever filters', () => {
  it('applies scope and metadata filters in both arms and still fills the top k at 1% selectivity', async () => {
    const { store, retriever } = await setup();
    const rows = Array.from({ length: 1500 }, (_, i) => ({
      agentId: 'a',
      kind: 'fact' as const,
      content: `release note ${i}: the build pipeline changed its cache settings`,
      userId: i % 100 === 3 ? 'rare-user' : 'common-user',
      metadata: { n: i },
    }));
    const vectors = await embedder.embed(rows.map((r) => r.content));
    await store.insertMemories(rows.map((r, i) => ({ ...r, vector: vectors[i] as Float32Array })));
    const { results, execution } = await retriever.search('a', 'build pipeline cache', {
      limit: 10,
      filter: { userId: 'rare-user' },
    });
    expect(execution.outcome).toBe('completed');
    expect(results).toHaveLength(10);
    expect(results.every((r) => r.record.userId === 'rare-user')).toBe(true);
    const ranged = await retriever.search('a', 'build pipeline cache', {
      limit: 5,
      filter: { metadata: [{ key: 'n', op: 'range', gte: 100, lt: 103 }] },
    });
    expect(ranged.results.map((r) => r.record.metadata.n).sort()).toEqual([100, 101, 102]);
    await expect(
      retriever.search('a', 'x', { filter: { metadata: [{ key: 'a b', op: 'exists' }] } }),
    ).rejects.toMatchObject({
      code: 'ENGRAM_RETRIEVAL_INVALID_INPUT',
      message: 'filter is invalid (badKey).',
    });
  });
});
