/**
 * Where a report came from: the command that made it, the commit it ran on, when and on what machine. The
 * rendered documents print it beside every table, so a figure always names its run.
 */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { basename } from 'node:path';

export interface RunInfo {
  /** The command as typed, with every path reduced to its file name (no directory of the machine). */
  readonly command: string;
  /** The commit checked out (short hash), or null outside a git checkout. */
  readonly commit: string | null;
  /** Whether the checkout had uncommitted changes to tracked files. */
  readonly dirty: boolean;
  /** When the run started, ISO 8601 in UTC. */
  readonly date: string;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly platform: string;
  };
}

/**
 * The command line with each argument that names a path (it has a `/`) reduced to its last part, and each URL
 * (it may carry a password) replaced by `<url>`.
 */
export function commandLine(script: string, argv: readonly string[]): string {
  const clean = (a: string): string => {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(a)) return '<url>';
    return a.includes('/') ? basename(a) : a;
  };
  const parts = argv
    .filter((a) => a !== '--')
    .map((a) => {
      const eq = a.indexOf('=');
      return a.startsWith('--') && eq > 0 ? `${a.slice(0, eq)}=${clean(a.slice(eq + 1))}` : clean(a);
    });
  return [`pnpm ${script}`, ...parts].join(' ');
}

function git(args: readonly string[], cwd: string): string | null {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/**
 * The command a wrapping script ran under: `ENGRAM_RUN_COMMAND` holds a JSON array `[script, ...args]` (as
 * `pnpm bench:postgres` sets it for the benchmark it starts). Anything else is ignored.
 */
function wrappingCommand(env: NodeJS.ProcessEnv): readonly string[] | null {
  const raw = env.ENGRAM_RUN_COMMAND;
  if (raw === undefined || raw === '') return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (!Array.isArray(parsed) || parsed.length === 0) return null;
    return parsed.every((p) => typeof p === 'string') ? (parsed as string[]) : null;
  } catch {
    return null;
  }
}

/** Reads the run's facts now: call it when the run starts. `cwd` is a folder inside the checkout. */
export function runInfo(
  script: string,
  argv: readonly string[],
  cwd: string = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): RunInfo {
  const wrapping = wrappingCommand(env);
  const commit = git(['rev-parse', '--short=12', 'HEAD'], cwd);
  const status = commit === null ? null : git(['status', '--porcelain', '--untracked-files=no'], cwd);
  const cpu = cpus();
  return {
    command:
      wrapping === null ? commandLine(script, argv) : commandLine(wrapping[0] ?? script, wrapping.slice(1)),
    commit,
    dirty: status !== null && status !== '',
    date: new Date().toISOString(),
    machine: {
      cpus: cpu.length,
      cpuModel: (cpu[0]?.model ?? 'unknown').replace(/\s+/g, ' ').trim(),
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    },
  };
}
