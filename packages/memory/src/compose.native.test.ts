/**
 * The composition root over a real SQLite file, configured from the environment as the CLI opens its databases:
 * every producer reports to the one collector, and every file keeps the embedder it was made with.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { healthDtoSchema } from '@engram/diagnostics';
import { DETERMINISTIC_PROFILE } from '@engram/embedder-deterministic';
import { createEventIngestor } from '@engram/maintenance';
import { createSqliteMemoryStore } from '@engram/store-sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbedderChoice } from './embedder-choice.js';
import { type EngineConfig, openEngine } from './engine.js';
import { isEngramMemoryError } from './errors.js';
import { SAMPLE_FACTS, SAMPLE_SESSIONS } from './sample-data.fixture.js';

/** What the CLI opens a database with: its path, the environment (none here unless given), an embedder asked for. */
interface EngramConfig {
  readonly dbPath: string;
  readonly env?: EngineConfig['env'];
  readonly embedder?: EmbedderChoice;
}

/** The engine as the CLI opens it: configured from the environment (an empty one unless given). */
function openEngram(config: EngramConfig) {
  return openEngine({
    path: config.dbPath,
    env: config.env ?? {},
    ...(config.embedder === undefined ? {} : { embedder: config.embedder }),
  });
}

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-composition-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('openEngine with env', () => {
  it('wires store, embedder, retriever, drain, ingestion, extraction and maintenance into one collector', async () => {
    // The deterministic embedder, the test instrument, asked for explicitly.
    const engram = await openEngram({
      dbPath: join(dir, 'nested', 'dir', 'wired.db'),
      embedder: 'deterministic',
    });
    try {
      expect(engram.embedderLabel).toBe('deterministic-lexicon-v1 (128 d)');
      expect(engram.modelLabel).toBeNull();
      const session = SAMPLE_SESSIONS[0];
      if (session === undefined) throw new Error('the sample has sessions');
      const ingested = await engram.ingestor.appendAndIngest(
        session.agentId,
        session.sessionId,
        session.events,
      );
      expect(ingested.ingest.memories).toBe(session.events.length);

      const progress: [number, number][] = [];
      const drained = await engram.drain({ onProgress: (done, total) => progress.push([done, total]) });
      expect(drained).toMatchObject({
        rows: session.events.length,
        ready: session.events.length,
        backlog: 0,
        outcome: 'completed',
      });
      expect(progress[0]).toEqual([0, session.events.length]);
      expect(progress.at(-1)).toEqual([session.events.length, session.events.length]);

      const response = await engram.retriever.search(session.agentId, 'downtime', { limit: 3 });
      expect(response.execution.arms).toEqual(['lexical', 'vector']);
      expect(response.results[0]?.record.content).toContain('outage');

      const events = await engram.store.readEvents(
        session.agentId,
        session.sessionId,
        1,
        session.events.length,
      );
      const extraction = await engram.extract(events);
      expect(extraction?.report.outcome).toBe('skipped');

      const pass = await engram.maintain(session.agentId);
      expect(pass.report?.heavy.outcome).toBe('skipped');

      const dto = await engram.health(session.agentId);
      expect(healthDtoSchema.safeParse(dto).success).toBe(true);
      expect(dto.store.totals.events).toBe(session.events.length);
      const agent = dto.runtime.agent;
      expect(agent.retrieval.search.operations).toBe(1);
      expect(agent.embedding.rows).toBe(session.events.length);
      expect(agent.extraction.outcomes.skipped).toBe(1);
      expect(agent.maintenance.passes).toBe(1);
      expect(dto.runtime.process.embeddingBacklog.total).toBe(0);
      expect(dto.runtime.process.store.statements.write).toBeGreaterThan(0);
      expect(await engram.listAgents()).toEqual([session.agentId]);
    } finally {
      await engram.close();
      await engram.close();
    }
  });

  it('drains every agent in one pass, each under its own id, and reports the backlog even when it is empty', async () => {
    const path = join(dir, 'two-agents.db');
    const engram = await openEngram({ dbPath: path, embedder: 'deterministic' });
    const expected = new Map<string, number>();
    try {
      for (const session of SAMPLE_SESSIONS) {
        const r = await engram.ingestor.appendAndIngest(session.agentId, session.sessionId, session.events);
        expected.set(session.agentId, (expected.get(session.agentId) ?? 0) + r.ingest.memories);
      }
      expect(expected.size).toBe(2);
      const total = [...expected.values()].reduce((a, b) => a + b, 0);
      const progress: [number, number][] = [];
      const drained = await engram.drain({ onProgress: (done, all) => progress.push([done, all]) });
      expect(drained).toMatchObject({ rows: total, ready: total, backlog: 0, outcome: 'completed' });
      expect(progress[0]).toEqual([0, total]);
      expect(progress.at(-1)).toEqual([total, total]);
      expect(progress.every(([done, all]) => done <= all)).toBe(true);
      for (const [agentId, rows] of expected) {
        const dto = await engram.health(agentId);
        expect(dto.runtime.agent.embedding.rows).toBe(rows);
        expect(dto.runtime.agent.embedding.transitions.ready).toBe(rows);
      }
    } finally {
      await engram.close();
    }

    // A new process over the drained file: nothing pending, yet the gauge reads 0 rather than "not sampled".
    const again = await openEngram({ dbPath: path });
    try {
      const idle = await again.drain();
      expect(idle).toMatchObject({ rows: 0, batches: 0, backlog: 0, outcome: 'completed' });
      const dto = await again.health(null);
      expect(dto.runtime.process.embeddingBacklog.total).toBe(0);
      expect(dto.runtime.process.embeddingBacklog.activeAgents).toBe(0);
    } finally {
      await again.close();
    }
  });

  it('refuses a database indexed with an embedder it does not have, saying which one the file needs', async () => {
    const path = join(dir, 'other-embedder.db');
    const store = createSqliteMemoryStore({ path, embedding: { id: 'someone-else-v1', dimensions: 8 } });
    await store.close();
    const failure = await openEngram({ dbPath: path }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isEngramMemoryError(failure)).toBe(true);
    expect((failure as { code?: unknown }).code).toBe('ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE');
    expect((failure as Error).message).toBe(
      'the database was made with the embedder someone-else-v1 (8 d), which is not configured; it needs an OpenAI-compatible embedder with that profile (ENGRAM_OPENAI_EMBEDDING_MODEL and ENGRAM_OPENAI_EMBEDDING_DIMENSIONS=8) (or use another --db)',
    );
  });

  it('names the OpenAI-compatible model a file needs when the environment does not configure it, and opens it when it does', async () => {
    const path = join(dir, 'openai.db');
    const store = createSqliteMemoryStore({
      path,
      embedding: { id: 'openai-compatible:text-embedding-3-small', dimensions: 1536 },
    });
    await store.close();
    const failure = await openEngram({ dbPath: path }).then(
      () => null,
      (error: unknown) => error,
    );
    expect((failure as { code?: unknown }).code).toBe('ENGRAM_MEMORY_EMBEDDER_UNAVAILABLE');
    expect((failure as Error).message).toContain(
      'it needs ENGRAM_OPENAI_EMBEDDING_MODEL=text-embedding-3-small with ENGRAM_OPENAI_EMBEDDING_DIMENSIONS=1536',
    );
    const configured = await openEngram({
      dbPath: path,
      env: {
        ENGRAM_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
        ENGRAM_OPENAI_EMBEDDING_MODEL: 'text-embedding-3-small',
        ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: '1536',
      },
    });
    try {
      expect(configured.embedderChoice).toBe('openai');
      expect(configured.embedderLabel).toBe('openai-compatible:text-embedding-3-small (1536 d)');
    } finally {
      await configured.close();
    }
  });

  it('rejects an invalid provider environment naming the variable, never its value', async () => {
    const failure = await openEngram({
      dbPath: join(dir, 'provider.db'),
      env: {
        ENGRAM_OPENAI_CHAT_MODEL: 'm',
        ENGRAM_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
        ENGRAM_OPENAI_TIMEOUT_MS: 'soon-ish',
      },
    }).then(
      () => null,
      (error: unknown) => error,
    );
    expect((failure as { code?: unknown }).code).toBe('ENGRAM_PROVIDER_CONFIG');
    expect((failure as Error).message).toContain('ENGRAM_OPENAI_TIMEOUT_MS');
    expect((failure as Error).message).not.toContain('soon-ish');
  });
});

describe('the embedder of a file', () => {
  it('keeps a file made by the previous default (deterministic): it opens, drains and searches by vector with it', async () => {
    // What the CLI did before USE-lite became the default: the deterministic profile, rows left pending.
    const path = join(dir, 'previous-default.db');
    const old = createSqliteMemoryStore({ path, embedding: DETERMINISTIC_PROFILE });
    const session = SAMPLE_SESSIONS[0];
    if (session === undefined) throw new Error('the sample has sessions');
    const written = await createEventIngestor({ store: old }).appendAndIngest(
      session.agentId,
      session.sessionId,
      session.events,
    );
    await old.close();

    const engram = await openEngram({ dbPath: path });
    try {
      expect(engram.embedderChoice).toBe('deterministic');
      expect(engram.embedderLabel).toBe('deterministic-lexicon-v1 (128 d)');
      expect(engram.store.info.fingerprint).toBe('deterministic-lexicon-v1:128');
      const drained = await engram.drain();
      expect(drained).toMatchObject({
        rows: written.ingest.memories,
        ready: written.ingest.memories,
        error: 0,
      });
      const response = await engram.retriever.search(session.agentId, 'downtime', { limit: 3 });
      expect(response.execution.arms).toEqual(['lexical', 'vector']);
      expect(response.execution.degradations).toEqual([]);
      expect(response.results[0]?.record.content).toContain('outage');
      expect(response.results[0]?.explanation.arms).toEqual(['vector']);
    } finally {
      await engram.close();
    }
  });

  it('gives a new file the offline USE-lite embedder, which finds a paraphrase by meaning, and keeps it on reopen', async () => {
    const path = join(dir, 'new-default.db');
    const engram = await openEngram({ dbPath: path });
    try {
      expect(engram.embedderChoice).toBe('use');
      expect(engram.embedderLabel).toBe('use-lite-512-v1 (512 d)');
      expect(engram.store.info.fingerprint).toBe('use-lite-512-v1:512');
      for (const fact of SAMPLE_FACTS.filter((f) => f.agentId === 'coder')) {
        const remembered = await engram.tools.execute(
          'memory_remember',
          { content: fact.content },
          {
            agentId: fact.agentId,
          },
        );
        expect(remembered.ok).toBe(true);
      }
      const drained = await engram.drain();
      expect(drained).toMatchObject({ error: 0, ftsOnly: 0, backlog: 0 });
      const facts = SAMPLE_FACTS.filter((f) => f.agentId === 'coder').length;
      const health = await engram.health('coder');
      expect(health.store.totals.facts).toBe(facts);
      expect(health.store.byEmbeddingState.ready).toBe(facts);
      // No word in common with the fact it finds: the vector arm alone.
      const response = await engram.retriever.search('coder', 'which tool installs our dependencies', {
        limit: 1,
      });
      expect(response.execution.degradations).toEqual([]);
      expect(response.results[0]?.record.content).toContain('pnpm');
      expect(response.results[0]?.explanation.arms).toContain('vector');
    } finally {
      await engram.close();
    }
    const again = await openEngram({ dbPath: path, env: { ENGRAM_EMBEDDER: '' } });
    try {
      expect(again.embedderChoice).toBe('use');
    } finally {
      await again.close();
    }
  });

  it('searches Chinese lexically under USE-lite (English-only), without vector noise', async () => {
    const engram = await openEngram({ dbPath: join(dir, 'cjk.db') });
    try {
      for (const fact of SAMPLE_FACTS.filter((f) => f.agentId === 'assistant')) {
        await engram.tools.execute('memory_remember', { content: fact.content }, { agentId: fact.agentId });
      }
      await engram.drain();
      const response = await engram.retriever.search('assistant', '靠窗', { limit: 3 });
      expect(response.results.map((r) => r.record.content)).toEqual(['用户坐飞机时喜欢靠窗的座位。']);
      expect(response.results[0]?.explanation.arms).toEqual(['lexical']);
      // Different Chinese facts are not taken for near duplicates of each other.
      expect((await engram.health('assistant')).store.totals.facts).toBe(
        SAMPLE_FACTS.filter((f) => f.agentId === 'assistant').length,
      );
    } finally {
      await engram.close();
    }
  });

  it('takes the embedder asked for by ENGRAM_EMBEDDER or the caller for a new file, and refuses a file made with another', async () => {
    const path = join(dir, 'asked.db');
    const asked = await openEngram({ dbPath: path, env: { ENGRAM_EMBEDDER: 'Deterministic' } });
    try {
      expect(asked.embedderChoice).toBe('deterministic');
      expect(asked.store.info.fingerprint).toBe('deterministic-lexicon-v1:128');
    } finally {
      await asked.close();
    }
    const refuse = (config: Parameters<typeof openEngram>[0]): Promise<unknown> =>
      openEngram(config).then(
        async (engram) => {
          await engram.close();
          return null;
        },
        (error: unknown) => error,
      );
    const mismatch = await refuse({ dbPath: path, env: { ENGRAM_EMBEDDER: 'use' } });
    expect((mismatch as { code?: unknown }).code).toBe('ENGRAM_MEMORY_EMBEDDER_MISMATCH');
    expect((mismatch as Error).message).toBe(
      'the database was made with the embedder deterministic-lexicon-v1 (128 d), not ENGRAM_EMBEDDER=use; it needs ENGRAM_EMBEDDER=deterministic (or use another --db)',
    );
    // The caller's choice wins over the variable.
    const byCaller = await refuse({
      dbPath: path,
      embedder: 'use',
      env: { ENGRAM_EMBEDDER: 'deterministic' },
    });
    expect((byCaller as { code?: unknown }).code).toBe('ENGRAM_MEMORY_EMBEDDER_MISMATCH');
    const invalid = await refuse({ dbPath: join(dir, 'invalid.db'), env: { ENGRAM_EMBEDDER: 'bert' } });
    expect((invalid as { code?: unknown }).code).toBe('ENGRAM_MEMORY_INVALID_CONFIG');
    expect((invalid as Error).message).toBe('ENGRAM_EMBEDDER must be one of use, deterministic, openai');
    // A configured OpenAI-compatible embedder does not take over a file made with another one.
    const withProvider = await openEngram({
      dbPath: path,
      env: {
        ENGRAM_OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
        ENGRAM_OPENAI_EMBEDDING_MODEL: 'text-embedding-3-small',
        ENGRAM_OPENAI_EMBEDDING_DIMENSIONS: '1536',
      },
    });
    try {
      expect(withProvider.embedderChoice).toBe('deterministic');
    } finally {
      await withProvider.close();
    }
  });
});
