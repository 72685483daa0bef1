/**
 * The challenge step settles contradiction links between facts: with a model, the fact it says holds stays
 * current and the other is superseded (closed, kept in its history) or both stay; without a model both stay
 * current and marked conflicting. Facts of other subjects are never touched.
 */
import { createRetriever } from '@engram/retrieval';
import { createToolHandler } from '@engram/tools';
import { afterEach, describe, expect, it } from 'vitest';
import { createMaintenanceRunner } from './maintenance.js';
import { createFakeTime } from './test-support/fake-time.js';
import { openTempStore, type TempStore } from './test-support/native.js';
import { createScriptedModel } from './test-support/scripted-model.js';

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

async function seeded() {
  const time = createFakeTime(1_800_000_000_000);
  const t = await openTempStore({ now: time.clock.now });
  open.push(t);
  const retriever = createRetriever({ store: t.store, embedder: t.embedder, now: time.clock.now });
  const tools = createToolHandler({ store: t.store, retriever, embedder: t.embedder });
  const say = async (content: string) => {
    const answer = await tools.execute('memory_remember', { content }, { agentId: 'a' });
    time.advance(1000);
    const id = /^Remembered as fact ([^\s.]+)\./.exec(answer.text)?.[1];
    if (id === undefined) throw new Error('not stored as a new fact');
    return id;
  };
  const older = await say('the API listens on port 8080');
  const newer = await say('the API listens on port 9090');
  const web = await say('the web dashboard is served on port 3000');
  const admin = await say('the admin dashboard is served on port 4000');
  return { ...t, time, retriever, older, newer, web, admin };
}

describe('contradiction links in maintenance', () => {
  it('with a model: the newer fact wins, the older is superseded and closed; unrelated facts stay', async () => {
    const { store, time, retriever, older, newer, web, admin } = await seeded();
    expect(await store.listConflicts('a', { state: 'open' })).toHaveLength(1);
    const model = createScriptedModel({ memory_challenge: ['{"verdict":"keepChallenger"}'] });
    const runner = createMaintenanceRunner({ store, retriever, model, clock: time.clock });
    const { report } = await runner.run('a', { force: true });
    expect(report?.heavy.steps.challenge).toBe('completed');
    expect(await store.getMemory('a', older)).toMatchObject({
      lifecycle: 'superseded',
      supersededBy: newer,
      validTo: time.clock.now(),
    });
    expect((await store.getMemory('a', newer))?.lifecycle).toBe('active');
    expect((await store.getMemory('a', web))?.lifecycle).toBe('active');
    expect((await store.getMemory('a', admin))?.lifecycle).toBe('active');
    expect(await store.listConflicts('a', { state: 'open' })).toEqual([]);
    const history = await store.history('a', newer);
    expect(history.entries.map((e) => e.action)).toContain('conflictResolved');
    const { results } = await retriever.search('a', 'API port');
    expect(results.map((r) => r.record.id)).not.toContain(older);
    expect(results.every((r) => r.explanation.conflict === undefined)).toBe(true);
  });

  it('the model may keep both: the link is dismissed and both stay current', async () => {
    const { store, time, retriever, older, newer } = await seeded();
    const model = createScriptedModel({ memory_challenge: ['{"verdict":"keepBoth"}'] });
    await createMaintenanceRunner({ store, retriever, model, clock: time.clock }).run('a', { force: true });
    expect((await store.getMemory('a', older))?.lifecycle).toBe('active');
    expect((await store.getMemory('a', newer))?.lifecycle).toBe('active');
    expect(await store.listConflicts('a', { state: 'dismissed' })).toHaveLength(1);
  });

  it('without a model both facts stay current and marked conflicting', async () => {
    const { store, time, retriever, older, newer } = await seeded();
    const { report } = await createMaintenanceRunner({ store, retriever, clock: time.clock }).run('a');
    expect(report?.heavy.outcome).toBe('skipped');
    expect((await store.getMemory('a', older))?.lifecycle).toBe('active');
    expect((await store.getMemory('a', newer))?.lifecycle).toBe('active');
    const { results } = await retriever.search('a', 'API port');
    const conflict = new Map(results.map((r) => [r.record.id, r.explanation.conflict?.status]));
    expect(conflict.get(older)).toBe('older');
    expect(conflict.get(newer)).toBe('newer');
  });
});
