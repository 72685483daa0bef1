import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ToolHandler } from '@engram/retrieval';
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
