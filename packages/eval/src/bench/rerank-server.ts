/**
 * A deterministic `/rerank` server on 127.0.0.1 for the rerank bench scenario and the rerank tests: it answers
 * the Cohere shape (`{ results: [{ index, relevance_score }] }`, best first) with a fixed scorer, not a model —
 * the share of the query's words a document contains. Its figures measure the rerank stage's own cost (the
 * HTTP round trip, the request and answer, the reorder), never a cross-encoder's inference.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The label reports give this scorer. */
export const DETERMINISTIC_RERANK_SCORER = 'loopback deterministic scorer (word overlap, not a model)';

/** A running deterministic rerank server. */
export interface DeterministicRerankServer {
  /** `http://127.0.0.1:<port>/v1`: `createHttpReranker` posts to `<baseUrl>/rerank`. */
  readonly baseUrl: string;
  /** Requests answered so far. */
  readonly requests: () => number;
  close(): Promise<void>;
}

/** The score a document gets: the share of the query's words it contains (0..1). */
export function deterministicRerankScore(query: string, document: string): number {
  const words = query
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  if (words.length === 0) return 0;
  const text = document.toLowerCase();
  let found = 0;
  for (const w of words) if (text.includes(w)) found += 1;
  return found / words.length;
}

/** Starts the server on an ephemeral loopback port. */
export async function startDeterministicRerankServer(): Promise<DeterministicRerankServer> {
  let answered = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: { query?: unknown; documents?: unknown; texts?: unknown } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
      } catch {
        // Answered 400 below.
      }
      const docs = Array.isArray(body.documents) ? body.documents : body.texts;
      const { query } = body;
      if (req.method !== 'POST' || typeof query !== 'string' || !Array.isArray(docs)) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end('{"message":"query and documents required"}');
        return;
      }
      const results = docs.map((d: unknown, index) => ({
        index,
        relevance_score: typeof d === 'string' ? deterministicRerankScore(query, d) : 0,
      }));
      results.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
      answered += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ results }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: () => answered,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
    },
  };
}
