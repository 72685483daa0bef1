// RAG with LangChain.js over Engram: a runbook is ingested (embedded in the background; flush waits), and a chain
// answers from the passages EngramRetriever finds. The model is a scripted stand-in unless ENGRAM_OPENAI_BASE_URL
// and ENGRAM_OPENAI_CHAT_MODEL name an OpenAI-compatible endpoint.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngramRetriever } from '@engram/langchain';
import { createMemory } from '@engram/memory';
import { AIMessage } from '@langchain/core/messages';
import { StringOutputParser } from '@langchain/core/output_parsers';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import { RunnableLambda, RunnablePassthrough, RunnableSequence } from '@langchain/core/runnables';

const RUNBOOK = [
  'To roll back a deploy, run `deploy rollback --to previous` and watch the error rate for ten minutes.',
  'Database migrations run automatically before each deploy; a failed migration stops the deploy.',
  'The on-call engineer is paged when the checkout error rate stays above 2% for five minutes.',
  'Feature flags live in flags.yaml and take effect without a deploy.',
];

/** The stand-in: answers with the first passage it was given. */
const scripted = RunnableLambda.from(async (prompt) => {
  const context = /Context:\n(.*)/.exec(prompt.toString())?.[1] ?? 'nothing relevant';
  return new AIMessage(`According to the runbook: ${context}`);
});

const env = process.env;
async function endpointModel() {
  const { ChatOpenAI } = await import('@langchain/openai');
  const configuration = { baseURL: env.ENGRAM_OPENAI_BASE_URL };
  return new ChatOpenAI({
    model: env.ENGRAM_OPENAI_CHAT_MODEL,
    apiKey: env.ENGRAM_OPENAI_API_KEY,
    configuration,
  });
}

const model = env.ENGRAM_OPENAI_BASE_URL && env.ENGRAM_OPENAI_CHAT_MODEL ? await endpointModel() : scripted;
const path = process.argv[2] ?? join(mkdtempSync(join(tmpdir(), 'engram-rag-')), 'memory.db');
const memory = await createMemory({ path });
await memory.ingest(RUNBOOK);
await memory.flush();

const retriever = new EngramRetriever({ memory, limit: 2 });
const prompt = ChatPromptTemplate.fromTemplate(
  'Answer from the context.\nContext:\n{context}\nQuestion: {question}',
);
const passages = retriever.pipe((docs) => docs.map((d) => d.pageContent).join('\n'));
const chain = RunnableSequence.from([
  { context: passages, question: new RunnablePassthrough() },
  prompt,
  model,
  new StringOutputParser(),
]);

for (const question of ['How do I undo a bad release?', 'When is someone paged?']) {
  console.log(`> ${question}\n${await chain.invoke(question)}`);
}
await memory.close();
