/**
 * A caller's mistake — an agent or session id the store would refuse — is a typed maintenance error
 * (`ENGRAM_MAINTENANCE_INVALID_INPUT`) thrown before anything is read or written, never a store error.
 */
import { createRetriever } from '@engram/retrieval';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { isEngramMaintenanceError } from './errors.js';
import { createExtractor } from './extractor.js';
import { createEventIngestor } from './ingest.js';
import { createMaintenanceRunner } from './maintenance.js';
import { openTempStore, type TempStore } from './test-support/native.js';
import { createScriptedModel } from './test-support/scripted-model.js';

let open: TempStore[] = [];
afterEach(async () => {
  for (const t of open) await t.close();
  open = [];
});

const BAD_IDS: readonly [string, string][] = [
  ['300 characters', 'a'.repeat(300)],
  ['a NUL byte', 'agent\u0000'],
  ['a lone surrogate', 'agent\ud800'],
  ['blank', '   '],
  // Look-alikes of `agent`: refused, never silently a second agent.
  ['a trailing space', 'agent '],
  ['a leading no-break space', '\u00a0agent'],
  ['a decomposed (NFD) accent', 'age\u0301nt'],
];

async function codeOf(run: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await run();
    return undefined;
  } catch (error) {
    return isEngramMaintenanceError(error) ? error.code : `not a maintenance error: ${String(error)}`;
  }
}

describe('invalid agent and session ids', () => {
  for (const [what, bad] of BAD_IDS) {
    it(`rejects an id with ${what} as ENGRAM_MAINTENANCE_INVALID_INPUT and changes nothing`, async () => {
      const t = await openTempStore();
      open.push(t);
      const { store, embedder } = t;
      const retriever = createRetriever({ store, embedder });
      const ingestor = createEventIngestor({ store });
      const drain = createEmbeddingDrain({ store, embedder });
      const runner = createMaintenanceRunner({ store, retriever });
      const extractor = createExtractor({ store, retriever, model: createScriptedModel() });
      const events = [{ seq: 1, type: 'message' as const, role: 'user', content: 'The build uses pnpm.' }];
      const calls: [string, () => Promise<unknown>][] = [
        ['appendAndIngest agent', () => ingestor.appendAndIngest(bad, 's1', events)],
        ['appendAndIngest session', () => ingestor.appendAndIngest('agent', bad, events)],
        ['ingest agent', () => ingestor.ingest(bad, 's1')],
        ['ingest session', () => ingestor.ingest('agent', bad)],
        ['ingestPending', () => ingestor.ingestPending(bad)],
        ['drain', () => drain.run({ agentId: bad })],
        ['maintenance pass', () => runner.run(bad)],
        ['extract agent', () => extractor.extract({ agentId: bad, turns: [{ role: 'user', content: 'x' }] })],
        [
          'extract session',
          () =>
            extractor.extract({ agentId: 'agent', sessionId: bad, turns: [{ role: 'user', content: 'x' }] }),
        ],
      ];
      for (const [name, call] of calls) {
        expect([name, await codeOf(call)]).toEqual([name, 'ENGRAM_MAINTENANCE_INVALID_INPUT']);
      }
      expect(await store.listAgents()).toEqual([]);
      expect(await store.listSessions('agent')).toEqual([]);
    });
  }
});
