/**
 * The conformance suite of the store port, part nine: long memories stored as chunks — a memory is scored by
 * its best chunk and also given its score as a whole memory, chunks do not starve the vector arm of memories, and a memory is ready only when every chunk
 * is (a chunk error makes it `error`, and only the open chunks come back for a retry).
 */
import { describe, expect, it } from 'vitest';
import {
  CONFORMANCE_PROFILE,
  type ConformanceOpen,
  type ConformancePort,
  vec4,
  withPort,
} from './conformance-port.js';

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

/** Embeds every pending item as a drain would, one chunk vector each; returns the items it embedded. */
async function drainAll(s: ConformancePort): Promise<{ id: string; chunk?: number; content: string }[]> {
  const done: { id: string; chunk?: number; content: string }[] = [];
  for (;;) {
    const pending = await s.listPendingEmbeddings({ limit: 7 });
    if (pending.length === 0) return done;
    await s.commitEmbeddings(
      pending.map((p) => ({
        id: p.id,
        revision: p.revision,
        state: 'ready' as const,
        vector: chunkVector(p.chunk ?? 0),
        ...(p.chunk === undefined ? {} : { chunk: p.chunk }),
      })),
    );
    for (const p of pending) {
      done.push({ id: p.id, content: p.content, ...(p.chunk === undefined ? {} : { chunk: p.chunk }) });
    }
  }
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
      'gives every hit its score as a whole memory when the answer holds a chunked one, and only then',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'long', agentId: 'a', kind: 'fact', content: longContent(10, 1, 'quartz') },
          { id: 'short', agentId: 'a', kind: 'fact', content: 'A quartz pebble and a basalt stone.' },
          { id: 'tiny', agentId: 'a', kind: 'fact', content: 'Basalt steps.' },
        ]);
        // `fence` is in every paragraph of the long memory: its chunks all match, the whole memory more so.
        const both = await s.searchLexical({ agentId: 'a', terms: ['quartz', 'fence'], limit: 5 });
        const long = both.hits.find((h) => h.id === 'long');
        expect(long?.chunk).toBeDefined();
        expect(long?.memoryScore).toBeGreaterThan(0);
        for (const h of both.hits) expect(h.memoryScore).toBeGreaterThan(0);
        const shortOnly = await s.searchLexical({ agentId: 'a', terms: ['basalt'], limit: 5 });
        expect(shortOnly.hits.map((h) => h.id).sort()).toEqual(['short', 'tiny']);
        for (const h of shortOnly.hits) expect(h.memoryScore).toBeUndefined();
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
    it(
      'the drain embeds every chunk exactly once and the memory becomes ready when all are',
      withPort(open, async (s) => {
        const content = longContent(12, 3, 'nothing special');
        await s.insertMemories([
          { id: 'long', agentId: 'a', kind: 'fact', content, vector: vec4(1, 0, 0, 0) },
          { id: 'short', agentId: 'a', kind: 'fact', content: 'short one' },
        ]);
        // The whole-text vector of a long memory is not stored: its chunks are embedded instead.
        expect(await s.getMemory('a', 'long')).toMatchObject({ embeddingState: 'pending' });
        const first = await s.listPendingEmbeddings({ limit: 3 });
        expect(first.map((p) => [p.id, p.chunk])).toEqual([
          ['long', 0],
          ['long', 1],
          ['long', 2],
        ]);
        // Each item is its chunk's text, a window of the memory.
        expect(content).toContain(first[1]?.content ?? 'missing');
        expect((first[1]?.content.length ?? 0) < content.length).toBe(true);
        const embedded = await drainAll(s);
        const n = embedded.filter((e) => e.id === 'long').length;
        expect(n).toBeGreaterThan(5);
        expect(embedded.map(({ id, chunk }) => ({ id, ...(chunk === undefined ? {} : { chunk }) }))).toEqual([
          ...Array.from({ length: n }, (_, i) => ({ id: 'long', chunk: i })),
          { id: 'short' },
        ]);
        expect(await s.getMemory('a', 'long')).toMatchObject({
          embeddingState: 'ready',
          embeddingFingerprint: `${CONFORMANCE_PROFILE.id}:${CONFORMANCE_PROFILE.dimensions}`,
        });
        expect(await s.listPendingEmbeddings({ limit: 10 })).toEqual([]);
        // The vector arm finds the memory by its nearest chunk and names it.
        const hits = await s.searchVector({ agentId: 'a', vector: chunkVector(5), k: 2 });
        expect(hits[0]?.id).toBe('long');
        const window = hits[0]?.chunk;
        expect(content.slice(window?.start, window?.end)).toBe(embedded.find((e) => e.chunk === 5)?.content);
        expect(hits[0]?.similarity).toBeCloseTo(1, 5);
      }),
    );

    it(
      'a deleted chunked memory is gone from both arms; archive and supersede hide one',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'gone', agentId: 'a', kind: 'fact', content: longContent(10, 7, 'the brass telescope') },
          { id: 'kept', agentId: 'a', kind: 'fact', content: longContent(10, 2, 'the copper kettle') },
          { id: 'old', agentId: 'a', kind: 'fact', content: longContent(10, 4, 'the silver spoon') },
        ]);
        await drainAll(s);
        expect(await s.deleteMemory('a', 'gone')).toBe(true);
        expect((await s.searchLexical({ agentId: 'a', terms: ['telescope'], limit: 5 })).hits).toEqual([]);
        const near = await s.searchVector({ agentId: 'a', vector: chunkVector(0), k: 10 });
        expect(near.map((h) => h.id).sort()).toEqual(['kept', 'old']);
        const kettle = async (): Promise<string[]> =>
          (await s.searchLexical({ agentId: 'a', terms: ['kettle'], limit: 5 })).hits.map((h) => h.id);
        expect(await kettle()).toEqual(['kept']);
        await s.archiveMemory('a', 'kept');
        expect(await kettle()).toEqual([]);
        // The vector arm's hits are revalidated: an archived row is not returned.
        expect((await s.revalidate('a', [{ id: 'kept' }, { id: 'old' }])).map((r) => r.id)).toEqual(['old']);
        await s.supersedeMemory('a', 'old', 1, {
          agentId: 'a',
          kind: 'fact',
          content: 'the silver spoon is lost',
        });
        const spoon = await s.searchLexical({ agentId: 'a', terms: ['spoon'], limit: 5 });
        expect(spoon.hits.map((h) => h.id)).not.toContain('old');
        expect(spoon.hits).toHaveLength(1);
        // Pruning keeps the hidden rows' chunks: they come back when the row is restored.
        expect(await s.pruneOrphanedVectors()).toEqual({ pruned: 0 });
      }),
    );

    it(
      'a content update re-chunks: the old text is gone, the new chunks are pending',
      withPort(open, async (s) => {
        await s.insertMemories([
          { id: 'm', agentId: 'a', kind: 'fact', content: longContent(12, 9, 'the old phrase') },
        ]);
        await drainAll(s);
        const updated = await s.updateMemory('a', 'm', 1, {
          content: longContent(4, 1, 'the new lighthouse'),
        });
        expect(updated.embeddingState).toBe('pending');
        const pending = await s.listPendingEmbeddings({ limit: 100 });
        expect(pending.length).toBeGreaterThan(1);
        expect(pending.every((p) => p.id === 'm' && p.chunk !== undefined && p.revision === 2)).toBe(true);
        expect(await s.searchVector({ agentId: 'a', vector: chunkVector(0), k: 5 })).toEqual([]);
        expect((await s.searchLexical({ agentId: 'a', terms: ['lighthouse'], limit: 5 })).hits[0]?.id).toBe(
          'm',
        );
        expect((await s.searchLexical({ agentId: 'a', terms: ['phrase'], limit: 5 })).hits).toEqual([]);
        // Shrinking to within the budget makes it one unchunked row again.
        await s.updateMemory('a', 'm', 2, { content: 'now short' });
        expect(await s.listPendingEmbeddings({ limit: 10 })).toMatchObject([
          { id: 'm', content: 'now short' },
        ]);
      }),
    );
  });
}
