/**
 * `engramTools`: the memory tools as AI SDK tools for `generateText({ tools })` — `memory_search`,
 * `memory_remember`, `memory_get`, `memory_update`, `memory_forget` and the skills. Their input schemas are zod
 * schemas built from the JSON Schemas the memory offers every model (one definition, also served over MCP), so
 * the SDK rejects a malformed call with its own `InvalidToolInputError` before it runs; each call is then run by
 * the memory (which validates it again), and answers the model with short text.
 */
import type { Memory } from '@engram/memory';
import { type Tool, tool } from 'ai';
import { z } from 'zod';
import { checkScope, type EngramScope, memoryScope } from './scope.js';

/**
 * The scope the tools act in (`{ agentId?, userId?, sessionId? }`, the middleware's scope shape): with a
 * `userId`, a tool reads the agent's memories and that user's, writes carry that user, and another user's memory
 * is not found. `sessionId` is accepted so one scope object serves the middleware and the tools; tool calls are
 * logged by the middleware, not by the tools.
 */
export type EngramToolsOptions = EngramScope;

/** Creates the tools, keyed by name, acting in `scope` (default: the memory's agent and user). */
export function engramTools(
  memory: Memory,
  scope: EngramToolsOptions = {},
): Record<string, Tool<unknown, string>> {
  const acting = memoryScope(checkScope(scope, 'engramTools scope'));
  const tools: Record<string, Tool<unknown, string>> = {};
  for (const spec of memory.toolDefinitions) {
    // A copy: the definitions are frozen and shared.
    const inputSchema: z.ZodType = z.fromJSONSchema(
      structuredClone(spec.inputSchema) as Parameters<typeof z.fromJSONSchema>[0],
    );
    // No explicit type arguments: `tool`'s generics differ between AI SDK 6 and 7; both infer these.
    tools[spec.name] = tool({
      description: spec.description,
      inputSchema,
      execute: async (input: unknown, { abortSignal }): Promise<string> => {
        const result = await memory.callTool(spec.name, input, {
          ...acting,
          ...(abortSignal === undefined ? {} : { signal: abortSignal }),
        });
        return result.text;
      },
    });
  }
  return tools;
}
