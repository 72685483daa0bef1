#!/usr/bin/env node
/** The `engram` executable: wires the real process into {@link main} and exits with its code. */
import { main } from './main.js';

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

const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  env: process.env,
  stopSignal,
  stdin: process.stdin,
  stdoutStream: process.stdout,
  ...(process.argv[1] === undefined ? {} : { entry: process.argv[1] }),
});
process.exitCode = code;
// Servers and stores are closed by now; should a stray handle (stdin after MCP) keep the loop alive, leave
// anyway once pending output had a moment to flush.
setTimeout(() => process.exit(code), 1000).unref();
