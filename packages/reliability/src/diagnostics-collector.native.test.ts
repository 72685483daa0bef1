// The collector wired into the real producers, as a composition root wires it: a real SQLite store (FTS5 +
// sqlite-vec), the real embedding drain and the real retriever with the deterministic embedder. Proves the
// ports line up end to end and that real content never reaches a snapshot.

import {
  createDiagnosticsCollector,
  createHealthDto,
  diagnosticsSnapshotSchema,
  healthDtoSchema,
} from '@engram/diagnostics';
import { createDeterministicEmbedder, DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { createEmbeddingDrain } from '@engram/maintenance';
import { createRetriever } from '@engram/retrieval';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';

const CANARY = 'canarynative';

const closers: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('collector wired into the real store, drain and retriever', () => {
  it('records every call and batch, counts statements, and keeps real content out of the snapshot', async () => {
    const collector = createDiagnosticsCollector();
    const store = createSqliteMemoryStore({
      path: ':memory:',
      embedding: { id: DETERMINISTIC_PROFILE.id, dimensions: DETERMINISTIC_PROFILE.dimensions },
      observer: collector.storeObserver,
    });
    closers.push(() => store.close());
    const embedder = createDeterministicEmbedder();

    for (let i = 0; i < 50; i += 1) {
      await store.insertMemory({
        agentId: 'agent-a',
        kind: 'fact',
        content: `${CANARY} deploy note ${i}: the release pipeline uses port ${8000 + i}`,
        tags: [`file:src/${CANARY}-${i}.ts`],
      });
    }
    for (let i = 0; i < 10; i += 1) {
      await store.insertMemory({
        agentId: 'agent-b',
        kind: 'fact',
        content: `${CANARY} backup schedule ${i}`,
      });
    }

    const drain = createEmbeddingDrain({
      store,
      embedder,
      observer: collector.maintenanceObserver,
      batchSize: 16,
    });
    const drainedA = await drain.run({ agentId: 'agent-a' });
    const drainedB = await drain.run({ agentId: 'agent-b' });
    expect(drainedA.outcome).toBe('completed');
    expect(drainedB.outcome).toBe('completed');

    const retriever = createRetriever({ store, embedder, observer: collector.retrievalObserver });
    for (let i = 0; i < 5; i += 1)
      await retriever.search('agent-a', `${CANARY} release pipeline port ${8000 + i}`);
    await retriever.recall('agent-a', `${CANARY} deploy`);
    await retriever.search('agent-a', '   ');
    await retriever.search('agent-b', `${CANARY} backup`);

    // Failures whose errors carry the canary: a throwing embedder (FTS-only answer) and a closed store.
    const failing = createRetriever({
      store,
      embedder: {
        profile: embedder.profile,
        embed: () => Promise.reject(new Error(`${CANARY} provider said no`)),
      },
      observer: collector.retrievalObserver,
    });
    const degraded = await failing.decision('agent-b', `${CANARY} backup`);
    expect(degraded.execution.degradations).toEqual(['embeddingError']);
    const closedStore = createSqliteMemoryStore({ path: ':memory:', observer: collector.storeObserver });
    closedStore.close();
    const broken = await createRetriever({
      store: closedStore,
      observer: collector.retrievalObserver,
    }).decision('agent-b', `${CANARY} backup`);
    expect(broken.execution.outcome).toBe('failed');
    const b = collector.snapshot('agent-b').agent.retrieval.decision;
    expect(b.outcomes).toMatchObject({ completed: 1, failed: 1 });
    expect(b.degradations).toMatchObject({ embeddingError: 1, storeUnusable: 1 });

    const a = diagnosticsSnapshotSchema.parse(collector.snapshot('agent-a'));
    const search = a.agent.retrieval.search;
    expect(search.operations).toBe(6);
    expect(search.outcomes.completed).toBe(5);
    expect(search.outcomes.emptyQuery).toBe(1);
    expect(search.latency.total.count).toBe(6);
    expect(search.latency.total.p95).not.toBeNull();
    expect(search.arms.lexical).toBe(5);
    expect(search.arms.vector).toBe(5);
    expect(search.candidates.selected.max).toBeGreaterThan(0);
    expect(a.agent.retrieval.recall.operations).toBe(1);

    // ceil(50 / 16) = 4 batches for agent-a, every row moved to `ready`.
    expect(a.agent.embedding.batches).toBe(4);
    expect(a.agent.embedding.rows).toBe(50);
    expect(a.agent.embedding.transitions.ready).toBe(50);
    expect(a.agent.embedding.batchSize.max).toBe(16);

    const statements = a.process.store.statements;
    expect(statements.write).toBeGreaterThanOrEqual(60);
    expect(statements.fts).toBeGreaterThan(0);
    expect(statements.vector).toBeGreaterThan(0);
    expect(a.process.embeddingBacklog.total).toBe(0);
    expect(a.process.collector.observerFailures).toBe(0);
    expect(a.process.collector.recordsRejected).toBe(0);
    expect(collector.listAgents()).toEqual(['agent-b', 'agent-a']);

    const health = await store.health();
    if (!health.ok) throw new Error(`store health failed: ${health.code}`);
    const dto = healthDtoSchema.parse(
      JSON.parse(JSON.stringify(createHealthDto(health.health, collector.snapshot()))),
    );
    expect(dto.store.byKind.fact).toBe(60);
    expect(dto.store.byEmbeddingState.ready).toBe(60);
    expect(dto.runtime.agent.retrieval.search.operations).toBe(7);
    expect(dto.runtime.agent.retrieval.decision.operations).toBe(2);

    for (const json of [JSON.stringify(collector.snapshotAll()), JSON.stringify(dto)]) {
      expect(json.toLowerCase()).not.toContain(CANARY);
      expect(json).not.toMatch(/deploy|release|backup|src\//);
    }
  });
});
