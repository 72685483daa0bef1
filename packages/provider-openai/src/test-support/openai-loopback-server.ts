/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI embeddings and chat completions API and the common
 * `/rerank` API (Cohere shape, with a deterministic scorer), scripted per test.
 *
 * Test support only (excluded from the build): each path has a queue of scripted replies; when the queue is empty the
 * server answers like a well-behaved OpenAI-compatible server.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the server received. */
export interface RecordedRequest {
  readonly method: string;
  /** The path without the query. */
  readonly path: string;
  /** The raw query string (with the leading `?`, or empty). */
  readonly query: string;
  readonly headers: IncomingHttpHeaders;
  /** The parsed JSON body (or the raw text when it is not JSON). */
  readonly body: unknown;
}

/** A scripted reply. */
export type Reply =
  | {
      readonly kind: 'json';
      readonly status?: number;
      readonly headers?: Record<string, string>;
      readonly body: unknown;
    }
  | {
      readonly kind: 'raw';
      readonly status?: number;
      readonly headers?: Record<string, string>;
      readonly body: string;
    }
  /** Hold the response open until the test releases it (or the server closes). */
  | { readonly kind: 'hold' }
  /** Destroy the connection without answering: a network error for the client. */
  | { readonly kind: 'destroy' };

/** The embeddings endpoint path. */
export const EMBEDDINGS_PATH = '/v1/embeddings';
/** The chat completions endpoint path. */
export const CHAT_PATH = '/v1/chat/completions';

/** The rerank endpoint path. */
export const RERANK_PATH = '/v1/rerank';

/**
 * The deterministic score the default rerank answer gives a document: the share of the query's words it
 * contains (a stand-in for a cross-encoder, not a model).
 */
export function expectedRerankScore(query: string, document: string): number {
  const words = query.toLowerCase().split(/\W+/).filter(Boolean);
  if (words.length === 0) return 0;
  const text = document.toLowerCase();
  return words.filter((w) => text.includes(w)).length / words.length;
}

function defaultRerank(body: unknown): Reply {
  const { query, documents, texts } = (body ?? {}) as {
    query?: unknown;
    documents?: unknown;
    texts?: unknown;
  };
  const docs = Array.isArray(documents) ? documents : texts;
  if (typeof query !== 'string' || !Array.isArray(docs) || !docs.every((d) => typeof d === 'string')) {
    return { kind: 'json', status: 400, body: { message: 'query and documents required' } };
  }
  const results = docs.map((d: string, index) => ({ index, relevance_score: expectedRerankScore(query, d) }));
  // Best first, as the servers answer: the client must place each score by `index`.
  results.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  return { kind: 'json', body: { id: 'rerank-loopback', results } };
}

/** A running loopback server. */
export interface LoopbackOpenAIServer {
  /** `http://127.0.0.1:<port>/v1`. */
  readonly baseUrl: string;
  /** Every request received since the last reset, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Scripts the next replies of one path. */
  enqueue(path: string, ...replies: Reply[]): void;
  /** Resolves once `count` requests have arrived since the last reset. */
  waitForRequests(count: number): Promise<void>;
  /** Ends every held response; returns how many there were. */
  releaseHeld(): number;
  /** Clears scripts and recorded requests and ends held responses. */
  reset(): void;
  /** Ends held responses, drops connections and stops listening. */
  close(): Promise<void>;
}

/** The deterministic vector the default embeddings answer gives a text. */
export function expectedVector(text: string, dimensions: number): number[] {
  let seed = 0;
  for (const char of text) seed = (seed * 31 + (char.codePointAt(0) ?? 0)) % 1_000_003;
  return Array.from({ length: dimensions }, (_, i) => ((seed + i * 7919) % 1000) / 1000 - 0.5);
}

/** The content of the default chat answer. */
export function expectedChatContent(messageCount: number): string {
  return JSON.stringify({ ok: true, messages: messageCount });
}

function defaultEmbeddings(body: unknown, dimensions: number): Reply {
  const {
    input,
    model,
    dimensions: asked,
  } = (body ?? {}) as { input?: unknown; model?: unknown; dimensions?: unknown };
  const texts = typeof input === 'string' ? [input] : Array.isArray(input) ? input : null;
  if (texts === null || !texts.every((t) => typeof t === 'string')) {
    return {
      kind: 'json',
      status: 400,
      body: { error: { message: 'input must be a string array', type: 'invalid_request_error' } },
    };
  }
  const size = typeof asked === 'number' ? asked : dimensions;
  const data = texts.map((text, index) => ({
    object: 'embedding',
    index,
    embedding: expectedVector(text, size),
  }));
  // Reverse the order so the client must sort by `index`.
  data.reverse();
  return {
    kind: 'json',
    body: { object: 'list', model, data, usage: { prompt_tokens: texts.length, total_tokens: texts.length } },
  };
}

function defaultChat(body: unknown): Reply {
  const { messages, model } = (body ?? {}) as { messages?: unknown; model?: unknown };
  if (!Array.isArray(messages)) {
    return {
      kind: 'json',
      status: 400,
      body: { error: { message: 'messages required', type: 'invalid_request_error' } },
    };
  }
  const content = expectedChatContent(messages.length);
  const promptChars = messages.reduce<number>(
    (sum, m: { content?: unknown }) => sum + (typeof m.content === 'string' ? m.content.length : 0),
    0,
  );
  return {
    kind: 'json',
    body: {
      id: 'chatcmpl-loopback',
      object: 'chat.completion',
      model,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: promptChars,
        completion_tokens: content.length,
        total_tokens: promptChars + content.length,
      },
    },
  };
}

/** Starts the server on 127.0.0.1 with an ephemeral port. */
export async function startLoopbackOpenAIServer(options: {
  embeddingDimensions: number;
}): Promise<LoopbackOpenAIServer> {
  const queues = new Map<string, Reply[]>();
  const requests: RecordedRequest[] = [];
  const held = new Set<ServerResponse>();
  let waiters: { count: number; resolve: () => void }[] = [];

  const send = (res: ServerResponse, reply: Reply): void => {
    switch (reply.kind) {
      case 'hold':
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      case 'destroy':
        res.socket?.destroy();
        return;
      case 'json':
      case 'raw': {
        const text = reply.kind === 'json' ? JSON.stringify(reply.body) : reply.body;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(text);
        return;
      }
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // Keep the raw text; the default handlers answer 400.
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      requests.push({
        method: req.method ?? '',
        path: url.pathname,
        query: url.search,
        headers: req.headers,
        body,
      });
      const ready = waiters.filter((w) => requests.length >= w.count);
      waiters = waiters.filter((w) => requests.length < w.count);
      for (const w of ready) w.resolve();

      const scripted = queues.get(url.pathname)?.shift();
      if (scripted !== undefined) {
        send(res, scripted);
      } else if (req.method === 'POST' && url.pathname === EMBEDDINGS_PATH) {
        send(res, defaultEmbeddings(body, options.embeddingDimensions));
      } else if (req.method === 'POST' && url.pathname === CHAT_PATH) {
        send(res, defaultChat(body));
      } else if (req.method === 'POST' && url.pathname === RERANK_PATH) {
        send(res, defaultRerank(body));
      } else {
        send(res, {
          kind: 'json',
          status: 404,
          body: { error: { message: 'not found', type: 'invalid_request_error' } },
        });
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  const releaseHeld = (): number => {
    const count = held.size;
    for (const res of held) {
      if (!res.writableEnded && !res.destroyed) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"data":[]}');
      }
    }
    held.clear();
    return count;
  };

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue(path, ...replies) {
      const queue = queues.get(path) ?? [];
      queue.push(...replies);
      queues.set(path, queue);
    },
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise<void>((resolve) => waiters.push({ count, resolve }));
    },
    releaseHeld,
    reset() {
      releaseHeld();
      queues.clear();
      requests.length = 0;
      waiters = [];
    },
    async close() {
      releaseHeld();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}
