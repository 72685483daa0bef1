import type { ExtractionReport } from '@engram/contracts';
import { createRetriever } from '@engram/retrieval';
import type { MemoryRecord } from '@engram/store';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { createExtractionQueue } from './extraction-queue.js';
import { createExtractor } from './extractor.js';
import { createProviderGateway } from './gateway.js';
import type { ModelPort } from './ports.js';
import { createFakeTime, flush } from './test-support/fake-time.js';
import { openTempStore, type TempStore } from './test-support/native.js';
import { createScriptedModel, type ScriptedAnswer } from './test-support/scripted-model.js';

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

const SEED = {
  pnpm: 'The project uses pnpm for package management',
  port: 'The API server listens on port 8080',
  deploy: 'Deploys go out on Fridays',
  tabs: 'The team prefers tabs for indentation',
} as const;

async function setup() {
  const t = await openTempStore();
  open.push(t);
  const { store, embedder } = t;
  const seeded: Record<keyof typeof SEED, MemoryRecord> = {} as Record<keyof typeof SEED, MemoryRecord>;
  for (const [key, content] of Object.entries(SEED) as [keyof typeof SEED, string][]) {
    seeded[key] = await store.insertMemory({ agentId: 'agent', kind: 'fact', content, importance: 0.6 });
  }
  // Another agent's identical text must never be a neighbour.
  await store.insertMemory({ agentId: 'other', kind: 'fact', content: SEED.port });
  await createEmbeddingDrain({ store, embedder }).run();
  const retriever = createRetriever({ store, embedder });
  return { store, embedder, retriever, seeded };
}

const candidates = (items: { content: string; kind?: string; importance?: number }[]): string =>
  JSON.stringify({ memories: items.map((i) => ({ kind: 'fact', importance: 0.7, ...i })) });

/** A decision answer computed from the request: picks the neighbour whose text contains `needle`. */
function decideBy(
  rules: Record<string, { decision: string; needle?: string; content?: string | null }>,
): ScriptedAnswer {
  return ({ messages }) => {
    const payload = JSON.parse(messages[1]?.content ?? '{}') as {
      new: { content: string };
      existing: { id: string; content: string }[];
    };
    const rule = rules[payload.new.content];
    if (rule === undefined) return JSON.stringify({ decision: 'ADD', targetId: null, content: null });
    const target =
      rule.needle === undefined
        ? null
        : (payload.existing.find((e) => e.content.includes(rule.needle ?? ''))?.id ?? 'missing');
    return JSON.stringify({ decision: rule.decision, targetId: target, content: rule.content ?? null });
  };
}

const TURNS = [
  { role: 'user' as const, content: 'We moved the API to port 9090 and deploy on Tuesdays too.' },
  { role: 'assistant' as const, content: 'Noted.' },
];

describe('extraction over a real store and retriever', () => {
  it('applies each decision kind with compare-and-set', async () => {
    const { store, retriever, seeded } = await setup();
    const NEW = {
      noop: 'Package management in this project is done with pnpm',
      supersede: 'The API server listens on port 9090',
      update: 'Deploys go out on Fridays and Tuesdays',
      challenge: 'The team prefers spaces for indentation',
      add: 'The staging database runs PostgreSQL 16',
    };
    const model = createScriptedModel();
    model.push(
      'memory_candidates',
      candidates([
        { content: NEW.noop },
        { content: NEW.supersede },
        { content: NEW.update },
        { content: NEW.challenge },
        { content: NEW.add, kind: 'semantic' },
      ]),
    );
    const decide = decideBy({
      [NEW.noop]: { decision: 'NOOP' },
      [NEW.supersede]: { decision: 'SUPERSEDE', needle: 'port 8080' },
      [NEW.update]: {
        decision: 'UPDATE',
        needle: 'Fridays',
        content: 'Deploys go out on Fridays and Tuesdays',
      },
      [NEW.challenge]: { decision: 'CHALLENGE', needle: 'tabs' },
      [NEW.add]: { decision: 'ADD' },
    });
    model.push('memory_decision', decide, decide, decide, decide, decide);
    const reports: ExtractionReport[] = [];
    const extractor = createExtractor({
      store,
      retriever,
      model,
      observer: { onExtraction: (r) => reports.push(r) },
    });
    const result = await extractor.extract({
      agentId: 'agent',
      sessionId: 's1',
      turns: TURNS,
      seqFrom: 1,
      seqTo: 2,
    });

    expect(result.report).toMatchObject({
      outcome: 'completed',
      candidates: 5,
      invalidOutputs: 0,
      conflicts: 0,
      decisions: { ADD: 1, UPDATE: 1, SUPERSEDE: 1, NOOP: 1, CHALLENGE: 1 },
    });
    expect(reports).toEqual([result.report]);
    const byDecision = Object.fromEntries(result.applied.map((a) => [a.decision, a]));

    const port = await store.getMemory('agent', seeded.port.id);
    expect(port).toMatchObject({ lifecycle: 'superseded', supersededBy: byDecision.SUPERSEDE?.id });
    const replacement = await store.getMemory('agent', byDecision.SUPERSEDE?.id ?? '');
    expect(replacement).toMatchObject({
      content: NEW.supersede,
      lifecycle: 'active',
      sessionId: 's1',
      seqFrom: 1,
      seqTo: 2,
    });

    const deploy = await store.getMemory('agent', seeded.deploy.id);
    expect(deploy).toMatchObject({ content: NEW.update, revision: 2, lifecycle: 'active' });

    const tabs = await store.getMemory('agent', seeded.tabs.id);
    expect(tabs?.lifecycle).toBe('conflicted');
    const challenger = await store.getMemory('agent', byDecision.CHALLENGE?.id ?? '');
    expect(challenger?.tags).toEqual([`challenges:${seeded.tabs.id}`, 'source:extraction'].sort());

    const added = await store.getMemory('agent', byDecision.ADD?.id ?? '');
    expect(added).toMatchObject({ kind: 'semantic', content: NEW.add, lifecycle: 'active' });
    expect(await store.getMemory('agent', seeded.pnpm.id)).toMatchObject({
      revision: 1,
      lifecycle: 'active',
    });
    // The other agent's identical row was never touched.
    const others = await store.listMemories('other', { limit: 10 });
    expect(others.map((o) => [o.revision, o.lifecycle])).toEqual([[1, 'active']]);
  });

  it('survives a concurrent edit: re-reads and re-decides once after a real conflict', async () => {
    const { store, retriever, seeded } = await setup();
    const NEW = 'Deploys go out on Fridays and Tuesdays';
    const model = createScriptedModel();
    model.push('memory_candidates', candidates([{ content: NEW }]));
    const seenRevisions: number[] = [];
    let edited = false;
    const decide: ScriptedAnswer = async ({ messages }) => {
      const payload = JSON.parse(messages[1]?.content ?? '{}') as {
        existing: { id: string; content: string }[];
      };
      const target = payload.existing.find((e) => e.content.startsWith('Deploys'));
      const current = await store.getMemory('agent', target?.id ?? '');
      seenRevisions.push(current?.revision ?? 0);
      if (!edited) {
        edited = true;
        // Another writer edits the neighbour while the model is deciding.
        await store.updateMemory('agent', seeded.deploy.id, 1, {
          content: 'Deploys go out on Fridays after 3pm',
        });
      }
      return JSON.stringify({
        decision: 'UPDATE',
        targetId: target?.id ?? null,
        content: `${target?.content} and Tuesdays`,
      });
    };
    model.push('memory_decision', decide, decide);
    const extractor = createExtractor({ store, retriever, model });
    const result = await extractor.extract({ agentId: 'agent', turns: TURNS });
    expect(result.report).toMatchObject({ outcome: 'completed', conflicts: 1, decisions: { UPDATE: 1 } });
    expect(model.calls.map((c) => c.schemaName)).toEqual([
      'memory_candidates',
      'memory_decision',
      'memory_decision',
    ]);
    const deploy = await store.getMemory('agent', seeded.deploy.id);
    // The re-decision saw the concurrent edit and built on it; nothing was blindly overwritten.
    expect(deploy).toMatchObject({
      content: 'Deploys go out on Fridays after 3pm and Tuesdays',
      revision: 3,
    });
  });

  it('rejects invalid model output: counted, chunk failed, nothing half-applied', async () => {
    const { store, retriever } = await setup();
    const before = await store.listMemories('agent', { limit: 100 });
    const model = createScriptedModel();
    model.push(
      'memory_candidates',
      candidates([
        { content: 'The project uses pnpm workspaces for the monorepo' },
        { content: 'The API server listens on port 9090' },
      ]),
    );
    // Both candidates have a neighbour (the pnpm and the port facts), so both ask for a decision.
    // The first decision is fine; the second names an id that is not a neighbour.
    model.push(
      'memory_decision',
      JSON.stringify({ decision: 'ADD', targetId: null, content: null }),
      JSON.stringify({ decision: 'SUPERSEDE', targetId: 'not-a-neighbour', content: null }),
    );
    const extractor = createExtractor({ store, retriever, model });
    const result = await extractor.extract({ agentId: 'agent', turns: TURNS });
    expect(result.report).toMatchObject({
      outcome: 'failed',
      invalidOutputs: 1,
      decisions: { ADD: 0, SUPERSEDE: 0 },
    });
    expect(result.errorCode).toBe('ENGRAM_MAINTENANCE_INVALID_MODEL_OUTPUT');
    const after = await store.listMemories('agent', { limit: 100 });
    expect(after.map((r) => [r.id, r.revision, r.lifecycle])).toEqual(
      before.map((r) => [r.id, r.revision, r.lifecycle]),
    );

    const garbled = createScriptedModel({ memory_candidates: ['{"memories": [{"content": 42}]}'] });
    const bad = await createExtractor({ store, retriever, model: garbled }).extract({
      agentId: 'agent',
      turns: TURNS,
    });
    expect(bad.report).toMatchObject({ outcome: 'failed', invalidOutputs: 1, candidates: 0 });
  });

  it('drops exact duplicates without a model call and ADDs a candidate without neighbours directly', async () => {
    const { store, retriever } = await setup();
    // An archived event with the same text is not a distilled memory: it neither dedupes nor neighbours.
    await store.insertMemory({ agentId: 'agent', kind: 'event', content: 'zyxwvut qqqq' });
    const model = createScriptedModel();
    model.push('memory_candidates', candidates([{ content: SEED.pnpm }, { content: 'zyxwvut qqqq' }]));
    const result = await createExtractor({ store, retriever, model }).extract({
      agentId: 'agent',
      turns: TURNS,
    });
    expect(result.report).toMatchObject({ outcome: 'completed', decisions: { NOOP: 1, ADD: 1 } });
    expect(model.calls).toHaveLength(1);
  });

  it('an ADD whose exact duplicate was stored meanwhile (a concurrent writer) stores nothing and counts as NOOP', async () => {
    const { store, retriever } = await setup();
    const text = 'The nightly export lands in the reports bucket';
    // The neighbour query answers (no neighbour), then a concurrent writer stores the same text.
    const racing = {
      async decision(...args: Parameters<typeof retriever.decision>) {
        const answer = await retriever.decision(...args);
        await store.insertMemory({ agentId: 'agent', kind: 'fact', content: text });
        return answer;
      },
    };
    const model = createScriptedModel();
    model.push('memory_candidates', candidates([{ content: text }]));
    const result = await createExtractor({ store, retriever: racing, model }).extract({
      agentId: 'agent',
      turns: TURNS,
    });
    expect(result.report).toMatchObject({ outcome: 'completed', decisions: { NOOP: 1, ADD: 0 } });
    expect(result.applied).toEqual([{ decision: 'NOOP', id: null, targetId: null }]);
    const rows = await store.listMemories('agent', { kinds: ['fact'], limit: 100 });
    expect(rows.filter((r) => r.content === text)).toHaveLength(1);
  });

  it('bounds the model call by the gateway deadline and the caller signal; neither writes anything', async () => {
    const { store, retriever } = await setup();
    const before = await store.listMemories('agent', { limit: 100 });
    const time = createFakeTime();
    const seenSignals: AbortSignal[] = [];
    // A model that never answers: only a deadline or an abort can end the call.
    const silent: ModelPort = {
      id: 'silent',
      generate(request) {
        if (request.signal !== undefined) seenSignals.push(request.signal);
        return new Promise(() => undefined);
      },
    };
    const gateway = createProviderGateway({
      model: silent,
      limits: { global: 2, perKey: 1 },
      deadlineMs: 30_000,
      clock: time.clock,
      timers: time.timers,
    });
    const extractor = createExtractor({ store, retriever, model: gateway.modelFor('agent') });

    const late = extractor.extract({ agentId: 'agent', turns: TURNS });
    await flush();
    time.advance(30_000);
    const timedOut = await late;
    expect(timedOut.report).toMatchObject({ outcome: 'failed', candidates: 0, invalidOutputs: 0 });
    expect(timedOut.errorCode).toBe('ENGRAM_MAINTENANCE_DEADLINE');
    expect(seenSignals[0]?.aborted).toBe(true);

    const controller = new AbortController();
    const cancelled = extractor.extract({ agentId: 'agent', turns: TURNS }, { signal: controller.signal });
    await flush();
    controller.abort();
    expect((await cancelled).report.outcome).toBe('cancelled');
    expect(seenSignals[1]?.aborted).toBe(true);

    // The deadline is a provider failure; the caller's abort is not.
    expect(gateway.stats().failures.model).toBe(1);
    expect(gateway.stats().races.model).toMatchObject({ deadline: 1, aborted: 1 });
    const after = await store.listMemories('agent', { limit: 100 });
    expect(after.map((r) => [r.id, r.revision])).toEqual(before.map((r) => [r.id, r.revision]));
  });

  it('records skipped without a model and fakes nothing', async () => {
    const { store, retriever } = await setup();
    const before = (await store.listMemories('agent', { limit: 100 })).length;
    const reports: ExtractionReport[] = [];
    const result = await createExtractor({
      store,
      retriever,
      observer: { onExtraction: (r) => reports.push(r) },
    }).extract({
      agentId: 'agent',
      turns: TURNS,
    });
    expect(result.report).toMatchObject({ outcome: 'skipped', candidates: 0 });
    expect(reports).toHaveLength(1);
    expect((await store.listMemories('agent', { limit: 100 })).length).toBe(before);
  });

  it('runs through the process-wide queue and reports a chunk cancelled before it ran', async () => {
    const { store, retriever } = await setup();
    const gauges: number[] = [];
    const queue = createExtractionQueue({ observer: { onExtractionQueue: (g) => gauges.push(g.depth) } });
    const model = createScriptedModel();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    model.push('memory_candidates', async () => {
      await gate;
      return candidates([]);
    });
    const extractor = createExtractor({ store, retriever, model, queue });
    const first = extractor.extract({ agentId: 'agent', sessionId: 's', turns: TURNS });
    const controller = new AbortController();
    const second = extractor.extract(
      { agentId: 'agent', sessionId: 's', turns: TURNS },
      { signal: controller.signal },
    );
    controller.abort();
    expect((await second).report.outcome).toBe('cancelled');
    release();
    expect((await first).report).toMatchObject({ outcome: 'completed', candidates: 0 });
    expect(Math.max(...gauges)).toBe(2);
    expect(gauges.at(-1)).toBe(0);
  });
});
