/**
 * Time in memories and queries through the facade: a text can carry the time it is about, and a query that names
 * a time finds what happened then, counted from the caller's reference time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemory } from './memory.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-time-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const MARCH_3 = Date.UTC(2023, 2, 3);
const MAY_10 = Date.UTC(2023, 4, 10);

describe('add(text, { validFrom }) and a query that names a time', () => {
  it('keeps the time a memory is about and finds it by the window the query names', async () => {
    const memory = await createMemory({ path: join(dir, 'a.db'), embedder: 'deterministic' });
    try {
      await memory.add('We deployed the billing service', { validFrom: MARCH_3 });
      await memory.add('We deployed the billing service again after the outage', { validFrom: MAY_10 });
      const [stored] = await memory.list({ limit: 1 });
      expect(stored?.validFrom).toBe(MARCH_3);

      const [plain] = await memory.search('deployed billing service', {
        referenceTime: Date.UTC(2023, 4, 20),
      });
      expect(plain?.content).toBe('We deployed the billing service');
      const [lastWeek] = await memory.search('deployed billing service last week', {
        referenceTime: Date.UTC(2023, 4, 20),
      });
      expect(lastWeek?.content).toBe('We deployed the billing service again after the outage');
      expect(lastWeek?.explanation.time?.gain).toBeGreaterThan(0);
      const [inMarch] = await memory.search('deployed billing service in March 2023');
      expect(inMarch?.content).toBe('We deployed the billing service');
      expect(inMarch?.explanation.time).toMatchObject({
        from: Date.UTC(2023, 2, 1),
        to: Date.UTC(2023, 3, 1),
      });
    } finally {
      await memory.close();
    }
  });

  it('refuses a validFrom that is not epoch milliseconds, and one given with messages', async () => {
    const memory = await createMemory({ path: join(dir, 'b.db'), embedder: 'deterministic' });
    try {
      for (const validFrom of [Number.NaN, -1, 1.5]) {
        await expect(memory.add('x', { validFrom })).rejects.toMatchObject({
          code: 'ENGRAM_MEMORY_INVALID_INPUT',
        });
      }
      await expect(
        memory.add([{ role: 'user', content: 'hello' }], { validFrom: MARCH_3, sessionId: 's' }),
      ).rejects.toMatchObject({ code: 'ENGRAM_MEMORY_INVALID_INPUT' });
      await expect(memory.search('x', { referenceTime: Number.NaN })).rejects.toMatchObject({
        code: 'ENGRAM_MEMORY_INVALID_INPUT',
      });
      expect(await memory.list()).toEqual([]);
    } finally {
      await memory.close();
    }
  });
});
