import {
  appendFileSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentHash } from '@engram/contracts';
import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { afterAll, describe, expect, it } from 'vitest';
import { createVectorSource, type EvalEmbedder } from './embedders.js';
import { openVectorCache } from './vector-cache.js';

const root = mkdtempSync(join(tmpdir(), 'engram-eval-cache-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const PROFILE = { id: 'p/x:1', dimensions: 3 } as const;
const h = (text: string): string => contentHash(text);
const vec = (...xs: number[]): Float32Array => Float32Array.from(xs);

/** A real embedder that counts the texts it is asked to embed. */
function counting(): EvalEmbedder & { readonly texts: string[] } {
  const inner = createDeterministicEmbedder();
  const texts: string[] = [];
  return {
    profile: inner.profile,
    texts,
    embed: async (batch) => {
      texts.push(...batch);
      return inner.embed(batch);
    },
  };
}

describe('openVectorCache', () => {
  it('keeps appended vectors across opens, bit for bit, one directory per profile', () => {
    const dir = join(root, 'roundtrip');
    const first = openVectorCache(dir, PROFILE);
    expect(first.loaded).toBe(0);
    first.append([
      [h('one'), vec(0.1, -0.2, 0.3)],
      [h('two'), vec(1, 2, 3)],
    ]);
    first.append([[h('one'), vec(9, 9, 9)]]); // already present: not appended again
    const again = openVectorCache(dir, PROFILE);
    expect(again.loaded).toBe(2);
    expect(again.get(h('one'))).toEqual(vec(0.1, -0.2, 0.3));
    expect(again.get(h('two'))).toEqual(vec(1, 2, 3));
    expect(again.get(h('three'))).toBeUndefined();
    const other = openVectorCache(dir, { ...PROFILE, dimensions: 4 });
    expect(other.loaded).toBe(0);
    expect(other.directory).not.toBe(again.directory);
    expect(JSON.parse(readFileSync(join(again.directory, 'profile.json'), 'utf8'))).toEqual({
      format: 1,
      id: 'p/x:1',
      dimensions: 3,
    });
  });

  it('cuts a torn tail left by a crash and appends aligned records after it', () => {
    const dir = join(root, 'torn');
    const cache = openVectorCache(dir, PROFILE);
    cache.append([
      [h('a'), vec(1, 0, 0)],
      [h('b'), vec(0, 1, 0)],
    ]);
    const file = join(cache.directory, 'vectors.bin');
    const record = statSync(file).size / 2;
    truncateSync(file, record + 7); // the second record half-written
    const reopened = openVectorCache(dir, PROFILE);
    expect(reopened.loaded).toBe(1);
    expect(statSync(file).size).toBe(record);
    reopened.append([[h('c'), vec(0, 0, 1)]]);
    const last = openVectorCache(dir, PROFILE);
    expect(last.loaded).toBe(2);
    expect(last.get(h('c'))).toEqual(vec(0, 0, 1));
  });

  it('stops at a record whose checksum fails (garbage after a crash) and keeps the records before it', () => {
    const dir = join(root, 'garbage');
    const cache = openVectorCache(dir, PROFILE);
    cache.append([[h('a'), vec(1, 0, 0)]]);
    const file = join(cache.directory, 'vectors.bin');
    appendFileSync(file, Buffer.alloc(statSync(file).size, 0));
    const reopened = openVectorCache(dir, PROFILE);
    expect(reopened.loaded).toBe(1);
    expect(reopened.get(h('a'))).toEqual(vec(1, 0, 0));
  });

  it('refuses a directory whose profile file names another profile, and bad arguments', () => {
    const dir = join(root, 'clash');
    const cache = openVectorCache(dir, PROFILE);
    writeFileSync(
      join(cache.directory, 'profile.json'),
      JSON.stringify({ format: 1, id: 'other', dimensions: 3 }),
    );
    expect(() => openVectorCache(dir, PROFILE)).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_ARGUMENTS' }),
    );
    expect(() => openVectorCache(dir, { id: '', dimensions: 3 })).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_ARGUMENTS' }),
    );
    const ok = openVectorCache(join(root, 'args'), PROFILE);
    expect(() => ok.append([[h('a'), vec(1, 2)]])).toThrow(
      expect.objectContaining({ code: 'ENGRAM_EVAL_INVALID_ARGUMENTS' }),
    );
  });
});

describe('createVectorSource', () => {
  it('embeds each distinct content hash once, and a second source on the same cache embeds nothing', async () => {
    const dir = join(root, 'source');
    const texts = ['Deploy at noon', 'deploy   at NOON', 'Rollback plan', 'Deploy at noon'];
    const embedder = counting();
    const first = createVectorSource(embedder, openVectorCache(dir, embedder.profile));
    const a = await first.vectors(texts);
    // The first two differ only in case and spacing: one content hash, one vector.
    expect(embedder.texts).toEqual(['Deploy at noon', 'Rollback plan']);
    expect(a[1]).toBe(a[0]);
    await first.port.embed(['Rollback plan']);
    expect(first.counts()).toEqual({ embedded: 2, fromCache: 0 });

    const second = counting();
    const source = createVectorSource(second, openVectorCache(dir, second.profile));
    const b = await source.vectors(texts);
    expect(second.texts).toEqual([]);
    expect(source.counts()).toEqual({ embedded: 0, fromCache: 2 });
    expect(b).toEqual(a);
  });

  it('refuses an embedder that answers with the wrong number of vectors or dimensions', async () => {
    const short: EvalEmbedder = { profile: { id: 'x', dimensions: 2 }, embed: async () => [] };
    await expect(createVectorSource(short).vectors(['a'])).rejects.toMatchObject({
      code: 'ENGRAM_EVAL_RETRIEVAL_FAILED',
    });
    const wide: EvalEmbedder = {
      profile: { id: 'x', dimensions: 2 },
      embed: async (t) => t.map(() => vec(1, 2, 3)),
    };
    await expect(createVectorSource(wide).vectors(['a'])).rejects.toMatchObject({
      code: 'ENGRAM_EVAL_RETRIEVAL_FAILED',
    });
  });
});
