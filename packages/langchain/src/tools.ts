/**
 * `engramTools`: the memory tools as LangChain tools (`memory_search`, `memory_remember`, `memory_get`,
 * `memory_update`, `memory_forget` and the skills), for `model.bindTools(tools)` or an agent. Their input schemas
 * are zod schemas built from the JSON Schemas the memory offers every model (one definition), so LangChain
 * rejects a malformed call with its own `ToolInputParsingException`; each call is then run by the memory.
 */
import type { Memory } from '@engram/memory';
import { DynamicStructuredTool } from '@langchain/core/tools';
import { z } from 'zod';

/** Options of {@link engramTools}. */
export interface EngramToolsOptions {
  /** The agent the tools act for (default: the memory's). */
  readonly agentId?: string;
}

/** Creates the tools, in the order the memory offers them. */
export function engramTools(memory: Memory, options: EngramToolsOptions = {}): DynamicStructuredTool[] {
  return memory.toolDefinitions.map(
    (spec) =>
      new DynamicStructuredTool({
        name: spec.name,
        description: spec.description,
        // A copy: the definitions are frozen and shared.
        schema: z.fromJSONSchema(structuredClone(spec.inputSchema) as Parameters<typeof z.fromJSONSchema>[0]),
        func: async (input: unknown) =>
          (
            await memory.callTool(
              spec.name,
              input,
              options.agentId === undefined ? {} : { agentId: options.agentId },
            )
          ).text,
      }),
  );
}
