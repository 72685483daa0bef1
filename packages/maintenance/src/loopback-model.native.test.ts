/**
 * The model contract end to end: a scripted OpenAI-compatible server on 127.0.0.1 (`POST /v1/chat/completions`,
 * answering by `response_format.json_schema.name`) drives extraction and a full maintenance pass through
 * `@engram/provider-openai`, over a real store. A wrong answer is reported by schema and field, never by text.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MaintenancePassReport } from '@engram/contracts';
import { createOpenAICompatibleChatModel } from '@engram/provider-openai';
import { createRetriever } from '@engram/retrieval';
import { afterEach, describe, expect, it } from 'vitest';
import { createEmbeddingDrain } from './drain.js';
import { createExtractor } from './extractor.js';
import { REVIEW_NEEDED_TAG } from './heavy-steps.js';
import { createMaintenanceRunner } from './maintenance.js';
import { MODEL_OUTPUT_SCHEMA_NAMES } from './model-output.js';
import { openTempStore, type TempStore } from './test-support/native.js';

type Script = Readonly<Record<string, (messages: readonly { role: string; content: string }[]) => unknown>>;

/** A loopback chat-completions server answering each schema name from `script`; records the names asked. */
async function loopbackModel(script: Script): Promise<{ server: Server; baseUrl: string; asked: string[] }> {
  const asked: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(body) as {
        messages: { role: string; content: string }[];
        response_format: { type: string; json_schema: { name: string; schema: { type?: string } } };
      };
      const name = request.response_format.json_schema.name.replace(/_+$/, '');
      asked.push(name);
      const answer = script[name];
      if (answer === undefined || request.response_format.json_schema.schema.type !== 'object') {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"unscripted"}}');
        return;
      }
      const content = JSON.stringify(answer(request.messages));
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: 'chatcmpl-loopback',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { server, baseUrl: `http://127.0.0.1:${port}/v1`, asked };
}

let servers: Server[] = [];
let stores: TempStore[] = [];
afterEach(async () => {
  for (const s of servers) s.close();
  for (const t of stores) await t.close();
  servers = [];
  stores = [];
});

const BACKUP = 'The staging database is backed up every night at two';
const MERGED = 'The staging database is backed up every night at 2 am';

describe('a scripted OpenAI-compatible model over loopback', () => {
  it('drives extraction and a full maintenance pass: merge, reflection and persona, each written row embedded', async () => {
    const loop = await loopbackModel({
      memory_candidates: () => ({ memories: [{ content: BACKUP, kind: 'semantic', importance: 0.6 }] }),
      memory_decision: () => ({ decision: 'ADD', targetId: null, content: null }),
      memory_merge: (messages) => {
        const shown = Object.values(JSON.parse(messages[1]?.content ?? '{}') as Record<string, string>);
        return shown.length === 3 ? { merge: true, content: MERGED } : { merge: false, content: null };
      },
      memory_reflection: () => ({
        reflections: [{ content: 'The team relies on nightly backups of staging', importance: 0.7 }],
      }),
      memory_persona: () => ({ persona: 'An engineer who runs the staging environment on port 8080' }),
    });
    servers.push(loop.server);
    const t = await openTempStore();
    stores.push(t);
    const { store, embedder } = t;
    const model = createOpenAICompatibleChatModel({
      baseUrl: loop.baseUrl,
      model: 'loopback',
      maxRetries: 0,
    });
    const retriever = createRetriever({ store, embedder });
    const drain = createEmbeddingDrain({ store, embedder });
    const sources = await store.insertMemories([
      { agentId: 'a', kind: 'semantic', content: 'The staging database gets backed up every night at two' },
      { agentId: 'a', kind: 'semantic', content: 'The staging database is backed up each night at two' },
      { agentId: 'a', kind: 'fact', content: 'The staging API listens on port 8080' },
    ]);
    await drain.run();

    const extracted = await createExtractor({ store, retriever, model }).extract({
      agentId: 'a',
      sessionId: 's1',
      turns: [
        { role: 'user', content: 'When does the staging backup run?' },
        { role: 'assistant', content: 'Every night at two.' },
      ],
    });
    expect(extracted.report.outcome).toBe('completed');
    expect(extracted.report.decisions.ADD).toBe(1);
    await drain.run();

    const observed: MaintenancePassReport[] = [];
    const runner = createMaintenanceRunner({
      store,
      retriever,
      model,
      drain,
      reflection: { importanceThreshold: 0.5 },
      observer: { onMaintenancePass: (r) => observed.push(r) },
    });
    const { report, details } = await runner.run('a');
    expect(report?.heavy).toMatchObject({
      outcome: 'completed',
      steps: { challenge: 'skipped', merge: 'completed', reflection: 'completed', persona: 'completed' },
      invalidOutputs: 0,
    });
    expect(loop.asked).toEqual([
      MODEL_OUTPUT_SCHEMA_NAMES.candidates,
      MODEL_OUTPUT_SCHEMA_NAMES.decision,
      MODEL_OUTPUT_SCHEMA_NAMES.merge,
      MODEL_OUTPUT_SCHEMA_NAMES.reflection,
      MODEL_OUTPUT_SCHEMA_NAMES.persona,
    ]);
    const [merged] = await store.listMemories('a', { tags: ['source:merge'], limit: 5 });
    expect(merged).toMatchObject({ content: MERGED, lifecycle: 'active', embeddingState: 'ready' });
    const superseded = await store.listMemories('a', { lifecycles: ['superseded'], limit: 10 });
    expect(superseded).toHaveLength(3);
    for (const row of superseded) expect(row.supersededBy).toBe(merged?.id);
    expect(superseded.map((r) => r.id)).toEqual(expect.arrayContaining(sources.slice(0, 2).map((r) => r.id)));
    const [reflection] = await store.listMemories('a', { kinds: ['reflection'], limit: 5 });
    expect(reflection?.embeddingState).toBe('ready');
    const [persona] = await store.listMemories('a', { kinds: ['persona'], limit: 5 });
    expect(persona?.tags).toContain(REVIEW_NEEDED_TAG);
    expect(details?.written).toEqual({ rows: 3, embedded: 3, pending: 0 });
    expect((await store.countEmbeddingBacklog()).total).toBe(0);
    expect(observed).toEqual([report]);
  });

  it('an answer of the wrong shape fails its step and names the schema and the field, never the text', async () => {
    const loop = await loopbackModel({
      memory_persona: () => ({ persona: 42, note: 'SECRET-MODEL-TEXT' }),
    });
    servers.push(loop.server);
    const t = await openTempStore();
    stores.push(t);
    await t.store.insertMemory({ agentId: 'a', kind: 'fact', content: 'The user deploys on Fridays' });
    const model = createOpenAICompatibleChatModel({
      baseUrl: loop.baseUrl,
      model: 'loopback',
      maxRetries: 0,
    });
    const runner = createMaintenanceRunner({
      store: t.store,
      retriever: createRetriever({ store: t.store, embedder: t.embedder }),
      model,
    });
    const { report, details } = await runner.run('a');
    expect(report?.heavy).toMatchObject({
      outcome: 'failed',
      steps: { persona: 'failed' },
      invalidOutputs: 1,
      invalidBySchema: { memory_persona: 1 },
    });
    expect(details?.invalidOutputs).toEqual([
      { schema: 'memory_persona', path: 'persona', issue: 'invalid_type' },
    ]);
    expect(JSON.stringify({ report, details })).not.toContain('SECRET');
    expect(await t.store.listMemories('a', { kinds: ['persona'], limit: 5 })).toEqual([]);
  });
});
