/**
 * Maintenance passes over a real store: the cheap phase (decay, integrity repair, orphan pruning) and every
 * heavy step against a scripted model. Longer than 400 lines on purpose: each step's scenario seeds its own
 * rows, and they share one setup and one scripted-model helper.
 */
import type { MaintenancePassReport } from '@engram/contracts';
import { createRetriever } from '@engram/retrieval';
import type { NewMemory } from '@engram/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { REVIEW_NEEDED_TAG } from './heavy-steps.js';
import { createMaintenanceRunner } from './maintenance.js';
import { createFakeTime } from './test-support/fake-time.js';
import { openTempStore, type TempStore } from './test-support/native.js';
import { createScriptedModel, type ScriptedAnswer } from './test-support/scripted-model.js';

const DAY = 24 * 60 * 60 * 1000;
const HOUR = 60 * 60 * 1000;

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

async function setup() {
  const time = createFakeTime(1_800_000_000_000);
  const t = await openTempStore({ now: time.clock.now });
  open.push(t);
  const retriever = createRetriever({ store: t.store, embedder: t.embedder, now: time.clock.now });
  return { ...t, time, retriever };
}

function repeat(answer: ScriptedAnswer, n: number): ScriptedAnswer[] {
  return Array.from({ length: n }, () => answer);
}

describe('maintenance passes over a real store', () => {
  it('cheap phase archives by decay (facts exempt) and the heavy phase is skipped without a model', async () => {
    const { store, time } = await setup();
    const now = time.clock.now();
    const row = (
      content: string,
      kind: NewMemory['kind'],
      ageDays: number,
      importance: number,
    ): NewMemory => ({
      agentId: 'a',
      kind,
      content,
      importance,
      createdAt: now - ageDays * DAY,
    });
    const [oldSemantic, importantSemantic, oldFact, oldEvent, young] = await store.insertMemories([
      row('an old low value note', 'semantic', 200, 0),
      row('an important old note', 'semantic', 100, 1),
      row('a very old fact', 'fact', 500, 0),
      row('an old event', 'event', 300, 0.3),
      row('a young note', 'semantic', 10, 0),
    ]);
    const reports: MaintenancePassReport[] = [];
    const runner = createMaintenanceRunner({
      store,
      clock: time.clock,
      observer: { onMaintenancePass: (r) => reports.push(r) },
      decay: { floor: 0.05, minAgeMs: 14 * DAY, ageFrom: 'created' },
    });
    const result = await runner.run('a');
    expect(result.skipped).toBeNull();
    expect(result.report?.cheap).toEqual({ outcome: 'completed', repaired: 0, archived: 2, pruned: 0 });
    expect(result.report?.heavy).toMatchObject({
      outcome: 'skipped',
      modelCalls: 0,
      inputTokens: 0,
      denials: { challenge: 0, merge: 0, reflection: 0, persona: 0 },
      steps: { challenge: 'skipped', merge: 'skipped', reflection: 'skipped', persona: 'skipped' },
    });
    expect(reports).toEqual([result.report]);
    const lifecycle = async (id: string | undefined) => (await store.getMemory('a', id ?? ''))?.lifecycle;
    expect(await lifecycle(oldSemantic?.id)).toBe('archived');
    expect(await lifecycle(oldEvent?.id)).toBe('archived');
    expect(await lifecycle(importantSemantic?.id)).toBe('active');
    expect(await lifecycle(oldFact?.id)).toBe('active');
    expect(await lifecycle(young?.id)).toBe('active');
  });

  it('repairs index integrity through the store', async () => {
    const { store, embedder, time } = await setup();
    await store.insertMemories([{ agentId: 'a', kind: 'semantic', content: 'deploy notes for the cache' }]);
    await createEmbeddingDrain({ store, embedder }).run();
    // A fresh pass over a consistent store repairs and prunes nothing.
    const runner = createMaintenanceRunner({ store, clock: time.clock });
    const { report } = await runner.run('a');
    expect(report?.cheap).toMatchObject({ outcome: 'completed', repaired: 0, pruned: 0 });
  });

  it('reserves every heavy call from one budget: 8 calls, the ninth is denied and counted by step', async () => {
    const { store, embedder, time, retriever } = await setup();
    // challenge: five contradicted memories, each with its challenger.
    for (let i = 1; i <= 5; i += 1) {
      const existing = await store.insertMemory({
        agentId: 'a',
        kind: 'fact',
        content: `Service ${i} uses a long timeout`,
      });
      await store.setLifecycle('a', existing.id, existing.revision, 'conflicted');
      await store.insertMemory({
        agentId: 'a',
        kind: 'fact',
        content: `Service ${i} uses a short timeout`,
        tags: [`challenges:${existing.id}`],
      });
    }
    // merge: three pairs of near duplicates (important enough to trigger a reflection).
    const pairs = [
      [
        'The CI pipeline runs on GitHub Actions for every push',
        'The CI pipeline runs on GitHub Actions on every push',
      ],
      [
        'Release notes are written in the changelog file',
        'Release notes are written into the changelog file',
      ],
      ['The frontend is built with Vite and React', 'The frontend is built using Vite and React'],
    ];
    for (const [x, y] of pairs) {
      await store.insertMemory({ agentId: 'a', kind: 'semantic', content: x ?? '', importance: 0.9 });
      await store.insertMemory({ agentId: 'a', kind: 'semantic', content: y ?? '', importance: 0.9 });
    }
    await createEmbeddingDrain({ store, embedder }).run();
    const model = createScriptedModel({
      memory_challenge: [
        '{"verdict":"keepExisting"}',
        '{"verdict":"keepChallenger"}',
        '{"verdict":"keepBoth"}',
        '{"verdict":"keepBoth"}',
      ],
      memory_merge: repeat(({ messages }) => {
        const { a } = JSON.parse(messages[1]?.content ?? '{}') as { a: string };
        return JSON.stringify({ merge: true, content: `${a} (merged)` });
      }, 2),
      memory_reflection: [
        '{"reflections":[{"content":"The team automates releases end to end","importance":0.7}]}',
      ],
      memory_persona: ['{"persona":"A developer working on a web service with CI on GitHub Actions"}'],
    });
    const runner = createMaintenanceRunner({ store, retriever, model, clock: time.clock });
    const { report } = await runner.run('a');
    expect(report?.heavy).toMatchObject({
      outcome: 'completed',
      modelCalls: 8,
      denials: { challenge: 1, merge: 1, reflection: 0, persona: 0 },
      steps: { challenge: 'completed', merge: 'completed', reflection: 'completed', persona: 'completed' },
      invalidOutputs: 0,
    });
    expect(model.calls).toHaveLength(8);
    expect(report?.heavy.inputTokens).toBeGreaterThan(0);
    expect(report?.heavy.inputTokens).toBeLessThanOrEqual(24_000);
    // One conflicted memory is left for the next pass.
    expect(await store.listMemories('a', { lifecycles: ['conflicted'], limit: 10 })).toHaveLength(1);
    // Two merges: each superseded a pair and wrote one merged row.
    const merged = await store.listMemories('a', { tags: ['source:merge'], limit: 10 });
    expect(merged).toHaveLength(2);
    expect(await store.listMemories('a', { lifecycles: ['superseded'], limit: 10 })).toHaveLength(4);
    expect(await store.listMemories('a', { kinds: ['reflection'], limit: 10 })).toHaveLength(1);
    const persona = await store.listMemories('a', { kinds: ['persona'], limit: 10 });
    expect(persona.map((p) => p.tags.includes(REVIEW_NEEDED_TAG))).toEqual([true]);
  });

  it('denies by the total when a step could take more', async () => {
    const { store, time, retriever } = await setup();
    for (let i = 1; i <= 9; i += 1) {
      const existing = await store.insertMemory({
        agentId: 'a',
        kind: 'fact',
        content: `Rule ${i} is strict`,
      });
      await store.setLifecycle('a', existing.id, existing.revision, 'conflicted');
      await store.insertMemory({
        agentId: 'a',
        kind: 'fact',
        content: `Rule ${i} is lax`,
        tags: [`challenges:${existing.id}`],
      });
    }
    const model = createScriptedModel({ memory_challenge: repeat('{"verdict":"keepBoth"}', 9) });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      budget: { stepCalls: { challenge: 9 } },
      reflection: { importanceThreshold: 100 },
    });
    const { report } = await runner.run('a');
    // Eight challenge calls fit the total of 8; the ninth challenge, the merge of a restored pair
    // ("Rule 1 is strict" / "Rule 1 is lax") and the persona call are denied, each counted for its step.
    expect(report?.heavy).toMatchObject({
      modelCalls: 8,
      denials: { challenge: 1, merge: 1, reflection: 0, persona: 1 },
    });
    expect(model.calls).toHaveLength(8);
  });

  it('merge: asks the model only about same-agent, same-kind neighbours above the similarity floor that may merge', async () => {
    const { store, embedder, time, retriever } = await setup();
    const BACKUP = [
      'The nightly backup job writes to the archive bucket',
      'The nightly backup job writes into the archive bucket',
    ]; // similarity 0.78
    const LINTER = [
      'The linter runs before every commit in the repository',
      'The linter runs before each commit in this repository',
    ]; // similarity 0.70
    const LANGUAGE = ['The user prefers English for replies', 'The user prefers Spanish for replies']; // 0.71, entities differ
    const semantic = (content: string, agentId = 'a'): NewMemory => ({ agentId, kind: 'semantic', content });
    const inserted = await store.insertMemories([...BACKUP, ...LINTER, ...LANGUAGE].map((c) => semantic(c)));
    // The same text of another agent, and a near duplicate of another kind, are never merge partners.
    const [foreignTwin] = await store.insertMemories([semantic(BACKUP[0] ?? '', 'b')]);
    await store.insertMemories([
      { agentId: 'a', kind: 'semantic', content: 'Incident reviews happen on the next working day' },
      { agentId: 'a', kind: 'episodic', content: 'Incident reviews happen on the following working day' },
    ]);
    await createEmbeddingDrain({ store, embedder }).run();
    const asked: string[][] = [];
    const merge: ScriptedAnswer = ({ messages }) => {
      const { a, b } = JSON.parse(messages[1]?.content ?? '{}') as { a: string; b: string };
      asked.push([a, b].sort());
      return a.includes('backup')
        ? JSON.stringify({ merge: true, content: 'The nightly backup job writes to the archive bucket' })
        : JSON.stringify({ merge: false, content: null });
    };
    const model = createScriptedModel({ memory_merge: repeat(merge, 4) });
    const runner = (similarityFloor: number) =>
      createMaintenanceRunner({
        store,
        retriever,
        model,
        clock: time.clock,
        merge: { similarityFloor },
        reflection: { importanceThreshold: 100 },
      });

    // Floor 0.75: only the backup pair qualifies; the model merges it into one row that supersedes both.
    const high = (await runner(0.75).run('a')).report;
    expect(high?.heavy).toMatchObject({ outcome: 'completed', modelCalls: 1, steps: { merge: 'completed' } });
    expect(asked).toEqual([[...BACKUP].sort()]);
    const merged = await store.listMemories('a', { tags: ['source:merge'], limit: 10 });
    expect(merged.map((m) => [m.kind, m.content, m.lifecycle])).toEqual([
      ['semantic', 'The nightly backup job writes to the archive bucket', 'active'],
    ]);
    for (const id of [inserted[0]?.id, inserted[1]?.id]) {
      expect((await store.getMemory('a', id ?? ''))?.lifecycle).toBe('superseded');
    }
    expect(await store.getMemory('b', foreignTwin?.id ?? '')).toMatchObject({
      lifecycle: 'active',
      revision: 1,
    });

    // Floor 0.65: the linter pair is asked too, and the model's "no" is respected; the pair that differs
    // in a named entity and the cross-kind pair are never asked about.
    time.advance(10);
    const low = (await runner(0.65).run('a')).report;
    expect(low?.heavy).toMatchObject({ outcome: 'completed', modelCalls: 1, steps: { merge: 'completed' } });
    expect(asked.slice(1)).toEqual([[...LINTER].sort()]);
    for (const row of inserted.slice(2)) {
      expect(await store.getMemory('a', row.id)).toMatchObject({ lifecycle: 'active', revision: 1 });
    }
  });

  it('counts a reservation denied by the input-token budget for its step', async () => {
    const { store, time, retriever } = await setup();
    await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The user prefers dark mode' });
    const model = createScriptedModel();
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      budget: { inputTokens: 10 },
    });
    const { report } = await runner.run('a');
    // The persona prompt alone is far above 10 estimated tokens: denied before any call.
    expect(report?.heavy).toMatchObject({
      modelCalls: 0,
      inputTokens: 0,
      denials: { challenge: 0, merge: 0, reflection: 0, persona: 1 },
    });
    expect(model.calls).toHaveLength(0);
  });

  it('gates the heavy phase by its cool-down, sooner after a failure; one pass per agent at a time', async () => {
    const { store, time, retriever } = await setup();
    await store.insertMemory({
      agentId: 'a',
      kind: 'fact',
      content: 'The user prefers dark mode',
      importance: 0.4,
    });
    const model = createScriptedModel({ memory_persona: ['not json at all'] });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      heavyCooldownMs: 6 * HOUR,
      failureCooldownMs: 15 * 60 * 1000,
    });
    const failed = (await runner.run('a')).report;
    expect(failed?.heavy).toMatchObject({
      outcome: 'failed',
      invalidOutputs: 1,
      steps: { persona: 'failed' },
    });
    expect((await runner.run('a')).report?.heavy.outcome).toBe('gated');
    time.advance(15 * 60 * 1000);
    model.push('memory_persona', '{"persona":"Prefers dark mode"}');
    const ok = (await runner.run('a')).report;
    expect(ok?.heavy).toMatchObject({ outcome: 'completed', modelCalls: 1 });
    time.advance(15 * 60 * 1000);
    expect((await runner.run('a')).report?.heavy.outcome).toBe('gated');
    time.advance(6 * HOUR);
    model.push('memory_persona', '{"persona":"Prefers dark mode"}');
    expect((await runner.run('a')).report?.heavy.outcome).toBe('completed');
    // force ignores the gate; a concurrent pass of the same agent is refused.
    let release: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const inModel = new Promise<void>((r) => {
      entered = r;
    });
    model.push('memory_persona', async () => {
      entered();
      await new Promise<void>((r) => {
        release = r;
      });
      return '{"persona":"Prefers dark mode"}';
    });
    const first = runner.run('a', { force: true });
    // Wait until the first pass is inside its model call (over a network store that takes more than a turn).
    await inModel;
    expect(await runner.run('a')).toEqual({ skipped: 'busy', report: null });
    expect((await runner.run('b')).skipped).toBeNull();
    release();
    expect((await first).report?.heavy.outcome).toBe('completed');
  });

  it('persona: a small change replaces the current persona, a large one becomes a draft needing review', async () => {
    const { store, time, retriever } = await setup();
    await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The user writes TypeScript' });
    const current = await store.insertMemory({
      agentId: 'a',
      kind: 'persona',
      content: 'A TypeScript developer who likes small focused pull requests',
    });
    const model = createScriptedModel({
      memory_persona: [
        '{"persona":"A TypeScript developer who likes small focused pull requests and tests"}',
        '{"persona":"A Rust systems engineer building embedded firmware"}',
      ],
    });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      heavyCooldownMs: 1,
    });
    await runner.run('a');
    const afterSmall = await store.getMemory('a', current.id);
    expect(afterSmall?.lifecycle).toBe('superseded');
    const active = await store.listMemories('a', { kinds: ['persona'], lifecycles: ['active'], limit: 10 });
    expect(active.map((p) => [p.content, p.tags.includes(REVIEW_NEEDED_TAG)])).toEqual([
      ['A TypeScript developer who likes small focused pull requests and tests', false],
    ]);
    time.advance(10);
    await runner.run('a');
    const personas = await store.listMemories('a', { kinds: ['persona'], lifecycles: ['active'], limit: 10 });
    const draft = personas.find((p) => p.tags.includes(REVIEW_NEEDED_TAG));
    expect(draft?.content).toBe('A Rust systems engineer building embedded firmware');
    // The reviewed persona stays in place until someone accepts the draft.
    expect(personas.filter((p) => !p.tags.includes(REVIEW_NEEDED_TAG))).toHaveLength(1);
  });

  it('persona: an unchanged answer writes nothing (draft or approved); a changed one supersedes the draft', async () => {
    const { store, time, retriever } = await setup();
    await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The user writes TypeScript' });
    const same = '{"persona":"A TypeScript developer who writes tests first"}';
    const model = createScriptedModel({
      memory_persona: [
        same,
        same,
        // The same text up to case and whitespace is the same persona.
        '{"persona":"a typescript   developer who Writes tests first"}',
        '{"persona":"A Go developer who deploys on Fridays"}',
      ],
    });
    const runner = createMaintenanceRunner({ store, retriever, model, clock: time.clock });
    const allPersonas = () => store.listMemories('a', { kinds: ['persona'], limit: 100 });
    const steps: MaintenancePassReport['heavy'][] = [];
    for (let i = 0; i < 3; i += 1) {
      const report = (await runner.run('a', { force: true })).report;
      if (report !== null) steps.push(report.heavy);
      time.advance(10);
    }
    // Every pass asked the model and completed; only the first wrote a row.
    expect(steps.map((h) => [h.outcome, h.modelCalls, h.steps.persona])).toEqual([
      ['completed', 1, 'completed'],
      ['completed', 1, 'completed'],
      ['completed', 1, 'completed'],
    ]);
    const [draft, ...others] = await allPersonas();
    expect(others).toEqual([]);
    expect(draft).toMatchObject({
      content: 'A TypeScript developer who writes tests first',
      lifecycle: 'active',
      revision: 1,
    });
    expect(draft?.tags).toContain(REVIEW_NEEDED_TAG);

    // A really changed answer: a new draft that supersedes the old one.
    await runner.run('a', { force: true });
    const after = await allPersonas();
    expect(after).toHaveLength(2);
    const old = after.find((p) => p.id === draft?.id);
    const next = after.find((p) => p.id !== draft?.id);
    expect(old).toMatchObject({ lifecycle: 'superseded', supersededBy: next?.id });
    expect(next).toMatchObject({ content: 'A Go developer who deploys on Fridays', lifecycle: 'active' });
    expect(next?.tags).toContain(REVIEW_NEEDED_TAG);
    expect(model.calls.filter((c) => c.schemaName === 'memory_persona')).toHaveLength(4);
  });

  it('persona: with an approved persona and a pending draft, an answer equal to either writes nothing', async () => {
    const { store, time, retriever } = await setup();
    await store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The user writes TypeScript' });
    await store.insertMemory({
      agentId: 'a',
      kind: 'persona',
      content: 'A TypeScript developer who likes small focused pull requests',
    });
    await store.insertMemory({
      agentId: 'a',
      kind: 'persona',
      content: 'A Rust systems engineer building embedded firmware',
      tags: ['source:persona', REVIEW_NEEDED_TAG],
    });
    const before = await store.listMemories('a', { kinds: ['persona'], limit: 100 });
    const model = createScriptedModel({
      memory_persona: [
        '{"persona":"A Rust systems engineer building embedded firmware."}',
        '{"persona":"A TypeScript developer who likes small focused pull requests"}',
      ],
    });
    const runner = createMaintenanceRunner({ store, retriever, model, clock: time.clock });
    for (let i = 0; i < 2; i += 1) {
      expect((await runner.run('a', { force: true })).report?.heavy.steps.persona).toBe('completed');
      time.advance(10);
    }
    expect(model.calls).toHaveLength(2);
    expect(await store.listMemories('a', { kinds: ['persona'], limit: 100 })).toEqual(before);
  });

  it('reflection waits for enough new importance since its watermark', async () => {
    const { store, time, retriever } = await setup();
    await store.insertMemories(
      Array.from({ length: 4 }, (_, i) => ({
        agentId: 'a',
        kind: 'episodic' as const,
        content: `Incident ${i} resolved`,
        importance: 0.5,
      })),
    );
    const model = createScriptedModel({
      memory_reflection: ['{"reflections":[{"content":"Incidents get resolved quickly","importance":0.6}]}'],
    });
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      clock: time.clock,
      heavyCooldownMs: 1,
      reflection: { importanceThreshold: 3 },
    });
    expect((await runner.run('a')).report?.heavy.steps.reflection).toBe('skipped');
    time.advance(10);
    await store.insertMemories(
      Array.from({ length: 2 }, (_, i) => ({
        agentId: 'a',
        kind: 'episodic' as const,
        content: `Outage ${i} fixed`,
        importance: 0.6,
      })),
    );
    expect((await runner.run('a')).report?.heavy.steps.reflection).toBe('completed');
    expect(await store.listMemories('a', { kinds: ['reflection'], limit: 10 })).toHaveLength(1);
    time.advance(10);
    // Nothing new since the reflection: no further call.
    expect((await runner.run('a')).report?.heavy.steps.reflection).toBe('skipped');
    expect(model.calls.filter((c) => c.schemaName === 'memory_reflection')).toHaveLength(1);
  });
});
