import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import { createRetriever } from '@engram/retrieval';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { embedAllPending } from '@engram/test-support';
import { describe, expect, it } from 'vitest';
import { openPgStore } from './pg-store.fixture.js';
import { createToolHandler } from './tools.js';

const embedder = createDeterministicEmbedder();
/** A store with one long session summary (chunked) and a short fact, every chunk embedded. */
async function seeded(): Promise<{ store: PostgresMemoryStore; content: string; phrase: string }> {
  const store = await openPgStore({ embedding: embedder.profile });
  const phrase = 'the quarterly invoice for the greenhouse heaters was paid twice';
  const paragraphs = Array.from({ length: 14 }, (_, i) => {
    const body = `Week ${i}: the planning call covered staffing, the roadmap and the customer backlog in detail.`;
    const filler = ' Notes were taken and shared with everyone on the distribution list afterwards.'.repeat(
      4,
    );
    return i === 10 ? `${body} Finance noticed that ${phrase}.${filler}` : `${body}${filler}`;
  });
  const content = paragraphs.join('\n\n');
  await store.insertMemory({ id: 'summary', agentId: 'a', kind: 'episodic', content });
  await store.insertMemory({
    agentId: 'a',
    kind: 'fact',
    content: 'The office plants are watered on Mondays',
  });
  await embedAllPending(store, embedder, 16);
  return { store, content, phrase };
}

describe('long memories through the tools', () => {
  it('memory_search shows the window and memory_get returns exactly that window, bounded', async () => {
    const { store, content, phrase } = await seeded();
    const handler = createToolHandler({ store, retriever: createRetriever({ store, embedder }), embedder });
    const found = await handler.execute(
      'memory_search',
      { query: 'greenhouse heaters invoice', maxChars: 4000 },
      { agentId: 'a' },
    );
    const pointer = /\(memory_get (memory\/summary#\d+-\d+)\)/u.exec(found.text)?.[1];
    expect(pointer).toBeDefined();
    expect(found.text).toContain('greenhouse heaters');
    const [start, end] = (pointer ?? '').split('#')[1]?.split('-').map(Number) ?? [];
    const got = await handler.execute('memory_get', { pointer, maxChars: 8000 }, { agentId: 'a' });
    expect(got.ok).toBe(true);
    // The window exactly, as one quoted string (its paragraph breaks escaped).
    expect(got.text).toContain(JSON.stringify(content.slice(start, end)));
    expect(got.text).toContain(phrase);
    expect(got.text.length).toBeLessThan(content.length);
    const small = await handler.execute('memory_get', { pointer, maxChars: 300 }, { agentId: 'a' });
    expect(small.text.length).toBeLessThanOrEqual(300);
    // Another agent, or a range past the content, reads nothing.
    expect((await handler.execute('memory_get', { pointer }, { agentId: 'b' })).ok).toBe(false);
    const past = await handler.execute(
      'memory_get',
      { pointer: 'memory/summary#0-999999' },
      { agentId: 'a' },
    );
    expect(past.ok).toBe(false);
  });
});
