import { checkAgentId, checkAgentIdForm, systemTimers, type Timers } from '@engram/contracts';
import { EngramRetrievalError, type QueryEmbedder, type Retriever } from '@engram/retrieval';
import type { ToolStore } from './ports.js';
import {
  runToolCall,
  type ToolCallContext,
  type ToolCallResult,
  type ToolDeps,
  type ToolSettings,
} from './tools/handlers.js';
import { MEMORY_TOOL_DEFINITIONS, parseToolArguments, type ToolDefinition } from './tools/schema.js';

export type {
  ToolCallContext,
  ToolCallResult,
  ToolResultData,
  ToolSearchHit,
} from './tools/handlers.js';
export { MAX_POINTER_EVENTS, TOPIC_TAG_PREFIX } from './tools/handlers.js';
export type {
  MemoryToolCall,
  MemoryToolName,
  ParsedToolCall,
  ToolDefinition,
} from './tools/schema.js';
export {
  MAX_ARGUMENT_CHARS,
  MEMORY_TOOL_DEFINITIONS,
  MEMORY_TOOL_NAMES,
  parseToolArguments,
  SEARCH_MAX_CHARS,
} from './tools/schema.js';

/** Configuration of {@link createToolHandler}. */
export interface ToolHandlerConfig {
  /** The store slice the tools read and write. */
  readonly store: ToolStore;
  /** Runs `memory_search` (`search` purpose) and the near-duplicate lookup of `memory_remember` (`decision`). */
  readonly retriever: Pick<Retriever, 'search' | 'decision'>;
  /** Compares facts by cosine similarity; without it, by token Jaccard. */
  readonly embedder?: QueryEmbedder;
  /** Cosine similarity from which two facts are near duplicates (default 0.9). */
  readonly mergeSimilarity?: number;
  /** Token Jaccard from which two facts are near duplicates when there is no embedder (default 0.8). */
  readonly mergeJaccard?: number;
  /** Importance of a remembered fact (default 0.7). */
  readonly factImportance?: number;
  /** Deadline of the embedding used to compare facts, in ms (default 2,000); past it, Jaccard is used. */
  readonly embeddingDeadlineMs?: number;
  /** Timers for that deadline (default the global ones). */
  readonly timers?: Timers;
}

/** Executes memory tool calls for a model. */
export interface ToolHandler {
  readonly definitions: readonly ToolDefinition[];
  /**
   * Runs one tool call. Never rejects for bad arguments or store failures (they become `ok: false` with a
   * typed message); only an invalid `ctx.agentId` (refused by the store's agent-id rule) — a programmer
   * error — throws an `EngramRetrievalError`, before anything is read or written.
   */
  execute(name: string, args: unknown, ctx: ToolCallContext): Promise<ToolCallResult>;
}

function resolveToolSettings(config: ToolHandlerConfig): ToolSettings {
  const settings = Object.freeze({
    mergeSimilarity: config.mergeSimilarity ?? 0.9,
    mergeJaccard: config.mergeJaccard ?? 0.8,
    factImportance: config.factImportance ?? 0.7,
    embeddingDeadlineMs: config.embeddingDeadlineMs ?? 2000,
  });
  for (const [name, value, min, max] of [
    ['mergeSimilarity', settings.mergeSimilarity, -1, 1],
    ['mergeJaccard', settings.mergeJaccard, 0, 1],
    ['factImportance', settings.factImportance, 0, 1],
    ['embeddingDeadlineMs', settings.embeddingDeadlineMs, 1, 600_000],
  ] as const) {
    if (!Number.isFinite(value) || value < min || value > max) {
      throw new EngramRetrievalError(
        'ENGRAM_RETRIEVAL_INVALID_CONFIG',
        `Tool handler config "${name}" is out of range.`,
      );
    }
  }
  return settings;
}

/**
 * Creates the tool handler for `memory_search`, `memory_remember`, `memory_get`, `memory_update`,
 * `memory_forget`, `skill_write`, `skill_delete` and `skill_list`, returning bounded text for the model.
 */
export function createToolHandler(config: ToolHandlerConfig): ToolHandler {
  const settings = resolveToolSettings(config);
  const deps: ToolDeps = {
    store: config.store,
    retriever: config.retriever,
    embedder: config.embedder,
    settings,
    timers: config.timers ?? systemTimers,
  };
  return Object.freeze({
    definitions: MEMORY_TOOL_DEFINITIONS,
    async execute(name: string, args: unknown, ctx: ToolCallContext): Promise<ToolCallResult> {
      const problem =
        typeof ctx === 'object' && ctx !== null
          ? (checkAgentId(ctx.agentId) ?? checkAgentIdForm(ctx.agentId))
          : 'notString';
      if (problem !== null) {
        throw new EngramRetrievalError(
          'ENGRAM_RETRIEVAL_INVALID_INPUT',
          `ctx.agentId is invalid (${problem}).`,
        );
      }
      const parsed = parseToolArguments(name, args);
      if (!parsed.ok) return { ok: false, text: parsed.text };
      return runToolCall(deps, parsed, ctx);
    },
  });
}
