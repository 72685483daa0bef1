/** The long-running subcommands: `serve` (the health page of a file) and `mcp` (the MCP server over stdio). */

import type { Engine as Engram } from '@engram/memory/compose';
import { buildInjection } from '@engram/memory/compose';
import type { Command } from './args-spec.js';
import { EXIT, out, withEngram } from './command-support.js';
import type { CliIo } from './io.js';
import type { McpMemorySource } from './mcp.js';
import { printable } from './terminal-text.js';

/**
 * What `engram serve` says about its figures: store counts are read from the file; runtime figures are the ones
 * every process using the file publishes into it (process beats, a few seconds apart), so the page lists each
 * live process and totals them, this serve process included.
 */
export const SERVE_SCOPE_NOTE =
  'Note: store counts cover the whole file; runtime figures (searches, drains, latencies) cover every live process using the file, as each published them a few seconds ago: the page lists each process and shows their totals.';

export async function serve(io: CliIo, c: Extract<Command, { name: 'serve' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      // Loaded here, not at start: a one-shot command never pays for the health page's modules.
      const { serveHealthPage } = await import('./serve.js');
      // Checked once at start, so the page shows the file's integrity (the check only reads).
      await engram.store.checkIntegrity();
      const { server, fellBackFrom } = await serveHealthPage(engram, c.port);
      if (fellBackFrom !== null) out(io, `Port ${fellBackFrom} is taken; using ${server.port} instead.`);
      out(io, `Health page: ${server.url}`);
      out(io, `Health JSON: ${server.url}api/health`);
      out(io, SERVE_SCOPE_NOTE);
      io.stderr.write('Press Ctrl+C to stop.\n');
      await io.stopSignal;
      await server.close();
      return EXIT.ok;
    },
    { access: 'read' },
  );
}

/** The MCP server's resources, read from the open file. */
function mcpMemorySource(engram: Engram): McpMemorySource {
  return {
    // With a user, the facade's `context(null, { userId })`: the agent's own facts and that user's.
    coreBlock: async (agentId, userId) =>
      (
        await buildInjection({
          store: engram.store,
          agentId,
          ...(userId === null ? {} : { forUser: userId }),
        })
      ).core,
    listSkills: (agentId) => engram.store.listSkills(agentId),
    getSkill: (agentId, name) => engram.store.getSkill(agentId, name),
  };
}

export async function mcp(io: CliIo, c: Extract<Command, { name: 'mcp' }>): Promise<number> {
  return withEngram(
    io,
    c,
    async (engram) => {
      // Loaded here, not at start: the MCP SDK (and its JSON-schema validator) is the CLI's heaviest import.
      const { createMemoryMcpServer, runMcpOverStdio } = await import('./mcp.js');
      const { serveHealthPage } = await import('./serve.js');
      const server = createMemoryMcpServer(engram.tools, c.agent, {
        memory: mcpMemorySource(engram),
        ...(c.user === null ? {} : { userId: c.user }),
      });
      const whose = c.user === null ? `agent ${c.agent}` : `agent ${c.agent} for user ${c.user}`;
      io.stderr.write(
        printable(
          `engram mcp: serving the memory tools of ${whose} over stdio (${engram.embedderLabel})\n`,
          'lines',
        ),
      );
      // The health page of this process: its runtime figures are the MCP server's own. stdout is the
      // protocol's, so the address goes to stderr.
      const page = c.healthPort === null ? null : await serveHealthPage(engram, c.healthPort);
      if (page !== null) {
        const { server: http, fellBackFrom } = page;
        const fellBack = fellBackFrom === null ? '' : ` (port ${fellBackFrom} is taken)`;
        io.stderr.write(
          `engram mcp: health page of this server's process at ${http.url}${fellBack}; JSON at ${http.url}api/health\n`,
        );
      }
      try {
        await runMcpOverStdio(server, io.stopSignal, {
          ...(io.stdin === undefined ? {} : { stdin: io.stdin }),
          ...(io.stdoutStream === undefined ? {} : { stdout: io.stdoutStream }),
        });
      } finally {
        await page?.server.close();
      }
      return EXIT.ok;
    },
    // The tools may write (memory_remember, skill_write), so the server opens for writing; the store still
    // refuses a file that is not an Engram store before writing anything to it.
    { access: 'write', creates: true, warm: true },
  );
}
