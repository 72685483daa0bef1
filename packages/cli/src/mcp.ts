/**
 * `engram mcp`: a Model Context Protocol server over stdio for one agent.
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
  /** The agent's core memory block (empty when it has no fact yet). */
  coreBlock(agentId: string): Promise<string>;
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

/** Creates the MCP server for one agent's memory tools and resources (not yet connected). */
export function createMemoryMcpServer(
  tools: ToolHandler,
  agentId: string,
  options: { readonly info?: McpServerInfo; readonly memory?: McpMemorySource } = {},
): MemoryMcpServer {
  const memory = options.memory;
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
      agentId,
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
  if (memory !== undefined) registerResources(server, agentId, memory);
  return server;
}

function registerResources(server: Server, agentId: string, memory: McpMemorySource): void {
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const skills = await memory.listSkills(agentId);
    return {
      resources: [
        {
          uri: CORE_RESOURCE_URI,
          name: 'core',
          title: 'Core memory',
          description:
            "The agent's core memory block: its most important facts, the text an application injects before a model call.",
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
      const core = await memory.coreBlock(agentId);
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
