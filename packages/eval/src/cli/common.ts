import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { RunProgress } from '../runner.js';

/**
 * Resolves a path the user typed: against `INIT_CWD` when set (pnpm runs package scripts in the package
 * directory, `INIT_CWD` is where the user ran `pnpm`), else against the current directory.
 */
export function resolveUserPath(
  path: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  if (isAbsolute(path)) return path;
  const base = env.INIT_CWD !== undefined && env.INIT_CWD !== '' ? env.INIT_CWD : cwd;
  return resolve(base, path);
}

/** Writes JSON (two-space indented, trailing newline), creating parent directories. */
export function writeJsonFile(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** The result of parsing a CLI's argument list. */
export type ParsedArgs =
  | {
      readonly ok: true;
      readonly positionals: readonly string[];
      readonly flags: ReadonlyMap<string, string | true>;
    }
  | { readonly ok: false; readonly message: string };

/**
 * Parses `argv` (without node and script): positionals, `--flag` and `--flag value` / `--flag=value` for the
 * flags listed in `valued`; unknown flags are errors. A bare `--` (as pnpm may forward) is ignored.
 */
export function parseArgs(
  argv: readonly string[],
  known: { readonly boolean: readonly string[]; readonly valued: readonly string[] },
): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--') continue;
    if (!arg.startsWith('--') || arg === '-') {
      if (arg.startsWith('-') && arg !== '-') {
        if (arg === '-h') {
          flags.set('help', true);
          continue;
        }
        return { ok: false, message: `unknown option ${arg}` };
      }
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (known.boolean.includes(name)) {
      if (eq !== -1) return { ok: false, message: `--${name} takes no value` };
      flags.set(name, true);
    } else if (known.valued.includes(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1);
      if (value === undefined || value === '') return { ok: false, message: `--${name} needs a value` };
      flags.set(name, value);
    } else {
      return { ok: false, message: `unknown option --${name}` };
    }
  }
  return { ok: true, positionals, flags };
}

/**
 * A progress reporter writing lines to a stream (stderr): every load batch, and every `every` queries plus
 * the last one of each variant.
 */
export function progressPrinter(write: (line: string) => void, every = 100): (p: RunProgress) => void {
  return (p) => {
    if (p.phase === 'load') write(`loaded ${p.done}/${p.total} rows`);
    else if (p.done % every === 0 || p.done === p.total) write(`${p.variant}: ${p.done}/${p.total} queries`);
  };
}
