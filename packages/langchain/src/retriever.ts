/**
 * `EngramRetriever`: Engram's hybrid search as a LangChain retriever. Each `Document` carries the memory's id,
 * kind, score and the search's explanation (which arm found it, ranks, similarity) in its metadata.
 */
import type { Memory, MemoryKind } from '@engram/memory';
import { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { checkOptions, checkScope, memoryScope } from './scope.js';

/** Options of {@link EngramRetriever}. */
export interface EngramRetrieverInput extends BaseRetrieverInput {
  readonly memory: Memory;
  /** The agent searched (default: the memory's). */
  readonly agentId?: string;
  /**
   * The end user searched for (default: the memory's): the agent's own memories and that user's are found,
   * never another user's.
   */
  readonly userId?: string;
  /** Documents returned (default 5). */
  readonly limit?: number;
  /** Kinds searched (default every recallable kind). */
  readonly kinds?: readonly MemoryKind[];
  /** Exact memory tags every result must carry (`tags` is LangChain's own, for callbacks). */
  readonly memoryTags?: readonly string[];
}

const RETRIEVER_KEYS: readonly (keyof EngramRetrieverInput)[] = [
  'memory',
  'agentId',
  'userId',
  'limit',
  'kinds',
  'memoryTags',
  // LangChain's own.
  'callbacks',
  'tags',
  'metadata',
  'verbose',
];

/**
 * A retriever over one agent's memories, for one of its users when `userId` is given:
 * `await retriever.invoke('question')`.
 */
export class EngramRetriever extends BaseRetriever {
  override lc_namespace: string[] = ['engram', 'retrievers'];
  static override lc_name(): string {
    return 'EngramRetriever';
  }
  readonly #input: EngramRetrieverInput;

  readonly #scope: { readonly agentId?: string; readonly userId?: string };
  constructor(input: EngramRetrieverInput) {
    checkOptions(input, 'EngramRetriever input', RETRIEVER_KEYS);
    const scope = checkScope(input, 'EngramRetriever input');
    super(input);
    this.#input = input;
    this.#scope = memoryScope(scope);
  }

  override async _getRelevantDocuments(query: string): Promise<Document[]> {
    const { memory, limit, kinds, memoryTags } = this.#input;
    const hits = await memory.search(query, {
      limit: limit ?? 5,
      ...this.#scope,
      ...(kinds === undefined ? {} : { kinds }),
      ...(memoryTags === undefined ? {} : { tags: memoryTags }),
    });
    return hits.map(
      (hit) =>
        new Document({
          pageContent: hit.content,
          id: hit.id,
          metadata: {
            id: hit.id,
            agentId: hit.agentId,
            userId: hit.userId,
            kind: hit.kind,
            tags: [...hit.tags],
            score: hit.score,
            createdAt: hit.createdAt,
            sessionId: hit.sessionId,
            explanation: hit.explanation,
          },
        }),
    );
  }
}
