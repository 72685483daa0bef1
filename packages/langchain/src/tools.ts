/**
 * `engramTools`: the memory tools as LangChain tools (`memory_search`, `memory_remember`, `memory_get`,
 * `memory_update`, `memory_forget` and the skills), for `model.bindTools(tools)` or an agent. Their input schemas
 * are zod schemas built from the JSON Schemas the memory offers every model (one definition), so LangChain
 * rejects a malformed call with its own `ToolInputParsingException`; each call is then run by the memory.
 */
import type { Memory } from '@engram/memory';
import { DynamicStructuredTool } from '@langchain/core/tools';
import { z } from 'zod';
import { checkOptions, checkScope, type EngramScope, memoryScope, SCOPE_KEYS } from './scope.js';

/**
 * The scope the tools act in (`{ agentId?, userId?, sessionId? }`): with a `userId`, a tool reads the agent's
 * memories and that user's, writes carry that user, and another user's memory is not found. `sessionId` is
 * accepted so one scope object serves the history and the tools; tool calls do not log to a session.
 */
export type EngramToolsOptions = EngramScope;

/** Creates the tools, in the order the memory offers them, acting in `scope` (default: the memory's agent and user). */
export function engramTools(memory: Memory, scope: EngramToolsOptions = {}): DynamicStructuredTool[] {
  checkOptions(scope, 'engramTools scope', SCOPE_KEYS);
  const acting = memoryScope(checkScope(scope, 'engramTools scope'));
  return memory.toolDefinitions.map(
    (spec) =>
      new DynamicStructuredTool({
        name: spec.name,
        description: spec.description,
        // A copy: the definitions are frozen and shared.
        schema: z.fromJSONSchema(structuredClone(spec.inputSchema) as Parameters<typeof z.fromJSONSchema>[0]),
        func: async (input: unknown) => (await memory.callTool(spec.name, input, acting)).text,
      }),
  );
}
