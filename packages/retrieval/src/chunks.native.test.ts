import { createDeterministicEmbedder } from '@engram/embedder-deterministic';
import type { PostgresMemoryStore } from '@engram/store-postgres';
import { embedAllPending } from '@engram/test-support';
import { describe, expect, it } from 'vitest';
import { buildInjection } from './injection.js';
import { openPgStore } from './pg-store.fixture.js';
import { createRetriever } from './retriever.js';

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

describe('long memories through retrieval', () => {
  it('the explanation names the matching chunk; its offsets slice the content to the matched window', async () => {
    const { store, content, phrase } = await seeded();
    const retriever = createRetriever({ store, embedder });
    const response = await retriever.search('a', 'greenhouse heaters invoice paid twice', { limit: 3 });
    const top = response.results[0];
    expect(top?.record.id).toBe('summary');
    const chunk = top?.explanation.chunk;
    expect(chunk).toBeDefined();
    const window = content.slice(chunk?.start, chunk?.end);
    expect(window).toContain(phrase);
    expect(window.length).toBeLessThanOrEqual(1000);
    expect(chunk?.index).toBeGreaterThan(0);
    // A memory within the budget names no chunk: its whole content is the match.
    const plants = await retriever.search('a', 'office plants watered', { limit: 1 });
    expect(plants.results[0]?.record.content).toBe('The office plants are watered on Mondays');
    expect(plants.results[0]?.explanation).not.toHaveProperty('chunk');
  });

  it('context injection recalls the matching window of a long memory, not its beginning', async () => {
    const { store } = await seeded();
    const injection = await buildInjection({
      store,
      retriever: createRetriever({ store, embedder }),
      agentId: 'a',
      query: 'greenhouse heaters invoice paid twice',
      budgetTokens: 2000,
    });
    expect(injection.recall).toContain('greenhouse heaters');
    // The recall line's label names the window's pointer: `[…, memory_get memory/summary#<from>-<to>]`.
    expect(injection.recall).toContain(', memory_get memory/summary#');
    expect(injection.recall).not.toContain('Week 0:');
  });
});
