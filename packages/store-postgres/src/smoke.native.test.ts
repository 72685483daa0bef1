import { describe, expect, it } from 'vitest';
import { freshPostgresStore } from './testing/fresh.js';

describe('postgres store smoke', () => {
  it('inserts, finds lexically and by vector, and updates with compare-and-set', async () => {
    const store = await freshPostgresStore({ embedding: { id: 'p', dimensions: 3 } });
    try {
      const a = await store.insertMemory({
        agentId: 'a',
        kind: 'fact',
        content: 'The deploy key lives in vault',
        vector: new Float32Array([1, 0, 0]),
      });
      await store.insertMemory({
        agentId: 'b',
        kind: 'fact',
        content: 'The deploy key of agent b',
        vector: new Float32Array([1, 0, 0]),
      });
      const lex = await store.searchLexical({ agentId: 'a', terms: ['deploy', 'vault'], limit: 10 });
      expect(lex.hits.map((h) => h.id)).toEqual([a.id]);
      const vec = await store.searchVector({ agentId: 'a', vector: new Float32Array([1, 0.1, 0]), k: 5 });
      expect(vec.map((h) => h.id)).toEqual([a.id]);
      const next = await store.updateMemory('a', a.id, 1, { content: 'The deploy key moved to the HSM' });
      expect(next.revision).toBe(2);
      await expect(store.updateMemory('a', a.id, 1, { importance: 1 })).rejects.toMatchObject({
        code: 'ENGRAM_STORE_REVISION_CONFLICT',
      });
      const moved = await store.searchLexical({ agentId: 'a', terms: ['hsm'], limit: 10 });
      expect(moved.hits.map((h) => h.id)).toEqual([a.id]);
    } finally {
      await store.close();
    }
  });
});
