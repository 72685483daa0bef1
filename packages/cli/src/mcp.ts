/**
 * `engram mcp`: a Model Context Protocol server over stdio for one agent, and optionally one user of it.
 *
 * - Scope: fixed when the server is created (`agentId`, and `userId` with `engram mcp --user`). Every tool call
 *   runs in it, as the facade's `callTool(name, args, { agentId, userId })` does: reads see the agent's own
 *   memories and that user's, never another user's; writes carry that user; another user's memory is not
 *   found; skills (shared by the agent's users) are read-only to a user-scoped server. The tools' input
 *   schemas are strict, so an argument naming an agent or a user (`userId`, `agentId`, …) is refused, never
 *   a way to widen the scope.
 *
 * - Tools: the memory tools of the retrieval tool handler, their input schemas derived from zod there, each
 *   with a title, behaviour hints and an output schema (`mcp-tools.ts`); every call runs through
 *   `tools.execute` and answers with text and the same answer as `structuredContent`. The tool list never
 *   changes while the server runs (`listChanged: false`).
 * - Resources: the agent's core memory block (`engram://core`, the facts an application injects before each
 *   model call) and one resource per skill (`engram://skills/<name>`). Writing or deleting a skill through a
 *   tool changes that list, and the server says so (`notifications/resources/list_changed`).
 *
 * stdout carries protocol messages only.
 */

import type { ToolHandler } from '@engram/memory/compose';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { toolAnnotations, toolOutputSchema } from './mcp-tools.js';
import { StrictStdioTransport } from './mcp-transport.js';
import { printable } from './terminal-text.js';
import { appVersion } from './version.js';

/** Name and version the server announces. */
export interface McpServerInfo {
  readonly name: 'engram';
  readonly version: string;
}

/** What the resources are read from, for the server's one agent. */
export interface McpMemorySource {
  /**
   * The agent's core memory block (empty when it has no fact yet); with a user, the block of the agent's own
   * facts and that user's (the facade's `context(null, { userId })`).
   */
  coreBlock(agentId: string, userId: string | null): Promise<string>;
  listSkills(agentId: string): Promise<readonly { readonly name: string; readonly description: string }[]>;
  getSkill(
    agentId: string,
    name: string,
  ): Promise<{ readonly name: string; readonly description: string; readonly content: string } | null>;
}

/** The MCP server of {@link createMemoryMcpServer}: connect it to a transport, close it when done. */
export type MemoryMcpServer = Server;

/** URI of the core memory block resource. */
export const CORE_RESOURCE_URI = 'engram://core';
/** URI prefix of the skill resources (`engram://skills/<name>`). */
export const SKILL_RESOURCE_PREFIX = 'engram://skills/';
/** JSON-RPC error code of a resource that does not exist (as the MCP specification names it). */
const RESOURCE_NOT_FOUND = -32002;
/** Tools whose success changes the resource list. */
const SKILL_TOOLS: ReadonlySet<string> = new Set(['skill_write', 'skill_delete']);

/** What the server announces: the app's name and the version in its package.json (or the one at `manifest`). */
export function mcpServerInfo(manifest?: URL): McpServerInfo {
  return { name: 'engram', version: manifest === undefined ? appVersion() : appVersion(manifest) };
}

/** Every string in a JSON value made safe for a terminal (control characters become `?`, lines stay). */
function printableDeep(value: unknown): unknown {
  if (typeof value === 'string') return printable(value, 'lines');
  if (Array.isArray(value)) return value.map(printableDeep);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, printableDeep(v)]));
  }
  return value;
}

/**
 * Creates the MCP server for one agent's memory tools and resources (not yet connected); with `userId`, for
 * that user of the agent only.
 */
export function createMemoryMcpServer(
  tools: ToolHandler,
  agentId: string,
  options: {
    readonly info?: McpServerInfo;
    readonly memory?: McpMemorySource;
    readonly userId?: string;
  } = {},
): MemoryMcpServer {
  const memory = options.memory;
  const userId = options.userId ?? null;
  // The scope of every call: fixed here, never read from a request.
  const scope = Object.freeze(userId === null ? { agentId } : { agentId, userId });
  const server = new Server(
    { ...(options.info ?? mcpServerInfo()) },
    {
      capabilities: {
        tools: { listChanged: false },
        ...(memory === undefined ? {} : { resources: { listChanged: true, subscribe: false } }),
      },
      instructions:
        'Long-term memory. Call memory_search before answering questions about past work, preferences or files; call memory_remember for durable facts worth keeping.',
    },
  );
  // The tool schemas are JSON Schema already (derived from zod in @engram/tools): serve them as they are.
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.definitions.map((d) => {
      const annotations = toolAnnotations(d.name);
      return {
        name: d.name,
        title: annotations.title,
        description: d.description,
        inputSchema: { ...d.inputSchema, type: 'object' as const },
        outputSchema: toolOutputSchema(d.name),
        annotations,
      };
    }),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const name = request.params.name;
    const result = await tools.execute(name, request.params.arguments ?? {}, {
      ...scope,
      signal: extra.signal,
    });
    if (result.ok && memory !== undefined && SKILL_TOOLS.has(name)) {
      await server.sendResourceListChanged().catch(() => undefined);
    }
    // Results reach a client that may show them in a terminal: control characters (an OSC 52 clipboard
    // write, a CSI recolouring) become `?`, line feeds and tabs stay.
    const text = printable(result.text, 'lines');
    return {
      content: [{ type: 'text' as const, text }],
      structuredContent: { ...(printableDeep(result.data ?? {}) as object), ok: result.ok, text },
      isError: !result.ok,
    };
  });
  if (memory !== undefined) registerResources(server, agentId, userId, memory);
  return server;
}

function registerResources(
  server: Server,
  agentId: string,
  userId: string | null,
  memory: McpMemorySource,
): void {
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const skills = await memory.listSkills(agentId);
    return {
      resources: [
        {
          uri: CORE_RESOURCE_URI,
          name: 'core',
          title: 'Core memory',
          description:
            userId === null
              ? "The agent's core memory block: its most important facts, the text an application injects before a model call."
              : "The core memory block of this user: the agent's own most important facts and the user's, the text an application injects before a model call.",
          mimeType: 'text/markdown',
        },
        ...skills.map((skill) => ({
          uri: `${SKILL_RESOURCE_PREFIX}${encodeURIComponent(skill.name)}`,
          name: skill.name,
          title: `Skill: ${skill.name}`,
          description: printable(skill.description, 'lines'),
          mimeType: 'text/markdown',
        })),
      ],
    };
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri;
    if (uri === CORE_RESOURCE_URI) {
      const core = await memory.coreBlock(agentId, userId);
      const text = core === '' ? 'No facts yet.\n' : core;
      return { contents: [{ uri, mimeType: 'text/markdown', text: printable(text, 'lines') }] };
    }
    if (uri.startsWith(SKILL_RESOURCE_PREFIX)) {
      let name: string | null = null;
      try {
        name = decodeURIComponent(uri.slice(SKILL_RESOURCE_PREFIX.length));
      } catch {
        name = null;
      }
      // A name the store refuses (too long, bad characters) is a skill that does not exist.
      const skill =
        name === null || name === '' ? null : await memory.getSkill(agentId, name).catch(() => null);
      if (skill !== null) {
        const text = `# ${skill.name}\n\n${skill.description}\n\n${skill.content}\n`;
        return { contents: [{ uri, mimeType: 'text/markdown', text: printable(text, 'lines') }] };
      }
    }
    // A fixed message: the URI is the client's input and is not echoed.
    throw new McpError(RESOURCE_NOT_FOUND, 'resource not found');
  });
}

/** Connects the server to stdio and resolves when the transport closes (stdin ended) or `stop` resolves. */
export async function runMcpOverStdio(
  mcp: MemoryMcpServer,
  stop: Promise<void>,
  streams: { readonly stdin?: NodeJS.ReadableStream; readonly stdout?: NodeJS.WritableStream } = {},
): Promise<void> {
  const transport = new StrictStdioTransport(
    streams.stdin ?? process.stdin,
    streams.stdout ?? process.stdout,
  );
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await mcp.connect(transport);
  const ended = new Promise<void>((resolve) => {
    (streams.stdin ?? process.stdin).once('end', () => resolve());
  });
  await Promise.race([closed, ended, stop]);
  await mcp.close();
}
