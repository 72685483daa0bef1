import type { AdmissionDecision, ProviderKind, ProviderRace } from '@engram/contracts';
import { describe, expect, it } from 'vitest';
import { EngramMaintenanceError, isEngramMaintenanceError, isLocalRejection } from './errors.js';
import { createProviderGateway, type ProviderGatewayConfig } from './gateway.js';
import type { EmbedderPort, ModelPort } from './ports.js';
import { createFakeTime, flush } from './test-support/fake-time.js';

interface Deferred {
  readonly texts: readonly string[];
  readonly signal: AbortSignal | undefined;
  resolve(value: Float32Array[]): void;
  reject(error: unknown): void;
}

/** An embedder whose every call waits until the test settles it. */
function controllableEmbedder(): EmbedderPort & { calls: Deferred[] } {
  const calls: Deferred[] = [];
  return {
    profile: { id: 'test', dimensions: 2 },
    calls,
    embed(texts, options) {
      return new Promise<Float32Array[]>((resolve, reject) => {
        calls.push({ texts, signal: options?.signal, resolve, reject });
      });
    },
  };
}

function setup(overrides: Partial<ProviderGatewayConfig> = {}) {
  const time = createFakeTime();
  const embedder = controllableEmbedder();
  const events: {
    admissions: [ProviderKind, AdmissionDecision][];
    races: [ProviderKind, ProviderRace][];
    queue: number[];
  } = {
    admissions: [],
    races: [],
    queue: [],
  };
  const gateway = createProviderGateway({
    embedder,
    observer: {
      onAdmission: (kind, d) => events.admissions.push([kind, d]),
      onRace: (kind, r) => events.races.push([kind, r]),
      onQueue: (g) => events.queue.push(g.queued),
    },
    limits: { global: 2, perKey: 1, maxQueue: 2 },
    deadlineMs: 1000,
    clock: time.clock,
    timers: time.timers,
    ...overrides,
  });
  return { time, embedder, events, gateway };
}

const vec = (): Float32Array[] => [new Float32Array([1, 0])];

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    return isEngramMaintenanceError(error) ? error.code : 'OTHER';
  }
}

describe('provider gateway: slots and queue', () => {
  it('runs one request per key and two in total, queues the rest FIFO, rejects when the queue is full', async () => {
    const { embedder, events, gateway } = setup();
    const a = gateway.embedderFor('a');
    const b = gateway.embedderFor('b');
    const c = gateway.embedderFor('c');
    expect(a).not.toBeNull();
    const p1 = a?.embed(['1']);
    const p2 = a?.embed(['2']); // same key: waits
    const p3 = b?.embed(['3']); // other key: runs
    const p4 = c?.embed(['4']); // global full: waits
    const p5 = c?.embed(['5']); // queue (2) full: rejected
    expect(embedder.calls.map((c) => c.texts[0])).toEqual(['1', '3']);
    expect(await codeOf(p5 as Promise<unknown>)).toBe('ENGRAM_MAINTENANCE_CAPACITY');
    expect(gateway.stats().queued.embedding).toBe(2);
    expect(gateway.stats().active.embedding).toBe(2);
    embedder.calls[0]?.resolve(vec());
    await expect(p1).resolves.toHaveLength(1);
    await flush();
    // Slot of key a freed: the first queued request that fits is the one of key a.
    expect(embedder.calls.map((c) => c.texts[0])).toEqual(['1', '3', '2']);
    embedder.calls[1]?.resolve(vec());
    await p3;
    await flush();
    expect(embedder.calls.map((c) => c.texts[0])).toEqual(['1', '3', '2', '4']);
    embedder.calls[2]?.resolve(vec());
    embedder.calls[3]?.resolve(vec());
    await Promise.all([p2, p4]);
    const decisions = events.admissions.map(([, d]) => d);
    expect(decisions.filter((d) => d === 'admitted')).toHaveLength(4);
    expect(decisions.filter((d) => d === 'capacityRejected')).toHaveLength(1);
    expect(Math.max(...events.queue)).toBe(2);
    expect(events.queue.at(-1)).toBe(0);
    expect(gateway.stats().failures.embedding).toBe(0);
  });
});

describe('provider gateway: rate limit', () => {
  it('rejects beyond the token bucket and refills with time', async () => {
    const { time, embedder, gateway } = setup({
      limits: { global: 10, perKey: 10 },
      rateLimit: { tokensPerInterval: 2, intervalMs: 1000 },
    });
    const e = gateway.embedderFor('k');
    const p1 = e?.embed(['1']);
    const p2 = e?.embed(['2']);
    expect(await codeOf(e?.embed(['3']) as Promise<unknown>)).toBe('ENGRAM_MAINTENANCE_RATE_LIMITED');
    time.advance(499);
    expect(await codeOf(e?.embed(['4']) as Promise<unknown>)).toBe('ENGRAM_MAINTENANCE_RATE_LIMITED');
    time.advance(1);
    const p5 = e?.embed(['5']);
    expect(embedder.calls).toHaveLength(3);
    for (const call of embedder.calls) call.resolve(vec());
    await Promise.all([p1, p2, p5]);
    const s = gateway.stats();
    expect(s.decisions.embedding).toEqual({ admitted: 3, rateLimited: 2, capacityRejected: 0 });
    expect(s.failures.embedding).toBe(0);
  });
});

describe('provider gateway: deadline, abort and late answers', () => {
  it('rejects a running request at its deadline, aborts the provider call and reports the late answer', async () => {
    const { time, embedder, events, gateway } = setup();
    const p = gateway.embedderFor('a')?.embed(['slow']) as Promise<unknown>;
    const code = codeOf(p);
    time.advance(999);
    await flush();
    expect(embedder.calls[0]?.signal?.aborted).toBe(false);
    time.advance(1);
    expect(await code).toBe('ENGRAM_MAINTENANCE_DEADLINE');
    expect(embedder.calls[0]?.signal?.aborted).toBe(true);
    expect(gateway.stats().active.embedding).toBe(0);
    embedder.calls[0]?.resolve(vec());
    await flush();
    expect(events.races.map(([, r]) => r)).toEqual(['deadline', 'lateSettled']);
    // The provider was called and did not answer in time: one provider failure.
    expect(gateway.stats().failures.embedding).toBe(1);
  });

  it('a deadline that fires while queued is not a provider failure', async () => {
    const { time, embedder, gateway } = setup({ limits: { global: 1, perKey: 1, maxQueue: 4 } });
    const first = gateway.embedderFor('a')?.embed(['1']);
    const queued = codeOf(gateway.embedderFor('b')?.embed(['2']) as Promise<unknown>);
    time.advance(1000);
    expect(await codeOf(first as Promise<unknown>)).toBe('ENGRAM_MAINTENANCE_DEADLINE');
    // Never sent to the provider: a local rejection, so a drain defers instead of burning an attempt.
    expect(await queued).toBe('ENGRAM_MAINTENANCE_QUEUE_TIMEOUT');
    expect(isLocalRejection(new EngramMaintenanceError('ENGRAM_MAINTENANCE_QUEUE_TIMEOUT', 'x'))).toBe(true);
    expect(isLocalRejection(new EngramMaintenanceError('ENGRAM_MAINTENANCE_DEADLINE', 'x'))).toBe(false);
    expect(embedder.calls).toHaveLength(1);
    expect(gateway.stats().failures.embedding).toBe(1);
    expect(gateway.stats().races.embedding.deadline).toBe(2);
  });

  it('an abort (queued or running) rejects at once and never counts as a provider failure', async () => {
    const { embedder, events, gateway } = setup({ limits: { global: 1, perKey: 1, maxQueue: 4 } });
    const running = new AbortController();
    const waiting = new AbortController();
    const p1 = codeOf(gateway.embedderFor('a')?.embed(['1'], { signal: running.signal }) as Promise<unknown>);
    const p2 = codeOf(gateway.embedderFor('b')?.embed(['2'], { signal: waiting.signal }) as Promise<unknown>);
    waiting.abort();
    expect(await p2).toBe('ENGRAM_MAINTENANCE_ABORTED');
    running.abort();
    expect(await p1).toBe('ENGRAM_MAINTENANCE_ABORTED');
    expect(embedder.calls).toHaveLength(1);
    expect(embedder.calls[0]?.signal?.aborted).toBe(true);
    embedder.calls[0]?.reject(new Error('AbortError'));
    await flush();
    expect(events.races.map(([, r]) => r)).toEqual(['aborted', 'aborted', 'lateSettled']);
    expect(gateway.stats().failures.embedding).toBe(0);
    // An already aborted signal is rejected before admission.
    const pre = new AbortController();
    pre.abort();
    expect(
      await codeOf(gateway.embedderFor('a')?.embed(['x'], { signal: pre.signal }) as Promise<unknown>),
    ).toBe('ENGRAM_MAINTENANCE_ABORTED');
    expect(gateway.stats().failures.embedding).toBe(0);
  });

  it('counts a provider rejection as a failure and wraps it without its message', async () => {
    const { embedder, gateway } = setup();
    const p = gateway.embedderFor('a')?.embed(['x']) as Promise<unknown>;
    embedder.calls[0]?.reject(new Error('secret provider text sk-123'));
    const error = await p.catch((e: unknown) => e);
    expect(isEngramMaintenanceError(error)).toBe(true);
    expect((error as Error).message).not.toContain('sk-123');
    expect((error as { code: string }).code).toBe('ENGRAM_MAINTENANCE_PROVIDER_FAILED');
    expect(gateway.stats().failures.embedding).toBe(1);
  });
});

describe('provider gateway: model port', () => {
  it('wraps the model with its own pool and passes the request through', async () => {
    const time = createFakeTime();
    const seen: string[] = [];
    const model: ModelPort = {
      id: 'm',
      async generate(req) {
        seen.push(req.jsonSchema.name);
        expect(req.signal).toBeInstanceOf(AbortSignal);
        return { text: '{"ok":true}' };
      },
    };
    const gateway = createProviderGateway({
      model,
      limits: { global: 1, perKey: 1 },
      deadlineMs: 100,
      clock: time.clock,
      timers: time.timers,
    });
    expect(gateway.embedderFor('a')).toBeNull();
    const wrapped = gateway.modelFor('agent-1');
    expect(wrapped?.id).toBe('m');
    const answer = await wrapped?.generate({ messages: [], jsonSchema: { name: 'x', schema: {} } });
    expect(answer?.text).toBe('{"ok":true}');
    expect(seen).toEqual(['x']);
    expect(gateway.stats().decisions.model.admitted).toBe(1);
    expect(gateway.stats().decisions.embedding.admitted).toBe(0);
    expect(time.pending()).toBe(0);
  });

  it('rejects invalid limits', () => {
    expect(() => createProviderGateway({ limits: { global: 0, perKey: 1 }, deadlineMs: 1 })).toThrow();
    expect(() => createProviderGateway({ limits: { global: 1, perKey: 1 }, deadlineMs: 0 })).toThrow();
  });
});
