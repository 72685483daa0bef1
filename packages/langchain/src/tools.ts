/**
 * `engramTools`: the memory tools as LangChain tools (`memory_search`, `memory_remember`, `memory_get`,
 * `memory_update`, `memory_forget` and the skills), for `model.bindTools(tools)` or an agent. Their input schemas
 * are the JSON Schemas the memory offers every model; each call is validated and run by the memory.
 */
import type { Memory } from '@engram/memory';
import { DynamicStructuredTool } from '@langchain/core/tools';

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
        // A copy: LangChain annotates the schema object it validates with, and the definitions are frozen.
        schema: structuredClone(spec.inputSchema) as Record<string, unknown>,
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
