import { describe, expect, it } from 'vitest';
import {
  type FacadeContext,
  type ForwardedMethod,
  MemoryStoreFacade,
  type StoreSlices,
} from './store-facade.js';

interface Ctx extends FacadeContext {
  readonly name: string;
}

const ctx: Ctx = {
  name: 'ctx',
  profile: { id: 'p', dimensions: 3 },
  closed: false,
  integrity: { state: 'ok', checkedAt: 12 },
  forgetMode: 'keep',
  limits: { maxContentLength: 77 },
};

/** Every method's name, as the port lists them (a missing one fails the type check of the table below). */
const METHODS = [
  'getMemory',
  'listMemories',
  'findByContentHash',
  'searchLexical',
  'searchVector',
  'revalidate',
  'revalidateBrief',
  'sessionNeighbours',
  'insertUniqueMemory',
  'insertMemories',
  'updateMemory',
  'recordAccess',
  'deleteMemory',
  'archiveMemory',
  'supersedeMemory',
  'setLifecycle',
  'mergeMemories',
  'history',
  'forgetMemory',
  'deleteAll',
  'linkConflict',
  'listConflicts',
  'resolveConflict',
  'listPendingEmbeddings',
  'commitEmbeddings',
  'countEmbeddingBacklog',
  'listFailedEmbeddings',
  'listSessionSummaries',
  'resetEmbeddings',
  'repairEmbeddingIntegrity',
  'pruneOrphanedVectors',
  'claimMaintenance',
  'releaseMaintenance',
  'publishProcessBeat',
  'removeProcessBeat',
  'listProcessBeats',
  'appendEvents',
  'readEvents',
  'listEventsAfter',
  'listSessions',
  'getCursor',
  'ingestBatch',
  'writeSkill',
  'deleteSkill',
  'listSkills',
  'getSkill',
  'health',
  'listAgents',
  'checkIntegrity',
  'exportRecords',
  'importRecords',
] as const satisfies readonly ForwardedMethod[];

type Missing = Exclude<ForwardedMethod, (typeof METHODS)[number]>;
const everyMethodListed: [Missing] extends [never] ? true : Missing = true;

/** A slice table whose every function answers with what it was called with. */
const calls: { method: string; args: readonly unknown[] }[] = [];
const echo = Object.fromEntries(
  METHODS.map((method) => [
    method,
    (c: Ctx, ...args: unknown[]) => {
      calls.push({ method, args: [c.name, ...args] });
      return { method, args };
    },
  ]),
) as unknown as StoreSlices<Ctx>;

class EchoStore extends MemoryStoreFacade<Ctx> {
  constructor() {
    super(ctx, echo);
  }
}

describe('the store facade', () => {
  it('inserts a memory as insertUniqueMemory does, resolving with its record', async () => {
    const inserted = { record: { id: 'm' }, created: false };
    const slices = {
      ...echo,
      insertUniqueMemory: () => Promise.resolve(inserted),
    } as unknown as StoreSlices<Ctx>;
    class OneStore extends MemoryStoreFacade<Ctx> {
      constructor() {
        super(ctx, slices);
      }
    }
    await expect(new OneStore().insertMemory({ agentId: 'a', kind: 'fact', content: 'x' })).resolves.toEqual({
      id: 'm',
    });
  });

  it('reads its properties from the context', () => {
    const store = new EchoStore();
    expect(everyMethodListed).toBe(true);
    expect(store.maxContentLength).toBe(77);
    expect(store.embeddingProfile).toEqual({ id: 'p', dimensions: 3 });
    expect(store.closed).toBe(false);
    expect(store.integrity).toEqual({ state: 'ok', checkedAt: 12 });
    expect(store.forgetMode).toBe('keep');
  });

  it('forwards every method to its slice function with the context first and the arguments in order', () => {
    const store = new EchoStore();
    const viaFacade = store as unknown as Record<ForwardedMethod, (...args: unknown[]) => unknown>;
    for (const method of METHODS) {
      calls.length = 0;
      const args = [`${method}-1`, 2, { three: 3 }, [4]];
      const answer = viaFacade[method](...args);
      expect(calls).toHaveLength(1);
      expect(calls[0]?.method).toBe(method);
      expect(calls[0]?.args[0]).toBe('ctx');
      // Each method passes on as many arguments as the port gives it, in order.
      const passed = calls[0]?.args.slice(1) ?? [];
      expect(passed).toEqual(args.slice(0, passed.length));
      expect(answer).toEqual({ method, args: passed });
    }
  });
});
