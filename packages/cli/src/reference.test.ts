/**
 * The CLI and MCP docs cannot drift from the code: `docs/cli.md` is what the option table and the tools
 * render, and the CLI README and `engram mcp --help` name every command and every tool that exists.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MEMORY_TOOL_NAMES } from '@engram/memory/compose';
import { describe, expect, it } from 'vitest';
import { commandHelp } from './args-help.js';
import { COMMAND_NAMES, SPECS } from './args-spec.js';
import { CLI_REFERENCE_PATH, renderCliReference } from './reference.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string): string => readFileSync(`${root}${path}`, 'utf8');

describe('the command reference', () => {
  it('is exactly what the code renders (run pnpm --filter @engram/cli docs:reference after a change)', () => {
    expect(read(CLI_REFERENCE_PATH)).toBe(renderCliReference());
  });

  it('names every command, every option of it, and every MCP tool', () => {
    const reference = renderCliReference();
    for (const name of COMMAND_NAMES) {
      expect(reference).toContain(`## engram ${name}`);
      for (const option of Object.keys(SPECS[name].options)) expect(reference).toContain(`--${option}`);
    }
    for (const tool of MEMORY_TOOL_NAMES) expect(reference).toContain(`| \`${tool}\` |`);
  });
});

describe('the CLI README and help', () => {
  it('show every command', () => {
    const readme = read('packages/cli/README.md');
    const missing = COMMAND_NAMES.filter((name) => !readme.includes(`engram ${name}`));
    expect(missing).toEqual([]);
  });

  it('list every MCP tool, in the README and in engram mcp --help', () => {
    const readme = read('packages/cli/README.md');
    const help = commandHelp('mcp');
    expect(MEMORY_TOOL_NAMES.filter((t) => !readme.includes(`\`${t}\``))).toEqual([]);
    expect(MEMORY_TOOL_NAMES.filter((t) => !help.includes(t))).toEqual([]);
  });
});
