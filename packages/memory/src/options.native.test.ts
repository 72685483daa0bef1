/**
 * Options are strict: what a user coming from another memory library types (`user_id`, `filters`,
 * `threshold`, a misspelt key) is a typed error naming the key and the option meant, never silently ignored
 * with every user's results coming back; `minScore` is the cut-off such a threshold asks for.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';
import type { Memory } from './types.js';

let dir: string;
let memory: Memory;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-options-'));
  memory = await createMemory({ path: join(dir, 'memory.db'), embedder: 'deterministic' });
  await memory.add('Alice is allergic to peanuts');
  await memory.add('The office closes at six on Fridays');
}, 120_000);
afterAll(async () => {
  await memory.close();
  await rm(dir, { recursive: true, force: true });
});

/** The rejection of a call, as `{ code, message }`. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await call;
  } catch (error) {
    const e = error as { code: string; message: string };
    return { code: e.code, message: e.message };
  }
  throw new Error('the call was accepted');
}

describe('unknown options', () => {
  it('add with user_id is refused, naming userId', async () => {
    const { code, message } = await refusal(memory.add('x', { user_id: 'bob' } as never));
    expect(code).toBe('ENGRAM_MEMORY_INVALID_INPUT');
    expect(message).toContain('did you mean "userId"');
  });

  it.each([
    ['agent_id', 'agentId'],
    ['filters', 'filter'],
    ['threshold', 'minScore'],
    ['top_k', 'limit'],
    ['limt', 'limit'],
    ['IncludeHistory', 'includeHistory'],
  ])('search with %s is refused, naming %s', async (key, meant) => {
    const { code, message } = await refusal(memory.search('peanuts', { [key]: 'x' } as never));
    expect(code).toBe('ENGRAM_MEMORY_INVALID_INPUT');
    expect(message).toContain(`"${key}"`);
    expect(message).toContain(`did you mean "${meant}"`);
  });

  it('an option with no near name is refused without a guess, on every method', async () => {
    const { message } = await refusal(memory.search('peanuts', { rerank: true } as never));
    expect(message).toContain('"rerank"');
    expect(message).not.toContain('did you mean');
    for (const call of [
      memory.add('x', { colour: 1 } as never),
      memory.list({ user_id: 'bob' } as never),
      memory.deleteAll({ userid: 'bob' } as never),
      memory.get('x', { bogus: 1 } as never),
      memory.context('x', { user_id: 'bob' } as never),
      memory.messages({ session_id: 's' } as never),
      memory.update('x', { text: 'y' } as never),
    ]) {
      expect((await refusal(call)).code).toBe('ENGRAM_MEMORY_INVALID_INPUT');
    }
  });

  it('a refused deleteAll deletes nothing', async () => {
    await refusal(memory.deleteAll({ user_id: 'bob' } as never));
    expect(await memory.list()).toHaveLength(2);
  });

  it('an option name is shown bounded and without control characters', async () => {
    const { message } = await refusal(memory.search('x', { [`a\u0007${'b'.repeat(100)}`]: 1 } as never));
    expect(message).not.toContain('\u0007');
    expect(message.length).toBeLessThan(200);
  });
});

describe('minScore', () => {
  it('leaves out results scoring below it, and refuses a value that is not a score', async () => {
    const all = await memory.search('peanuts allergy');
    expect(all.length).toBeGreaterThan(0);
    const best = all[0]?.score ?? 0;
    // Scores of one query may differ in their last digits between two searches: cut just below the best.
    const cut = await memory.search('peanuts allergy', { minScore: best * 0.99 });
    expect(cut.map((hit) => hit.content)).toEqual(['Alice is allergic to peanuts']);
    expect(cut.every((hit) => hit.score >= best * 0.99)).toBe(true);
    expect(await memory.search('peanuts allergy', { minScore: best + 1 })).toEqual([]);
    expect((await refusal(memory.search('x', { minScore: Number.NaN }))).code).toBe(
      'ENGRAM_MEMORY_INVALID_INPUT',
    );
  });
});
