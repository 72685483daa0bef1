import { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUseEmbedder } from './index.js';

// Proof that loading and running the model needs no network: every fetch and every socket connection of
// this process fails and is counted, from before the model is loaded until the end.
const originalFetch = globalThis.fetch;
const originalConnect = Socket.prototype.connect;
let fetchCalls = 0;
let connectCalls = 0;

beforeAll(() => {
  globalThis.fetch = (() => {
    fetchCalls += 1;
    return Promise.reject(new Error('network is not allowed in this test'));
  }) as typeof fetch;
  Socket.prototype.connect = function connect(this: Socket): Socket {
    connectCalls += 1;
    throw new Error('network is not allowed in this test');
  } as typeof Socket.prototype.connect;
});

afterAll(() => {
  globalThis.fetch = originalFetch;
  Socket.prototype.connect = originalConnect;
});

describe('offline', () => {
  it('loads the npm-shipped model and embeds with no fetch and no socket', async () => {
    const embedder = createUseEmbedder();
    expect(embedder.loaded).toBe(false);
    const vectors = await embedder.embed(['package manager', 'pnpm installs dependencies']);
    expect(embedder.loaded).toBe(true);
    expect(vectors.map((v) => v.length)).toEqual([512, 512]);
    expect(fetchCalls).toBe(0);
    expect(connectCalls).toBe(0);
  });
});
