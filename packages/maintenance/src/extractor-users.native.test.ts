/**
 * Users are boundaries in extraction, over a real store and retriever: a user's conversation writes that
 * user's rows (with the chunk's tags and metadata), is shown and acts on that user's rows only, and is never
 * a duplicate of another user's memory; a chunk without a user acts on the agent's own rows only.
 */
import { createRetriever } from '@engram/retrieval';
import type { MemoryRecord, NewMemory } from '@engram/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { createExtractor } from './extractor.js';
import { openTempStore, type TempStore } from './test-support/native.js';
import { createScriptedModel, type ScriptedAnswer } from './test-support/scripted-model.js';

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

const fact = (content: string, userId?: string): NewMemory => ({
  agentId: 'agent',
  kind: 'fact',
  content,
  importance: 0.6,
  ...(userId === undefined ? {} : { userId }),
});

async function setup(rows: readonly NewMemory[]) {
  const t = await openTempStore();
  open.push(t);
  const { store, embedder } = t;
  const seeded = await store.insertMemories(rows);
  await createEmbeddingDrain({ store, embedder }).run();
  return { store, retriever: createRetriever({ store, embedder }), seeded };
}

const candidates = (items: readonly string[]): string =>
  JSON.stringify({ memories: items.map((content) => ({ content, kind: 'fact', importance: 0.7 })) });

/**
 * A greedy decision model: records every neighbour it is shown and acts on the first one that mentions the
 * rule's needle (whoever's it is), so a neighbour of another user would be changed if it were ever shown.
 */
function greedy(
  shown: Set<string>,
  rules: Record<string, { decision: string; needle: string; content?: string }>,
): ScriptedAnswer {
  return ({ messages }) => {
    const payload = JSON.parse(messages[1]?.content ?? '{}') as {
      new: { content: string };
      existing: { id: string; content: string }[];
    };
    for (const e of payload.existing) shown.add(e.id);
    const rule = rules[payload.new.content];
    const target =
      rule === undefined ? undefined : payload.existing.find((e) => e.content.includes(rule.needle));
    if (rule === undefined || target === undefined) {
      return JSON.stringify({ decision: 'ADD', targetId: null, content: null });
    }
    return JSON.stringify({ decision: rule.decision, targetId: target.id, content: rule.content ?? null });
  };
}

const TURNS = [{ role: 'user' as const, content: 'A few things about my editor and my schedule.' }];

describe('extraction keeps users apart', () => {
  it("a user's chunk is shown and changes only that user's rows; every row it writes is that user's, with its tags and metadata", async () => {
    const { store, retriever, seeded } = await setup([
      // Bob's and the agent's own rows say the same things, and come first: a greedy model would take them.
      fact('The editor theme is dark mode', 'bob'),
      fact('The editor theme is solarized'),
      fact('The weekly sync meeting is on Monday', 'bob'),
      fact('The weekly sync meeting is on Monday morning'),
      fact('The build server is named atlas', 'bob'),
      fact('The build server is named hermes'),
      fact('The editor theme is monokai', 'alice'),
      fact('The weekly sync meeting is on Tuesday', 'alice'),
      fact('The build server is named zeus', 'alice'),
    ]);
    const byContent = (content: string, userId: string | null): MemoryRecord => {
      const row = seeded.find((r) => r.content === content && r.userId === userId);
      if (row === undefined) throw new Error('seed missing');
      return row;
    };
    const aliceIds = new Set(seeded.filter((r) => r.userId === 'alice').map((r) => r.id));
    const NEW = {
      supersede: 'The editor theme is light mode',
      update: 'The weekly sync meeting is on Wednesday',
      challenge: 'The build server is named apollo',
    };
    const shown = new Set<string>();
    const decide = greedy(shown, {
      [NEW.supersede]: { decision: 'SUPERSEDE', needle: 'editor theme' },
      [NEW.update]: {
        decision: 'UPDATE',
        needle: 'weekly sync',
        content: 'The weekly sync meeting is on Tuesday and Wednesday',
      },
      [NEW.challenge]: { decision: 'CHALLENGE', needle: 'build server' },
    });
    const model = createScriptedModel({
      memory_candidates: [candidates([NEW.supersede, NEW.update, NEW.challenge])],
      memory_decision: [decide, decide, decide],
    });
    const extractor = createExtractor({ store, retriever, model });
    const result = await extractor.extract({
      agentId: 'agent',
      sessionId: 's1',
      userId: 'alice',
      tags: ['topic:editor', 'channel:slack'],
      metadata: { channel: 'slack', thread: { id: 7 } },
      turns: TURNS,
    });

    expect(result.report).toMatchObject({
      outcome: 'completed',
      decisions: { ADD: 0, UPDATE: 1, SUPERSEDE: 1, NOOP: 0, CHALLENGE: 1 },
    });
    // The model saw Alice's rows only: never Bob's, never the agent's own.
    expect(shown.size).toBeGreaterThan(0);
    for (const id of shown) expect(aliceIds.has(id)).toBe(true);
    const targets = result.applied.map((a) => a.targetId);
    expect(targets.sort()).toEqual([...aliceIds].sort());
    // Bob's and the agent's own rows are untouched.
    for (const row of seeded.filter((r) => r.userId !== 'alice')) {
      expect(await store.getMemory('agent', row.id)).toMatchObject({ lifecycle: 'active', revision: 1 });
    }

    const written = Object.fromEntries(result.applied.map((a) => [a.decision, a.id ?? '']));
    const replacement = await store.getMemory('agent', written.SUPERSEDE ?? '');
    const challenger = await store.getMemory('agent', written.CHALLENGE ?? '');
    for (const row of [replacement, challenger]) {
      expect(row).toMatchObject({ userId: 'alice', metadata: { channel: 'slack', thread: { id: 7 } } });
      expect(row?.tags).toEqual(
        expect.arrayContaining(['source:extraction', 'topic:editor', 'channel:slack']),
      );
    }
    expect(challenger?.tags).toContain(
      `challenges:${byContent('The build server is named zeus', 'alice').id}`,
    );
    const updated = await store.getMemory('agent', written.UPDATE ?? '');
    expect(updated).toMatchObject({
      userId: 'alice',
      revision: 2,
      content: 'The weekly sync meeting is on Tuesday and Wednesday',
      metadata: { channel: 'slack', thread: { id: 7 } },
    });
    expect(updated?.tags).toEqual(expect.arrayContaining(['topic:editor', 'channel:slack']));
  });

  it("another user's (or the agent's own) identical memory is no duplicate of a user's candidate", async () => {
    const SAME = 'The office wifi password rotates monthly';
    const { store, retriever, seeded } = await setup([fact(SAME, 'bob'), fact(SAME)]);
    const model = createScriptedModel({ memory_candidates: [candidates([SAME])] });
    const result = await createExtractor({ store, retriever, model }).extract({
      agentId: 'agent',
      userId: 'alice',
      turns: TURNS,
    });
    // Alice has no such memory: it is added as hers, without a decision (none of her rows is a neighbour).
    expect(result.report).toMatchObject({ outcome: 'completed', decisions: { ADD: 1, NOOP: 0 } });
    expect(model.calls.map((c) => c.schemaName)).toEqual(['memory_candidates']);
    const added = await store.getMemory('agent', result.applied[0]?.id ?? '');
    expect(added).toMatchObject({ content: SAME, userId: 'alice', lifecycle: 'active' });
    for (const row of seeded) expect(await store.getMemory('agent', row.id)).toMatchObject({ revision: 1 });

    // Alice's own copy is a duplicate for her next chunk: a NOOP without a model call.
    const again = createScriptedModel({ memory_candidates: [candidates([SAME])] });
    const second = await createExtractor({ store, retriever, model: again }).extract({
      agentId: 'agent',
      userId: 'alice',
      turns: TURNS,
    });
    expect(second.report.decisions).toMatchObject({ ADD: 0, NOOP: 1 });
  });

  it("a chunk without a user is shown and changes the agent's own rows only, never a user's", async () => {
    const { store, retriever, seeded } = await setup([
      fact('The editor theme is dark mode', 'bob'),
      fact('The editor theme is monokai', 'alice'),
    ]);
    const shown = new Set<string>();
    const decide = greedy(shown, {
      'The editor theme is light mode': { decision: 'SUPERSEDE', needle: 'editor theme' },
    });
    const model = createScriptedModel({
      memory_candidates: [candidates(['The editor theme is light mode'])],
      memory_decision: [decide],
    });
    const result = await createExtractor({ store, retriever, model }).extract({
      agentId: 'agent',
      turns: TURNS,
    });
    // No row of the agent's own is near: added without a decision, as the agent's own.
    expect(result.report.decisions).toMatchObject({ ADD: 1, SUPERSEDE: 0 });
    expect(shown.size).toBe(0);
    expect(await store.getMemory('agent', result.applied[0]?.id ?? '')).toMatchObject({ userId: null });
    for (const row of seeded) {
      expect(await store.getMemory('agent', row.id)).toMatchObject({ lifecycle: 'active', revision: 1 });
    }
  });

  it('refuses a malformed user, tags or metadata before any model call, with a typed code', async () => {
    const { store, retriever } = await setup([]);
    const model = createScriptedModel();
    const extractor = createExtractor({ store, retriever, model });
    const tooMany = Array.from({ length: 63 }, (_, i) => `topic:t${i}`);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const bad: Record<string, unknown>[] = [
      { userId: '' },
      { userId: ' alice' },
      { tags: ['no-prefix'] },
      { tags: 'topic:x' },
      { tags: ['challenges:someone-else'] },
      { tags: tooMany },
      { metadata: ['not', 'an', 'object'] },
      { metadata: { n: Number.NaN } },
      { metadata: { when: new Date(0) } },
      { metadata: { big: 'x'.repeat(20_000) } },
      { metadata: cyclic },
    ];
    for (const extra of bad) {
      await expect(extractor.extract({ agentId: 'agent', turns: TURNS, ...extra })).rejects.toMatchObject({
        code: 'ENGRAM_MAINTENANCE_INVALID_INPUT',
      });
    }
    expect(model.calls).toHaveLength(0);
    expect(await store.listMemories('agent', { limit: 10 })).toHaveLength(0);
  });
});
