/**
 * The MCP example of corrections, through the official SDK client over stdio against the built CLI: "the API
 * listens on port 8080" then "… 9090" are both kept, linked as conflicting, and search says which is current;
 * memory_update and memory_forget settle it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'engram-mcp-facts-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('ENGRAM_OPENAI_')) env[key] = value;
  }
  env.NO_COLOR = '1';
  return env;
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text: string }[])[0]?.text ?? '';
}

describe('engram mcp: corrections', () => {
  it('keeps "port 8080" and "port 9090" linked as conflicting, says which is current, and settles it', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--db', join(dir, 'facts.db'), '--agent', 'coder'],
      cwd: dir,
      env: childEnv(),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'engram-test', version: '0.0.0' });
    await client.connect(transport);
    try {
      const call = (name: string, args: Record<string, unknown>) =>
        client.callTool({ name, arguments: args });
      const first = textOf(await call('memory_remember', { content: 'the API listens on port 8080' }));
      const oldId = /^Remembered as fact (\S+?)\./.exec(first)?.[1];
      const second = textOf(await call('memory_remember', { content: 'the API listens on port 9090' }));
      const newId = /^Remembered as fact (\S+?)\./.exec(second)?.[1];
      expect(oldId).toBeDefined();
      expect(newId).toBeDefined();
      expect(second).toContain(`It contradicts fact ${oldId} (different number) on the same subject`);

      const found = textOf(await call('memory_search', { query: 'which port does the API listen on' }));
      expect(found).toContain(`"the API listens on port 9090" [current: contradicts older fact ${oldId}]`);
      expect(found).toContain(
        `"the API listens on port 8080" [conflicting: contradicted by newer fact ${newId}]`,
      );

      // The agent settles it: the old statement is forgotten; search shows one current fact.
      const forgot = await call('memory_forget', { id: oldId, reason: 'moved to 9090' });
      expect(forgot.isError).toBe(false);
      const after = textOf(await call('memory_search', { query: 'which port does the API listen on' }));
      expect(after).toMatch(/^1 memory/);
      expect(after).toContain('the API listens on port 9090');
      expect(after).not.toContain('conflict');

      const updated = textOf(
        await call('memory_update', { id: newId, content: 'the API listens on port 9443' }),
      );
      expect(updated).toMatch(new RegExp(`^Updated: fact \\S+ is current; ${newId} is superseded`));
      const latest = textOf(await call('memory_search', { query: 'which port does the API listen on' }));
      expect(latest).toContain('the API listens on port 9443');
      expect(latest).not.toContain('9090');
    } finally {
      await client.close();
    }
  });
});
