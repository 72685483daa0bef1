/** The CLI's dispatcher: parse, run, and turn every failure into a one-line message and an exit code. */
import { redactConnectionUrls } from '@engram/contracts';
import { parseCommandLine } from './args.js';
import { cliErrorCode } from './errors.js';
import type { CliIo } from './io.js';
import { printable } from './terminal-text.js';
import { appVersion } from './version.js';

/**
 * A failure as one content-free line: Engram errors (`ENGRAM_*` codes) carry fixed messages that name
 * settings, files and codes only (a connection URL in one is printed without its password); anything else is
 * reported by its code or name alone.
 */
export function describeFailure(error: unknown): string {
  const code = cliErrorCode(error);
  if (code !== undefined) {
    const message = error instanceof Error ? error.message.split('\n')[0]?.trim() : '';
    return message === undefined || message === ''
      ? `failed (${code})`
      : `${redactConnectionUrls(message)} (${code})`;
  }
  const nodeCode = (error as { code?: unknown } | null)?.code;
  if (typeof nodeCode === 'string' && /^[A-Z0-9_]+$/.test(nodeCode)) return `unexpected error (${nodeCode})`;
  const name = error instanceof Error && /^[A-Za-z]+$/.test(error.name) ? error.name : 'Error';
  return `unexpected error (${name})`;
}

/**
 * Runs the CLI with the given arguments (without `node` and the script); resolves with the exit code: 0 done,
 * 1 a runtime failure (a typed, content-free line on stderr), 2 invalid arguments (a line and a usage hint).
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandLine(argv, io.cwd);
  if (!parsed.ok) {
    io.stderr.write(`${printable(parsed.message)}\n${parsed.hint}\n`);
    return 2;
  }
  if (parsed.kind === 'help') {
    io.stdout.write(parsed.text);
    return 0;
  }
  if (parsed.kind === 'version') {
    io.stdout.write(`engram ${appVersion()}\n`);
    return 0;
  }
  const { command } = parsed;
  try {
    // Loaded on demand, so help and argument errors answer without loading every package.
    if (command.name === 'demo') return await (await import('./demo.js')).runDemo(io, command);
    return await (await import('./commands.js')).runCommand(io, command);
  } catch (error) {
    io.stderr.write(`engram ${command.name}: ${printable(describeFailure(error))}\n`);
    return 1;
  }
}
