/** Runs a Node script as a child process and collects what it printed. */
import { spawn } from 'node:child_process';

/** How a child ended: its exit code (null when killed by a signal) and everything it printed. */
export interface ChildRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link runNode}. */
export interface RunNodeOptions {
  readonly cwd?: string;
  /** The child's whole environment (default: this process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** Runs `node script ...args` with no standard input and resolves when it has exited. */
export function runNode(
  script: string,
  args: readonly string[],
  options: RunNodeOptions = {},
): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: { ...(options.env ?? process.env) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
