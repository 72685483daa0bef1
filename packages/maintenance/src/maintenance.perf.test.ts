import { createRetriever } from '@engram/retrieval';
import { afterEach, describe, expect, it } from 'vitest';
import { createMaintenanceRunner } from './maintenance.js';
import type { ModelPort } from './ports.js';
import { createFakeTime } from './test-support/fake-time.js';
import { openTempStore, type TempStore } from './test-support/native.js';

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

/** A model that always has a valid answer, so only the budget bounds the calls. */
function willingModel(): ModelPort & { calls: number } {
  const answers: Record<string, string> = {
    memory_challenge: '{"verdict":"keepBoth"}',
    memory_merge: '{"merge":false,"content":null}',
    memory_reflection: '{"reflections":[]}',
    memory_persona: '{"persona":"A developer"}',
  };
  const model = {
    id: 'willing',
    calls: 0,
    async generate(req: Parameters<ModelPort['generate']>[0]) {
      model.calls += 1;
      return { text: answers[req.jsonSchema.name] ?? '{}' };
    },
  };
  return model;
}

describe('model calls per maintenance pass', () => {
  it('never exceeds 8 model calls per pass, whatever the amount of work', async () => {
    for (const n of [3, 20, 80]) {
      const time = createFakeTime();
      const t = await openTempStore({ now: time.clock.now });
      open.push(t);
      for (let i = 0; i < n; i += 1) {
        const existing = await t.store.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: `Setting ${i} is enabled`,
          importance: 0.9,
        });
        await t.store.setLifecycle('a', existing.id, existing.revision, 'conflicted');
        await t.store.insertMemory({
          agentId: 'a',
          kind: 'fact',
          content: `Setting ${i} is disabled`,
          tags: [`challenges:${existing.id}`],
        });
        await t.store.insertMemory({
          agentId: 'a',
          kind: 'semantic',
          content: `Note ${i} about the build cache`,
        });
        await t.store.insertMemory({
          agentId: 'a',
          kind: 'semantic',
          content: `Note ${i} about the build caches`,
        });
      }
      const model = willingModel();
      const runner = createMaintenanceRunner({
        store: t.store,
        retriever: createRetriever({ store: t.store, now: time.clock.now }),
        model,
        clock: time.clock,
        heavyCooldownMs: 1,
      });
      for (let pass = 0; pass < 3; pass += 1) {
        const before = model.calls;
        const { report } = await runner.run('a');
        time.advance(10);
        const calls = model.calls - before;
        expect(calls).toBeLessThanOrEqual(8);
        expect(report?.heavy.modelCalls).toBe(calls);
        const denied = Object.values(report?.heavy.denials ?? {}).reduce((x, y) => x + y, 0);
        // With more work than budget, the pass uses the whole budget and counts what it had to refuse.
        if (n >= 20 && pass === 0) {
          expect(calls).toBe(8);
          expect(denied).toBeGreaterThan(0);
        }
      }
    }
  });
});
