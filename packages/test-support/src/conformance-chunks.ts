/**
 * The conformance suite of the store port, part nine: long memories stored as chunks — a memory is scored by
 * its best chunk, chunks do not starve the vector arm of memories, and a memory is ready only when every chunk
 * is (a chunk error makes it `error`, and only the open chunks come back for a retry).
 */
import { describe, expect, it } from 'vitest';
import { type ConformanceOpen, vec4, withPort } from './conformance-port.js';

/** A long memory: paragraphs about harmless topics, with a distinctive phrase in paragraph `at`. */
function longContent(paragraphs: number, at: number, phrase: string): string {
  return Array.from({ length: paragraphs }, (_, i) => {
    const body = `Paragraph ${i} is a plain account of the weekly garden club meeting, the weather and the snacks.`;
    const filler = ' The members talked at length about tomatoes, compost and the new fence.'.repeat(5);
    return i === at ? `${body} Then ${phrase} came up.${filler}` : `${body}${filler}`;
  }).join('\n\n');
}

/** A distinct unit vector per chunk index. */
function chunkVector(index: number): Float32Array {
  const a = (index + 1) * 0.37;
  return vec4(Math.cos(a), Math.sin(a), 0.1 * index, 1);
}

/** Registers the chunk part of the suite. */
export function describeChunkConformance(name: string, open: ConformanceOpen): void {
  describe(`store port conformance: ${name}: chunked long memories`, () => {
    it(
      'scores a long memory by its best chunk: a focused chunk outranks scattered mentions',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'long', agentId: 'a', kind: 'fact', content: longContent(10, 8, 'quartz quartz quartz') },
          { id: 'other', agentId: 'a', kind: 'fact', content: longContent(10, 2, 'grey gravel') },
        ]);
        const found = await s.searchLexical({ agentId: 'a', terms: ['quartz'], limit: 5 });
        expect(found.hits.map((h) => h.id)).toEqual(['long']);
        expect(found.hits[0]?.chunk?.index).toBeGreaterThan(0);
      }),
    );

    it(
      'long memories whose chunks crowd the nearest neighbours do not starve the vector arm of memories',
      withPort(open, async (s) => {
        const longs = Array.from({ length: 5 }, (_, i) => ({
          id: `long${i}`,
          agentId: 'a',
          kind: 'fact' as const,
          content: longContent(12, i, `topic ${i}`),
        }));
        const shorts = Array.from({ length: 10 }, (_, i) => ({
          id: `short${i}`,
          agentId: 'a',
          kind: 'fact' as const,
          content: `short note ${i}`,
        }));
        await s.insertMemories([...longs, ...shorts]);
        const chunks = (await s.listPendingEmbeddings({ limit: 1000 })).filter((p) => p.chunk !== undefined);
        expect(chunks.length).toBeGreaterThan(4 * 8);
        // Every chunk of a long memory is nearer the query than any short memory.
        for (;;) {
          const pending = await s.listPendingEmbeddings({ limit: 50 });
          if (pending.length === 0) break;
          await s.commitEmbeddings(
            pending.map((p) => ({
              id: p.id,
              revision: p.revision,
              state: 'ready' as const,
              vector:
                p.chunk === undefined
                  ? vec4(1, 1 + 0.1 * Number(p.id.slice(5)), 0, 0)
                  : vec4(1, 0.01 * p.chunk, 0.001 * Number(p.id.slice(4)), 0),
              ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
            })),
          );
        }
        const hits = await s.searchVector({ agentId: 'a', vector: vec4(1, 0, 0, 0), k: 8 });
        expect(hits.map((h) => h.id)).toEqual([
          'long0',
          'long1',
          'long2',
          'long3',
          'long4',
          'short0',
          'short1',
          'short2',
        ]);
      }),
    );

    it(
      'a partly embedded memory stays pending; a chunk error makes it error and only open chunks return',
      withPort(open, async (s) => {
        const content = longContent(8, 1, 'x');
        await s.insertMemories([{ id: 'long', agentId: 'a', kind: 'fact', content }]);
        const pending = await s.listPendingEmbeddings({ limit: 100 });
        const [p0, p1] = pending;
        expect(p0?.chunk).toBe(0);
        expect(p1?.chunk).toBe(1);
        expect(
          await s.commitEmbeddings([
            { id: 'long', revision: 1, chunk: 0, state: 'ready', vector: chunkVector(0) },
            { id: 'long', revision: 1, chunk: 1, state: 'error' },
          ]),
        ).toEqual({ ready: 1, error: 1, ftsOnly: 0, stale: 0 });
        expect(await s.getMemory('a', 'long')).toMatchObject({
          embeddingState: 'error',
          embeddingAttempts: 1,
        });
        const retry = await s.listPendingEmbeddings({ limit: 100, retryErrorsBelowAttempts: 3 });
        expect(retry.map((p) => p.chunk)).toEqual(pending.slice(1).map((p) => p.chunk));
        // Orphan pruning keeps the finished chunk's vector of a memory that is not ready yet.
        expect(await s.pruneOrphanedVectors('a')).toEqual({ pruned: 0 });
        // An outcome without a chunk for a chunked memory, or for a chunk it does not have, changes nothing.
        expect(
          await s.commitEmbeddings([
            { id: 'long', revision: 1, state: 'ready', vector: chunkVector(0) },
            { id: 'long', revision: 1, chunk: 99, state: 'ready', vector: chunkVector(0) },
          ]),
        ).toEqual({ ready: 0, error: 0, ftsOnly: 0, stale: 2 });
      }),
    );
  });
}
