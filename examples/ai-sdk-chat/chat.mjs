// A chat whose model remembers across turns: engramMiddleware puts what the memory knows into every call and
// records the conversation; engramTools lets the model remember on its own. `node chat.mjs [memory.db]`.
// The model is a scripted stand-in unless ENGRAM_OPENAI_BASE_URL and ENGRAM_OPENAI_CHAT_MODEL name an
// OpenAI-compatible endpoint.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engramMiddleware, engramTools } from '@engram/ai-sdk';
import { createMemory } from '@engram/memory';
import { generateText, stepCountIs, wrapLanguageModel } from 'ai';

const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } };
const reply = (content, unified = 'stop') => ({ content, finishReason: { unified }, usage, warnings: [] });
const textOf = (m) =>
  typeof m.content === 'string' ? m.content : m.content.map((p) => p.text ?? '').join('');

/** The stand-in: remembers "remember that …" with the tool, answers from the core block the middleware injected. */
async function scriptedModel() {
  const { MockLanguageModelV3 } = await import('ai/test');
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const last = prompt.at(-1);
      const typed = last.role === 'user' ? (last.content.at(-1)?.text ?? '') : '';
      const fact = /remember that (.+)/i.exec(typed)?.[1];
      if (fact !== undefined) {
        const input = JSON.stringify({ content: `The user's ${fact.replace(/^my /i, '')}` });
        const call = { type: 'tool-call', toolCallId: 'c1', toolName: 'memory_remember', input };
        return reply([call], 'tool-calls');
      }
      if (last.role === 'tool') return reply([{ type: 'text', text: 'Noted.' }]);
      const core = prompt.find((m) => m.role === 'system' && textOf(m).startsWith('# Core memory'));
      const lines = core === undefined ? [] : textOf(core).split('\n').slice(1).filter(Boolean);
      const known = lines.length === 0 ? 'nothing yet' : lines.map((l) => l.replace(/^- /, '')).join(' ');
      return reply([{ type: 'text', text: `From memory: ${known}` }]);
    },
  });
}

const env = process.env;
async function endpointModel() {
  const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
  const apiKey = env.ENGRAM_OPENAI_API_KEY;
  return createOpenAICompatible({ name: 'endpoint', baseURL: env.ENGRAM_OPENAI_BASE_URL, apiKey })(
    env.ENGRAM_OPENAI_CHAT_MODEL,
  );
}

const useEndpoint = env.ENGRAM_OPENAI_BASE_URL && env.ENGRAM_OPENAI_CHAT_MODEL;
const model = useEndpoint ? await endpointModel() : await scriptedModel();
const path = process.argv[2] ?? join(mkdtempSync(join(tmpdir(), 'engram-chat-')), 'memory.db');
const memory = await createMemory({ path });
const chat = wrapLanguageModel({ model, middleware: engramMiddleware(memory, { sessionId: 'example' }) });
const tools = engramTools(memory);

for (const question of ['Please remember that my favourite editor is Helix.', 'Which editor do I like?']) {
  const { text } = await generateText({ model: chat, tools, stopWhen: stepCountIs(3), prompt: question });
  console.log(`> ${question}\n${text}`);
}
await memory.close();
