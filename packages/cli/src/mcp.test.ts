import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ToolHandler } from '@engram/memory/compose';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryMcpServer, mcpServerInfo } from './mcp.js';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** A tool handler without tools: the version handshake needs none. */
const noTools: ToolHandler = {
  definitions: [],
  execute: () => Promise.resolve({ ok: false, text: 'no tools' }),
};

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe('the MCP server version', () => {
  it("announces the version of the app's package.json to a connecting client", async () => {
    const server = createMemoryMcpServer(noTools, 'coder');
    const client = new Client({ name: 'engram-test', version: '0.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    try {
      expect(client.getServerVersion()).toMatchObject({ name: 'engram', version: manifest.version });
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('reads the version from the package.json at run time, not from a constant in the source', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engram-mcp-version-'));
    dirs.push(dir);
    const file = join(dir, 'package.json');
    await writeFile(file, JSON.stringify({ name: '@engram/cli', version: '3.1.4-next.2' }));
    expect(mcpServerInfo(pathToFileURL(file))).toEqual({ name: 'engram', version: '3.1.4-next.2' });
  });
});

describe('the MCP tool list and answers', () => {
  /** One known tool and one the server's table does not know, answering with a terminal escape in them. */
  const handler: ToolHandler = {
    definitions: [
      { name: 'memory_search', description: 'Search.', inputSchema: { type: 'object', properties: {} } },
      {
        name: 'memory_teleport' as 'memory_search',
        description: 'A tool added later.',
        inputSchema: { type: 'object', properties: {} },
      },
    ],
    execute: (name) =>
      Promise.resolve(
        name === 'memory_search'
          ? {
              ok: true,
              text: '1 memory:\n\u001b]52;c;evil\u0007x',
              data: {
                results: [
                  {
                    id: 'm1',
                    kind: 'fact',
                    createdAt: '2026-01-01T00:00:00.000Z',
                    score: 1,
                    content: 'a\u001b[31mb',
                  },
                ],
                lexicalOnly: true,
              },
            }
          : { ok: false, text: 'memory_teleport failed.' },
      ),
  };

  async function connected(): Promise<{ client: Client; close: () => Promise<void> }> {
    const server = createMemoryMcpServer(handler, 'coder');
    const client = new Client({ name: 'engram-test', version: '0.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    return {
      client,
      close: async () => {
        await client.close();
        await server.close();
      },
    };
  }

  it('gives a tool it does not know a title and the most cautious hints, never read-only', async () => {
    const { client, close } = await connected();
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'memory_teleport')).toMatchObject({
        title: 'Memory teleport',
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: false,
        },
        outputSchema: { type: 'object', required: ['ok', 'text'] },
      });
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
      expect(client.getServerCapabilities()?.resources).toBeUndefined();
    } finally {
      await close();
    }
  });

  it('makes text and structured content safe for a terminal, and reports a failure in both', async () => {
    const { client, close } = await connected();
    try {
      await client.listTools();
      const found = await client.callTool({ name: 'memory_search', arguments: {} });
      expect(found.content).toEqual([{ type: 'text', text: '1 memory:\n?]52;c;evil?x' }]);
      expect(found.structuredContent).toEqual({
        ok: true,
        text: '1 memory:\n?]52;c;evil?x',
        results: [
          { id: 'm1', kind: 'fact', createdAt: '2026-01-01T00:00:00.000Z', score: 1, content: 'a?[31mb' },
        ],
        lexicalOnly: true,
      });
      const failed = await client.callTool({ name: 'memory_teleport', arguments: {} });
      expect(failed.isError).toBe(true);
      expect(failed.structuredContent).toEqual({ ok: false, text: 'memory_teleport failed.' });
    } finally {
      await close();
    }
  });
});

describe('the MCP server scope', () => {
  it("runs every call in the server's agent and user, whatever the arguments name", async () => {
    const seen: unknown[] = [];
    const recorder: ToolHandler = {
      definitions: [
        { name: 'memory_search', description: 'Search.', inputSchema: { type: 'object', properties: {} } },
      ],
      execute: (_name, _args, ctx) => {
        seen.push({ agentId: ctx.agentId, userId: ctx.userId });
        return Promise.resolve({ ok: true, text: 'ok' });
      },
    };
    const server = createMemoryMcpServer(recorder, 'coder', { userId: 'bob' });
    const client = new Client({ name: 'engram-test', version: '0.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
    try {
      for (const args of [
        { query: 'x' },
        { query: 'x', userId: 'alice', agentId: 'other' },
        { query: 'x', user_id: 'alice' },
        JSON.parse('{"query":"x","__proto__":{"userId":"alice","agentId":"other"}}') as object,
      ]) {
        await client.callTool({ name: 'memory_search', arguments: args as Record<string, unknown> });
      }
      expect(seen).toEqual(Array.from({ length: 4 }, () => ({ agentId: 'coder', userId: 'bob' })));
    } finally {
      await client.close();
      await server.close();
    }
  });
});
