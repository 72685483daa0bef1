/**
 * The conformance suite of the store port, part three: the embedding state machine (pending rows, commits
 * checked by revision, retries, validation, a store without a profile), as every adapter must behave.
 */
import { describe, expect, it } from 'vitest';
import { CONFORMANCE_PROFILE, type ConformanceOpen, vec4, withPort } from './conformance-port.js';

/** Registers the embedding part of the suite. */
export function describeEmbeddingConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: embedding state machine`, () => {
    it(
      'lists pending rows in insertion order, per agent or all, bounded by limit',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'p3', agentId: 'a', kind: 'fact', content: 'three' },
          { id: 'p1', agentId: 'b', kind: 'fact', content: 'one' },
          { id: 'p2', agentId: 'a', kind: 'fact', content: 'two' },
          { id: 'r', agentId: 'a', kind: 'fact', content: 'ready', vector: vec4(1, 0, 0, 0) },
        ]);
        expect((await s.listPendingEmbeddings({ limit: 10 })).map((p) => p.id)).toEqual(['p3', 'p1', 'p2']);
        expect((await s.listPendingEmbeddings({ limit: 2 })).map((p) => p.id)).toEqual(['p3', 'p1']);
        expect(await s.listPendingEmbeddings({ agentId: 'a', limit: 10 })).toEqual([
          { id: 'p3', agentId: 'a', content: 'three', revision: 1, embeddingAttempts: 0 },
          { id: 'p2', agentId: 'a', content: 'two', revision: 1, embeddingAttempts: 0 },
        ]);
        expect(await s.countEmbeddingBacklog()).toEqual({ total: 3, byAgent: { a: 2, b: 1 } });
      }),
    );

    it(
      'counts only the transitions it makes: outcomes for rows or chunks another commit settled are stale',
      withPort(open, async (s) => {
        const long = Array.from(
          { length: 30 },
          (_, i) => `Section ${i} of the handbook covers topic ${i}.`,
        ).join('\n\n');
        await s.insertMemories([
          { id: 'x', agentId: 'a', kind: 'fact', content: 'x' },
          { id: 'y', agentId: 'a', kind: 'fact', content: 'y' },
          { id: 'long', agentId: 'a', kind: 'episodic', content: long },
        ]);
        // Two drains read the same pending items before either commits.
        const items = await s.listPendingEmbeddings({ limit: 100 });
        expect(items.filter((i) => i.id === 'long').length).toBeGreaterThan(1);
        const outcomes = items.map((i) => ({
          id: i.id,
          revision: i.revision,
          state: 'ready' as const,
          vector: vec4(1, 0, 0, 0),
          ...(i.chunk === undefined ? {} : { chunk: i.chunk }),
        }));
        const first = await s.commitEmbeddings(outcomes);
        const second = await s.commitEmbeddings(outcomes);
        expect(first).toEqual({ ready: items.length, error: 0, ftsOnly: 0, stale: 0 });
        expect(second).toEqual({ ready: 0, error: 0, ftsOnly: 0, stale: items.length });
        // An error outcome for a settled row neither counts nor touches it.
        expect(await s.commitEmbeddings([{ id: 'x', revision: 1, state: 'error' }])).toEqual({
          ready: 0,
          error: 0,
          ftsOnly: 0,
          stale: 1,
        });
        for (const id of ['x', 'y', 'long']) {
          expect(await s.getMemory('a', id)).toMatchObject({ embeddingState: 'ready', embeddingAttempts: 0 });
        }
        expect(await s.countEmbeddingBacklog()).toEqual({ total: 0, byAgent: {} });
      }),
    );

    it(
      'commits ready, error and ftsOnly transitions; error rows come back only below the retry bound',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'x', agentId: 'a', kind: 'fact', content: 'x' },
          { id: 'y', agentId: 'a', kind: 'fact', content: 'y' },
          { id: 'z', agentId: 'a', kind: 'fact', content: 'z' },
        ]);
        const result = await s.commitEmbeddings([
          { id: 'x', revision: 1, state: 'ready', vector: vec4(1, 0, 0, 0) },
          { id: 'y', revision: 1, state: 'error' },
          { id: 'z', revision: 1, state: 'ftsOnly' },
        ]);
        expect(result).toEqual({ ready: 1, error: 1, ftsOnly: 1, stale: 0 });
        expect(await s.getMemory('a', 'x')).toMatchObject({
          embeddingState: 'ready',
          embeddingFingerprint: `${CONFORMANCE_PROFILE.id}:${CONFORMANCE_PROFILE.dimensions}`,
          revision: 1,
        });
        expect(await s.getMemory('a', 'y')).toMatchObject({ embeddingState: 'error', embeddingAttempts: 1 });
        expect(await s.getMemory('a', 'z')).toMatchObject({ embeddingState: 'ftsOnly' });
        expect(await s.listPendingEmbeddings({ limit: 10 })).toEqual([]);
        expect(
          (await s.listPendingEmbeddings({ limit: 10, retryErrorsBelowAttempts: 2 })).map((p) => p.id),
        ).toEqual(['y']);
        await s.commitEmbeddings([{ id: 'y', revision: 1, state: 'error' }]);
        expect(await s.listPendingEmbeddings({ limit: 10, retryErrorsBelowAttempts: 2 })).toEqual([]);
        expect(
          (await s.searchVector({ agentId: 'a', vector: vec4(1, 0, 0, 0), k: 5 })).map((h) => h.id),
        ).toEqual(['x']);
        expect(await s.countEmbeddingBacklog()).toEqual({ total: 0, byAgent: {} });
      }),
    );

    it(
      'a row edited (or deleted) while it was embedded is stale and keeps no vector',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'edited', agentId: 'a', kind: 'fact', content: 'old text' },
          { id: 'deleted', agentId: 'a', kind: 'fact', content: 'soon gone' },
          { id: 'fine', agentId: 'a', kind: 'fact', content: 'fine' },
        ]);
        const batch = await s.listPendingEmbeddings({ limit: 10 });
        await s.updateMemory('a', 'edited', 1, { content: 'new text' });
        await s.deleteMemory('a', 'deleted');
        const result = await s.commitEmbeddings(
          batch.map((p) => ({
            id: p.id,
            revision: p.revision,
            state: 'ready' as const,
            vector: vec4(0, 1, 0, 0),
          })),
        );
        expect(result).toEqual({ ready: 1, error: 0, ftsOnly: 0, stale: 2 });
        expect(await s.getMemory('a', 'edited')).toMatchObject({ embeddingState: 'pending', revision: 2 });
        expect(
          (await s.searchVector({ agentId: 'a', vector: vec4(0, 1, 0, 0), k: 5 })).map((h) => h.id),
        ).toEqual(['fine']);
        expect((await s.listPendingEmbeddings({ limit: 10 })).map((p) => [p.id, p.revision])).toEqual([
          ['edited', 2],
        ]);
      }),
    );

    it(
      'validates every vector before writing any (dimensions, NaN)',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'a1', agentId: 'a', kind: 'fact', content: 'a1' },
          { id: 'a2', agentId: 'a', kind: 'fact', content: 'a2' },
        ]);
        await expect(
          s.commitEmbeddings([
            { id: 'a1', revision: 1, state: 'ready', vector: vec4(1, 0, 0, 0) },
            { id: 'a2', revision: 1, state: 'ready', vector: vec4(1, 0) },
          ]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_DIMENSIONS' });
        await expect(
          s.commitEmbeddings([{ id: 'a1', revision: 1, state: 'ready', vector: vec4(Number.NaN, 0, 0, 0) }]),
        ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_INVALID' });
        expect((await s.listPendingEmbeddings({ limit: 10 })).map((p) => p.id)).toEqual(['a1', 'a2']);
      }),
    );

    it(
      'a store without a profile keeps rows pending until the drain marks them ftsOnly',
      withPort(
        open,
        async (s) => {
          const rec = await s.insertMemory({ agentId: 'a', kind: 'fact', content: 'no vectors here' });
          expect(rec.embeddingState).toBe('pending');
          expect(s.embeddingProfile).toBeNull();
          await expect(
            s.commitEmbeddings([{ id: rec.id, revision: 1, state: 'ready', vector: vec4(1, 0, 0, 0) }]),
          ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_UNAVAILABLE' });
          expect(await s.commitEmbeddings([{ id: rec.id, revision: 1, state: 'ftsOnly' }])).toEqual({
            ready: 0,
            error: 0,
            ftsOnly: 1,
            stale: 0,
          });
          await expect(
            s.searchVector({ agentId: 'a', vector: vec4(1, 0, 0, 0), k: 1 }),
          ).rejects.toMatchObject({ code: 'ENGRAM_STORE_VECTOR_UNAVAILABLE' });
        },
        { vectors: false },
      ),
    );
  });
}
