/**
 * `engram mcp`: a Model Context Protocol server over stdio exposing the memory tools of the retrieval tool
 * handler. The tool list comes from the handler's zod-derived JSON Schemas; every call runs through
 * `tools.execute` for one agent. stdout carries protocol messages only.
 */

import type { ToolHandler } from '@engram/retrieval';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { StrictStdioTransport } from './mcp-transport.js';
import { printable } from './terminal-text.js';
import { appVersion } from './version.js';

/** Name and version the server announces. */
export interface McpServerInfo {
  readonly name: 'engram';
  readonly version: string;
}

/** What the server announces: the app's name and the version in its package.json (or the one at `manifest`). */
export function mcpServerInfo(manifest?: URL): McpServerInfo {
  return { name: 'engram', version: manifest === undefined ? appVersion() : appVersion(manifest) };
}

/** Creates the MCP server for one agent's memory tools (not yet connected). */
export function createMemoryMcpServer(
  tools: ToolHandler,
  agentId: string,
  info: McpServerInfo = mcpServerInfo(),
): McpServer {
  const mcp = new McpServer(
    { ...info },
    {
      capabilities: { tools: {} },
      instructions:
        'Long-term memory. Call memory_search before answering questions about past work, preferences or files; call memory_remember for durable facts worth keeping.',
    },
  );
  // The tool schemas are JSON Schema already (derived from zod in @engram/retrieval): serve them as they are
  // through the protocol-level handlers instead of re-declaring them.
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.definitions.map((d) => ({
      name: d.name,
      description: d.description,
      inputSchema: { ...d.inputSchema, type: 'object' as const },
    })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const result = await tools.execute(request.params.name, request.params.arguments ?? {}, {
      agentId,
      signal: extra.signal,
    });
    // Text results reach a client that may show them in a terminal: control characters (an OSC 52 clipboard
    // write, a CSI recolouring) become `?`, line feeds and tabs stay.
    return {
      content: [{ type: 'text' as const, text: printable(result.text, 'lines') }],
      isError: !result.ok,
    };
  });
  return mcp;
}

/** Connects the server to stdio and resolves when the transport closes (stdin ended) or `stop` resolves. */
export async function runMcpOverStdio(
  mcp: McpServer,
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
