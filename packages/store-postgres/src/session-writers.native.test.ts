// Several writer processes race on one session through one server (the test's PostgreSQL): no write lost,
// none duplicated. (Several workers running the maintenance drain on one backlog are tested in
// @engram/maintenance, which runs that drain.)
import { fileURLToPath } from 'node:url';
import { runNode } from '@engram/test-support';
import { expect, it } from 'vitest';
import { freshPostgresStore, testPgUrl } from './testing/fresh.js';

const INGESTER = fileURLToPath(new URL('../dist/testing/ingest-worker.js', import.meta.url));

it('three writer processes race on one session: every event and every ingested memory exactly once', async () => {
  const store = await freshPostgresStore({ embedding: null });
  try {
    const url = testPgUrl();
    const runs = await Promise.all([0, 1, 2].map(() => runNode(INGESTER, [url, '15'])));
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0]);
    const counts = runs.map(
      (r) => /appended (\d+) ingested (\d+)/.exec(r.stdout)?.slice(1).map(Number) ?? [],
    );
    expect(counts.reduce((s, c) => s + (c[0] ?? 0), 0)).toBe(15);
    expect(counts.reduce((s, c) => s + (c[1] ?? 0), 0)).toBe(15);
    expect(await store.getCursor('shared', 's1')).toBe(15);
    expect((await store.readEvents('shared', 's1', 1, 100)).map((e) => e.seq)).toEqual(
      Array.from({ length: 15 }, (_, i) => i + 1),
    );
    const memories = await store.listMemories('shared', { limit: 100 });
    const summaries = memories.map((m) => m.content).sort();
    expect(summaries).toEqual(Array.from({ length: 15 }, (_, i) => `summary of event ${i + 1}`).sort());
  } finally {
    await store.close();
  }
});
