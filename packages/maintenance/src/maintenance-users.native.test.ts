/**
 * Users are boundaries in maintenance passes, over a real store and a scripted model: merge, reflection and
 * persona work per user group (a user's rows, or the agent's own), every row they write carries its group's
 * user, a contradiction is never settled across users, and a pass for one user touches that user's rows only.
 */
import { createRetriever } from '@engram/retrieval';
import type { MemoryRecord, NewMemory } from '@engram/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { createMaintenanceRunner } from './maintenance.js';
import { createFakeTime } from './test-support/fake-time.js';
import { openTempStore, type TempStore } from './test-support/native.js';
import { createScriptedModel, type ScriptedAnswer } from './test-support/scripted-model.js';

const DAY = 24 * 60 * 60 * 1000;

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

async function setup(rows: readonly NewMemory[]) {
  const time = createFakeTime(1_800_000_000_000);
  const t = await openTempStore({ now: time.clock.now });
  open.push(t);
  const seeded = await t.store.insertMemories(rows);
  await createEmbeddingDrain({ store: t.store, embedder: t.embedder }).run();
  const retriever = createRetriever({ store: t.store, embedder: t.embedder, now: time.clock.now });
  return { ...t, time, retriever, seeded };
}

const row = (content: string, userId: string | null, extra: Partial<NewMemory> = {}): NewMemory => ({
  agentId: 'a',
  kind: 'semantic',
  content,
  importance: 0.9,
  ...(userId === null ? {} : { userId }),
  ...extra,
});

function repeat(answer: ScriptedAnswer, n: number): ScriptedAnswer[] {
  return Array.from({ length: n }, () => answer);
}

/** The user message of a call, parsed. */
function payload<T>(messages: readonly { content: string }[]): T {
  return JSON.parse(messages[1]?.content ?? 'null') as T;
}

/** Which users' texts a prompt holds (every seeded text names its user). */
function owners(text: string): string[] {
  return ['Alice', 'Bob', 'Team'].filter((name) => text.includes(name));
}

describe('maintenance keeps users apart', () => {
  it("merge folds near-duplicates of one user only; the merged row is that user's", async () => {
    const { store, retriever, time, seeded } = await setup([
      row('Alice keeps the CI pipeline on GitHub Actions for every push', 'alice'),
      row('Alice keeps the CI pipeline on GitHub Actions on every push', 'alice'),
      row('Alice keeps the CI pipeline on GitHub Actions for each push', 'bob'),
      row('Alice keeps the CI pipeline on GitHub Actions at every push', null),
    ]);
    const asked: string[][] = [];
    const merge: ScriptedAnswer = ({ messages }) => {
      const shown = payload<Record<string, string>>(messages);
      asked.push(Object.values(shown).sort());
      return JSON.stringify({ merge: true, content: `${shown.a ?? ''} (merged)` });
    };
    const model = createScriptedModel({ memory_merge: repeat(merge, 4) });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      merge: { similarityFloor: 0.5 },
      reflection: { importanceThreshold: 100 },
      budget: { stepCalls: { persona: 0 } },
    });
    const { report } = await runner.run('a');
    expect(report?.heavy.steps.merge).toBe('completed');
    // One question, about Alice's two rows; Bob's and the agent's own look alike but are never partners.
    expect(asked).toEqual([[seeded[0]?.content, seeded[1]?.content].sort()]);
    const merged = await store.listMemories('a', { tags: ['source:merge'], limit: 10 });
    expect(merged.map((m) => [m.userId, m.lifecycle])).toEqual([['alice', 'active']]);
    for (const r of seeded.slice(2)) {
      expect(await store.getMemory('a', r.id)).toMatchObject({ lifecycle: 'active', revision: 1 });
    }
  });

  it("reflection and persona ask per user group; each written row is its group's, and no prompt mixes users", async () => {
    const { store, retriever, time } = await setup([
      row('Alice is migrating the billing service to Go', 'alice', { kind: 'fact' }),
      row('Alice reviews pull requests every morning', 'alice', { kind: 'fact' }),
      row('Bob banks with Acme and pays rent on the first', 'bob', { kind: 'fact' }),
      row('Bob is learning Rust in the evenings', 'bob', { kind: 'fact' }),
      row('Team repository uses pnpm workspaces', null, { kind: 'fact' }),
      row('Team deploys happen on Fridays', null, { kind: 'fact' }),
    ]);
    const prompts: { schema: string; owners: string[]; text: string }[] = [];
    const reflect: ScriptedAnswer = ({ messages }) => {
      const text = messages[1]?.content ?? '';
      prompts.push({ schema: 'reflection', owners: owners(text), text });
      return JSON.stringify({
        reflections: [{ content: `Insight on ${owners(text).join('+')}`, importance: 0.5 }],
      });
    };
    const persona: ScriptedAnswer = ({ messages }) => {
      const { facts } = payload<{ facts: string[] }>(messages);
      const text = facts.join(' ');
      prompts.push({ schema: 'persona', owners: owners(text), text });
      return JSON.stringify({ persona: `Persona of ${owners(text).join('+')}` });
    };
    const model = createScriptedModel({
      memory_reflection: repeat(reflect, 3),
      memory_persona: repeat(persona, 3),
    });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      reflection: { importanceThreshold: 1 },
      budget: { stepCalls: { reflection: 3, persona: 3 }, totalCalls: 12 },
    });
    const { report } = await runner.run('a');
    expect(report?.heavy.steps).toMatchObject({ reflection: 'completed', persona: 'completed' });
    // Reflection reads one group's memories; a user's persona reads that user's facts and the agent's own.
    expect(prompts.filter((p) => p.schema === 'reflection').map((p) => p.owners)).toEqual([
      ['Team'],
      ['Alice'],
      ['Bob'],
    ]);
    expect(prompts.filter((p) => p.schema === 'persona').map((p) => p.owners)).toEqual([
      ['Team'],
      ['Alice', 'Team'],
      ['Bob', 'Team'],
    ]);
    const written = (kind: 'reflection' | 'persona') =>
      store
        .listMemories('a', { kinds: [kind], limit: 10 })
        .then((rows: readonly MemoryRecord[]) => rows.map((r) => [r.userId, r.content]).sort());
    expect(await written('reflection')).toEqual(
      [
        ['alice', 'Insight on Alice'],
        ['bob', 'Insight on Bob'],
        [null, 'Insight on Team'],
      ].sort(),
    );
    expect(await written('persona')).toEqual(
      [
        ['alice', 'Persona of Alice+Team'],
        ['bob', 'Persona of Bob+Team'],
        [null, 'Persona of Team'],
      ].sort(),
    );
  });

  it('a spent step budget serves the groups it left out first in the next pass; each group keeps its own watermark', async () => {
    const { store, retriever, time } = await setup([
      row('Alice ships the mobile app', 'alice', { kind: 'episodic' }),
      row('Bob fixed the flaky login test', 'bob', { kind: 'episodic' }),
      row('Team moved the office to Berlin', null, { kind: 'episodic' }),
    ]);
    const reflected: string[][] = [];
    const reflect: ScriptedAnswer = ({ messages }) => {
      const text = messages[1]?.content ?? '';
      reflected.push(owners(text));
      return JSON.stringify({
        reflections: [{ content: `Insight on ${owners(text).join('+')}`, importance: 0.5 }],
      });
    };
    const model = createScriptedModel({ memory_reflection: repeat(reflect, 4) });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      heavyCooldownMs: 1,
      reflection: { importanceThreshold: 0.5 },
      budget: { stepCalls: { persona: 0, merge: 0 } },
    });
    const denials: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      time.advance(10);
      const { report } = await runner.run('a');
      denials.push(report?.heavy.denials.reflection ?? -1);
    }
    // One reflection per pass (the default budget): the agent's own, then Alice, then Bob; then nothing is due.
    expect(reflected).toEqual([['Team'], ['Alice'], ['Bob']]);
    expect(denials).toEqual([1, 1, 0, 0]);
  });

  it('a contradiction is never settled across users', async () => {
    const { store, retriever, time } = await setup([row('Bob uses a long timeout', 'bob', { kind: 'fact' })]);
    const [bobs] = await store.listMemories('a', { limit: 1 });
    if (bobs === undefined) throw new Error('seed missing');
    await store.setLifecycle('a', bobs.id, bobs.revision, 'conflicted');
    // A challenger of another user (the other packages never link one; a hand-made tag does).
    const alices = await store.insertMemory(
      row('Alice uses a short timeout', 'alice', { kind: 'fact', tags: [`challenges:${bobs.id}`] }),
    );
    const model = createScriptedModel({ memory_challenge: ['{"verdict":"keepChallenger"}'] });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      budget: { stepCalls: { merge: 0, reflection: 0, persona: 0 } },
    });
    await runner.run('a');
    // No same-user challenger: Bob's fact is restored without asking, Alice's row is left as it was.
    expect(model.calls).toHaveLength(0);
    expect(await store.getMemory('a', bobs.id)).toMatchObject({ lifecycle: 'active', userId: 'bob' });
    expect(await store.getMemory('a', alices.id)).toMatchObject({ lifecycle: 'active', revision: 1 });
  });

  it('a pass for one user archives, reflects and writes a persona for that user only', async () => {
    const { store, retriever, time } = await setup([]);
    const now = time.clock.now();
    const old = (content: string, userId: string | null) =>
      row(content, userId, { importance: 0, createdAt: now - 300 * DAY });
    const [aliceOld, bobOld, teamOld] = await store.insertMemories([
      old('Alice old note about lunch', 'alice'),
      old('Bob old note about lunch', 'bob'),
      old('Team old note about lunch', null),
    ]);
    await store.insertMemories([
      row('Alice prefers dark mode', 'alice', { kind: 'fact' }),
      row('Bob prefers light mode', 'bob', { kind: 'fact' }),
      row('Team uses TypeScript', null, { kind: 'fact' }),
    ]);
    const prompts: string[][] = [];
    const answer =
      (make: (who: string) => string): ScriptedAnswer =>
      ({ messages }) => {
        const who = owners(messages[1]?.content ?? '');
        prompts.push(who);
        return make(who.join('+'));
      };
    const model = createScriptedModel({
      memory_reflection: [
        answer((w) => JSON.stringify({ reflections: [{ content: `Insight on ${w}`, importance: 0.5 }] })),
      ],
      memory_persona: [answer((w) => JSON.stringify({ persona: `Persona of ${w}` }))],
    });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      decay: { ageFrom: 'created' },
      reflection: { importanceThreshold: 0.5 },
    });
    await expect(runner.run('a', { userId: '' })).rejects.toMatchObject({
      code: 'ENGRAM_MAINTENANCE_INVALID_INPUT',
    });
    const { report, details } = await runner.run('a', { userId: 'alice', force: true });
    expect(details?.archive).toMatchObject({ archived: 1, complete: true });
    expect(report?.cheap.archived).toBe(1);
    expect(await store.getMemory('a', aliceOld?.id ?? '')).toMatchObject({ lifecycle: 'archived' });
    for (const r of [bobOld, teamOld]) {
      expect(await store.getMemory('a', r?.id ?? '')).toMatchObject({ lifecycle: 'active', revision: 1 });
    }
    // Reflection reads Alice's memories; her persona her facts and the agent's own: Bob's never.
    expect(prompts).toEqual([['Alice'], ['Alice', 'Team']]);
    const written = await store.listMemories('a', { kinds: ['reflection', 'persona'], limit: 10 });
    expect(written.map((r) => [r.kind, r.userId, r.content]).sort()).toEqual(
      [
        ['persona', 'alice', 'Persona of Alice+Team'],
        ['reflection', 'alice', 'Insight on Alice'],
      ].sort(),
    );
  });
});
