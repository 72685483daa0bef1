/** Wires the real process into {@link main}: the `engram` bin and any app that embeds the CLI run through it. */
import { fileURLToPath } from 'node:url';
import { main } from './main.js';

/** This package's bin, named in follow-up commands when an app (not the bin) runs the CLI. */
const BIN = fileURLToPath(new URL('./cli.js', import.meta.url));

/**
 * Runs the CLI on this process's stdio with `argv` (without `node` and the script), sets the exit code and
 * resolves with it. Stops on SIGINT/SIGTERM; leaves the process shortly after, should a stray handle remain.
 */
export async function runEngram(argv: readonly string[]): Promise<number> {
  // A reader that went away (`engram search … | head -1`) closes the pipe: nothing more can be shown, so leave
  // quietly instead of dying on an unhandled EPIPE 'error' event with a stack trace.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }

  const stopSignal = new Promise<void>((resolve) => {
    const stop = (): void => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

  const code = await main(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    env: process.env,
    stopSignal,
    stdin: process.stdin,
    stdoutStream: process.stdout,
    entry: binEntry(process.argv[1]),
  });
  process.exitCode = code;
  // Servers and stores are closed by now; should a stray handle (stdin after MCP) keep the loop alive, leave
  // anyway once pending output had a moment to flush.
  setTimeout(() => process.exit(code), 1000).unref();
  return code;
}

/** The script to name in follow-up commands: the running `engram` bin, else this package's own bin. */
function binEntry(script: string | undefined): string {
  return script !== undefined && /(^|[\\/])(engram(\.cmd)?|cli\.js)$/.test(script) ? script : BIN;
}
