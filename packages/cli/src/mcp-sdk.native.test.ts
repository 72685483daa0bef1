/**
 * `engram mcp` as an MCP client sees it: the official SDK's `Client` over `StdioClientTransport`, driving the
 * built CLI as a child process on a real database file. No hand-written protocol code.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

let dir: string;
let client: Client;
let resourceListChanges = 0;

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_') && key !== 'ENGRAM_KEY') env[key] = value;
  }
  return { ...env, ENGRAM_EMBEDDER: 'deterministic', NO_COLOR: '1' };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-mcp-sdk-'));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--db', join(dir, 'memory.db'), '--agent', 'coder'],
    env: childEnv(),
    stderr: 'ignore',
  });
  client = new Client({ name: 'engram-sdk-test', version: '0.0.0' });
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    resourceListChanges += 1;
  });
  await client.connect(transport);
}, 60_000);

afterAll(async () => {
  await client.close();
  await rm(dir, { recursive: true, force: true });
});

describe('engram mcp through the official MCP SDK client over stdio', () => {
  it('announces tools that never change and resources whose list may', () => {
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.tools).toEqual({ listChanged: false });
    expect(capabilities?.resources).toEqual({ listChanged: true, subscribe: false });
    expect(client.getServerVersion()?.name).toBe('engram');
  });

  it('lists every tool with a title, behaviour hints and an output schema', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect([...byName.keys()]).toEqual(
      expect.arrayContaining(['memory_search', 'memory_remember', 'memory_get', 'skill_write', 'skill_list']),
    );
    expect(byName.get('memory_search')).toMatchObject({
      title: 'Search memory',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      outputSchema: { type: 'object', required: ['ok', 'text'] },
    });
    expect(byName.get('skill_delete')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
    for (const tool of tools) {
      expect(tool.title, tool.name).toMatch(/^[A-Z]/);
      expect(tool.annotations?.openWorldHint, tool.name).toBe(false);
      expect(tool.outputSchema?.properties, tool.name).toHaveProperty('text');
    }
  });

  it('remembers and finds a fact, with structured content beside the text (checked by the SDK)', async () => {
    const remembered = await client.callTool({
      name: 'memory_remember',
      arguments: { content: 'The API server listens on port 8080' },
    });
    expect(remembered.isError).toBe(false);
    const fact = remembered.structuredContent as { ok: boolean; id: string; action: string; text: string };
    expect(fact).toMatchObject({ ok: true, action: 'remembered' });
    expect(remembered.content).toEqual([{ type: 'text', text: fact.text }]);
    expect(fact.text).toContain(fact.id);

    const found = await client.callTool({
      name: 'memory_search',
      arguments: { query: 'which port does the API use' },
    });
    expect(found.isError).toBe(false);
    const { results } = found.structuredContent as {
      results: { id: string; kind: string; content: string }[];
    };
    expect(results[0]).toMatchObject({
      id: fact.id,
      kind: 'fact',
      content: 'The API server listens on port 8080',
    });

    const bad = await client.callTool({ name: 'memory_search', arguments: { query: '' } });
    expect(bad.isError).toBe(true);
    expect(bad.structuredContent).toMatchObject({ ok: false });
    expect((bad.structuredContent as { text: string }).text).toMatch(/at least 1 character\b/);
  });

  it('serves the core memory block and every skill as resources, and says when skills change', async () => {
    const before = await client.listResources();
    expect(before.resources.map((r) => r.uri)).toEqual(['engram://core']);
    const core = await client.readResource({ uri: 'engram://core' });
    expect(core.contents[0]).toMatchObject({ uri: 'engram://core', mimeType: 'text/markdown' });
    expect((core.contents[0] as { text: string }).text).toContain('The API server listens on port 8080');

    const written = await client.callTool({
      name: 'skill_write',
      arguments: {
        name: 'release-check',
        description: 'Before tagging a release.',
        content: '1. run tests\n2. tag',
      },
    });
    expect(written.structuredContent).toMatchObject({ ok: true, skill: 'release-check', action: 'created' });
    await expect.poll(() => resourceListChanges).toBe(1);
    const after = await client.listResources();
    expect(after.resources.map((r) => r.uri)).toEqual(['engram://core', 'engram://skills/release-check']);
    const skill = await client.readResource({ uri: 'engram://skills/release-check' });
    expect((skill.contents[0] as { text: string }).text).toBe(
      '# release-check\n\nBefore tagging a release.\n\n1. run tests\n2. tag\n',
    );
    await expect(client.readResource({ uri: 'engram://skills/nope' })).rejects.toMatchObject({
      code: -32002,
    });
  });
});
