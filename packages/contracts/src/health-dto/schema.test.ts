import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { createEmptySnapshot, createHealthDto } from './empty.js';
import {
  type agentDiagnosticsSchema,
  diagnosticsSnapshotSchema,
  healthDtoSchema,
  type processDiagnosticsSchema,
} from './schema.js';
import type { AgentDiagnostics, HealthDto, ProcessDiagnostics, StoreHealthDto } from './types.js';

const storeHealth: StoreHealthDto = {
  totals: { memories: 10, events: 6, facts: 3, skills: 1 },
  byKind: { event: 6, fact: 3, semantic: 0, episodic: 0, reflection: 0, persona: 0, skill: 1 },
  byLifecycle: { active: 9, archived: 1, superseded: 0, conflicted: 0 },
  byEmbeddingState: { pending: 2, ready: 8, error: 0, ftsOnly: 0 },
};

describe('the DTO types and the schemas agree', () => {
  it('infers exactly the declared types from the schemas', () => {
    expectTypeOf<z.infer<typeof agentDiagnosticsSchema>>().toEqualTypeOf<AgentDiagnostics>();
    expectTypeOf<z.infer<typeof processDiagnosticsSchema>>().toEqualTypeOf<ProcessDiagnostics>();
    expectTypeOf<z.infer<typeof healthDtoSchema>>().toEqualTypeOf<HealthDto>();
    expect(healthDtoSchema.safeParse(createHealthDto(storeHealth, createEmptySnapshot())).success).toBe(true);
  });
});

describe('diagnosticsSnapshotSchema', () => {
  it('accepts an empty snapshot, with null percentiles and null gauges', () => {
    const empty = diagnosticsSnapshotSchema.parse(createEmptySnapshot('agent-1', { generatedAt: 42 }));
    expect(empty.schemaVersion).toBe(1);
    expect(empty.generatedAt).toBe(42);
    expect(empty.agentId).toBe('agent-1');
    expect(empty.agent.retrieval.injection.latency.total).toEqual({
      count: 0,
      total: 0,
      p50: null,
      p95: null,
      max: null,
    });
    expect(empty.process.extractionQueue.depth).toBeNull();
    expect(empty.process.collector.maxAgents).toBe(64);
    expect(createEmptySnapshot().agentId).toBeNull();
  });

  it('rejects an unknown key, a missing enum key, a string where a number belongs and a negative count', () => {
    const good = createEmptySnapshot('a');
    const extraKey = structuredClone(good) as unknown as { agent: Record<string, unknown> };
    extraKey.agent.query = 'x';
    const missingEnumKey = structuredClone(good) as unknown as {
      agent: { retrieval: { search: { outcomes: Record<string, unknown> } } };
    };
    delete missingEnumKey.agent.retrieval.search.outcomes.failed;
    const unknownEnumKey = structuredClone(good) as unknown as {
      agent: { retrieval: Record<string, unknown> };
    };
    unknownEnumKey.agent.retrieval.other = unknownEnumKey.agent.retrieval.search;
    const text = structuredClone(good) as unknown as {
      process: { store: { statements: Record<string, unknown> } };
    };
    text.process.store.statements.read = 'SELECT 1';
    const negative = structuredClone(good) as unknown as { process: { collector: Record<string, unknown> } };
    negative.process.collector.recordsRejected = -1;
    const infinite = structuredClone(good) as unknown as { generatedAt: number };
    infinite.generatedAt = Number.POSITIVE_INFINITY;

    expect(diagnosticsSnapshotSchema.safeParse(good).success).toBe(true);
    for (const bad of [extraKey, missingEnumKey, unknownEnumKey, text, negative, infinite]) {
      expect(diagnosticsSnapshotSchema.safeParse(bad).success).toBe(false);
    }
  });
});

describe('the snapshot agent id', () => {
  it('follows the agent-id rule: 256 characters pass; 257, a NUL or a lone surrogate do not', () => {
    const parse = (agentId: string) =>
      diagnosticsSnapshotSchema.safeParse(createEmptySnapshot(agentId)).success;
    expect(parse('a'.repeat(256))).toBe(true);
    expect(parse('a'.repeat(257))).toBe(false);
    expect(parse('agent\u0000')).toBe(false);
    expect(parse('agent\uDC00')).toBe(false);
  });
});

describe('healthDtoSchema', () => {
  it('accepts { store, runtime } built by createHealthDto and copies only known keys', () => {
    const withExtra = { ...storeHealth, sql: 'SELECT secret', byKind: { ...storeHealth.byKind, bogus: 1 } };
    const dto = createHealthDto(withExtra as StoreHealthDto, createEmptySnapshot());
    const parsed = healthDtoSchema.parse(JSON.parse(JSON.stringify(dto)));
    expect(parsed.store.totals).toEqual(storeHealth.totals);
    expect(parsed.store.byKind).toEqual(storeHealth.byKind);
    expect(parsed.store.byEmbeddingState.pending).toBe(2);
    expect(parsed.runtime.schemaVersion).toBe(1);
  });

  it('carries a failed check that leaves writes allowed with its counts, and only known keys of it', () => {
    const integrity = { state: 'failed', checkedAt: 5, badRows: 3, damagedVectorChunks: 1, sql: 'x' };
    const dto = createHealthDto({ ...storeHealth, integrity } as StoreHealthDto, createEmptySnapshot());
    const parsed = healthDtoSchema.parse(JSON.parse(JSON.stringify(dto)));
    expect(parsed.store.integrity).toEqual({
      state: 'failed',
      checkedAt: 5,
      badRows: 3,
      damagedVectorChunks: 1,
    });
    const refused = createHealthDto(
      { ...storeHealth, integrity: { state: 'failed', checkedAt: 5 } } as StoreHealthDto,
      createEmptySnapshot(),
    );
    expect(refused.store.integrity).toEqual({ state: 'failed', checkedAt: 5 });
  });

  it('rejects a store part missing an enum key or carrying an extra one', () => {
    const dto = createHealthDto(storeHealth, createEmptySnapshot());
    const missing = structuredClone(dto) as unknown as { store: { byLifecycle: Record<string, unknown> } };
    delete missing.store.byLifecycle.conflicted;
    const extra = structuredClone(dto) as unknown as { store: Record<string, unknown> };
    extra.store.path = '/home/user/.engram/memory.db';
    expect(healthDtoSchema.safeParse(dto).success).toBe(true);
    expect(healthDtoSchema.safeParse(missing).success).toBe(false);
    expect(healthDtoSchema.safeParse(extra).success).toBe(false);
  });
});

describe('the processes part of the health DTO', () => {
  const process = (id: string, self: boolean) => ({
    id,
    self,
    startedAt: 1,
    beatAt: 2,
    runtime: createEmptySnapshot(undefined, { generatedAt: 3 }),
  });

  it('accepts a list of whole-process snapshots keyed by random ids; a DTO without it stays valid', () => {
    const processes = { list: [process('a'.repeat(32), true), process('b'.repeat(32), false)], skipped: 1 };
    const dto = createHealthDto(storeHealth, createEmptySnapshot(), processes);
    expect(healthDtoSchema.parse(JSON.parse(JSON.stringify(dto))).processes).toEqual(processes);
    expect(healthDtoSchema.safeParse(createHealthDto(storeHealth, createEmptySnapshot())).success).toBe(true);
  });

  it('refuses a pid or host name for an id, an agent-scoped snapshot and extra keys', () => {
    const bad = [
      { list: [process('4242', false)], skipped: 0 },
      { list: [process('build-host.local', false)], skipped: 0 },
      { list: [{ ...process('a'.repeat(32), false), runtime: createEmptySnapshot('coder') }], skipped: 0 },
      { list: [{ ...process('a'.repeat(32), false), path: '/home/user/memory.db' }], skipped: 0 },
      { list: [], skipped: 0, query: 'x' },
    ];
    for (const processes of bad) {
      const dto = { ...createHealthDto(storeHealth, createEmptySnapshot()), processes };
      expect(healthDtoSchema.safeParse(dto).success).toBe(false);
    }
  });
});
