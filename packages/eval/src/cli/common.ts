import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isEngramProviderError } from '@engram/provider-openai';
import {
  createEvalEmbedder,
  EVAL_EMBEDDER_NAMES,
  type EvalEmbedderName,
  isEvalEmbedderName,
  type NamedEvalEmbedder,
} from '../embedders.js';
import { isEngramEvalError } from '../errors.js';
import { formatReportTable, type RetrievalReport } from '../report.js';
import { createEvalReranker, EVAL_RERANKER_NAMES, isEvalRerankerName } from '../rerankers.js';
import type { RunFixtureConfig, RunProgress } from '../runner.js';
import { openVectorCache, type VectorCache } from '../vector-cache.js';

/** Where a CLI writes: the table and help go to `out` (stdout), everything else to `err` (stderr). */
export interface CliOutput {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

const PROCESS_OUTPUT: CliOutput = {
  out: (text) => {
    process.stdout.write(text);
  },
  err: (text) => {
    process.stderr.write(text);
  },
};

/** The store of a run from `--store`: a PostgreSQL URL as it is, a SQLite file resolved like every path. */
export function storeOption(
  value: string | true | undefined,
): { readonly storePath: string } | { readonly storeUrl: string } | Record<string, never> {
  if (typeof value !== 'string') return {};
  return /^postgres(ql)?:\/\//.test(value) ? { storeUrl: value } : { storePath: resolveUserPath(value) };
}

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
export function parseArgs(argv: readonly string[], known: KnownFlags): ParsedArgs {
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

/** The flags a CLI knows: `boolean` ones stand alone, `valued` ones take a value. */
export interface KnownFlags {
  readonly boolean: readonly string[];
  readonly valued: readonly string[];
}

/**
 * Parses a CLI's arguments like {@link parseArgs} and handles the common outcomes: `--help` / `-h` prints the
 * usage on `out` and gives exit code 0; a parse error prints the message and the usage on `err` and gives 2.
 * Otherwise returns the parsed arguments for the CLI to go on with.
 */
export function parseCliArgs(
  argv: readonly string[],
  known: KnownFlags,
  usage: string,
  output: CliOutput = PROCESS_OUTPUT,
): Extract<ParsedArgs, { ok: true }> | { readonly ok: false; readonly exitCode: number } {
  const args = parseArgs(argv, known);
  if (!args.ok) {
    output.err(`${args.message}\n${usage}\n`);
    return { ok: false, exitCode: 2 };
  }
  if (args.flags.has('help')) {
    output.out(`${usage}\n`);
    return { ok: false, exitCode: 0 };
  }
  return args;
}

/**
 * The line a CLI prints for an error that ended it. An `EngramEvalError` shows its code and message (they
 * never quote content); any other error shows its name and code only, unless `showMessage` is set (the
 * benchmark, which handles no user content), because driver messages may quote the data.
 */
export function describeCliError(command: string, error: unknown, showMessage = false): string {
  // Both packages' messages name settings, paths and counts, never content or a setting's value.
  if (isEngramEvalError(error) || isEngramProviderError(error)) return `${error.code}: ${error.message}`;
  const { code, name, message } = (typeof error === 'object' && error !== null ? error : {}) as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
  };
  const codePart = typeof code === 'string' ? ` (${code})` : '';
  const detail =
    showMessage && typeof message === 'string' ? message : typeof name === 'string' ? name : 'Error';
  return `${command} failed${codePart}: ${detail}`;
}

/**
 * Runs a CLI's `main` on the process arguments: its result becomes the exit code; an error it throws is
 * printed with {@link describeCliError} and gives exit code 1.
 */
export function runCli(
  command: string,
  main: (argv: readonly string[]) => Promise<number>,
  options: { readonly showErrorMessages?: boolean } = {},
): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`${describeCliError(command, error, options.showErrorMessages ?? false)}\n`);
      process.exitCode = 1;
    },
  );
}

/**
 * The end of an evaluation CLI: writes the report (creating directories), prints its table on `out` and
 * logs where it went and how long the run took (`startedMs` from `performance.now()`).
 */
export function finishReport(
  report: RetrievalReport,
  reportPath: string,
  startedMs: number,
  output: CliOutput = PROCESS_OUTPUT,
  nowMs: number = performance.now(),
): void {
  writeJsonFile(reportPath, report);
  output.out(`${formatReportTable(report)}\n`);
  output.err(`report written to ${reportPath} (${((nowMs - startedMs) / 1000).toFixed(1)} s)\n`);
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

/** The default vector cache directory: `node_modules/.cache/engram-eval` under where pnpm was run. */
export function defaultCacheDirectory(
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  return resolveUserPath('node_modules/.cache/engram-eval', env, cwd);
}

/** The flags both evaluation CLIs take to choose the embedder and its vector cache. */
export const EMBEDDER_FLAGS: KnownFlags = {
  boolean: ['no-cache', 'no-concepts'],
  valued: ['embedder', 'cache', 'threads'],
};

/** The usage lines of {@link EMBEDDER_FLAGS}. */
export const EMBEDDER_USAGE: string = `  --embedder <${EVAL_EMBEDDER_NAMES.join('|')}>
                         the embedder of the vector arm (default deterministic); openai reads the
                         ENGRAM_OPENAI_* variables of the engram CLI (base URL, key, embedding model, dimensions);
                         local (@engram/local-onnx) reads ENGRAM_LOCAL_EMBEDDING_MODEL (a directory or a hub id,
                         never downloaded unless ENGRAM_LOCAL_EMBEDDING_ALLOW_DOWNLOAD=true),
                         ENGRAM_LOCAL_EMBEDDING_DIMENSIONS, optional ENGRAM_LOCAL_EMBEDDING_POOLING (mean|cls)
                         and ENGRAM_LOCAL_EMBEDDING_PREFIX (before every text, e.g. "query: ")
  --cache <dir>          vector cache directory (default node_modules/.cache/engram-eval where pnpm ran)
  --no-cache             embed everything, read and write no cache
  --no-concepts          the deterministic embedder without its synonym concepts (the ablation)
  --threads <n>          worker threads of --embedder use, 0..64 (default: one per core, at most 64 — the
                         library's own default is one fewer; 0: the calling thread)`;

/** The embedder a CLI run uses and its open vector cache (absent with `--no-cache`). */
export interface CliEmbedder {
  readonly named: NamedEvalEmbedder;
  readonly cache?: VectorCache;
}

/**
 * Reads `--embedder`, `--cache`, `--no-cache` and `--no-concepts`: a message for a wrong combination (the CLI
 * exits 2 with it), else the created embedder and its opened cache.
 */
export async function embedderFromFlags(
  flags: ReadonlyMap<string, string | true>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CliEmbedder | { readonly message: string }> {
  const raw = flags.get('embedder') ?? 'deterministic';
  if (typeof raw !== 'string' || !isEvalEmbedderName(raw)) {
    return { message: `unknown embedder; expected one of ${EVAL_EMBEDDER_NAMES.join(', ')}` };
  }
  const name: EvalEmbedderName = raw;
  const noConcepts = flags.has('no-concepts');
  if (noConcepts && name !== 'deterministic')
    return { message: '--no-concepts needs --embedder deterministic' };
  const cacheFlag = flags.get('cache');
  if (flags.has('no-cache') && cacheFlag !== undefined)
    return { message: '--cache and --no-cache exclude each other' };
  const threadsFlag = flags.get('threads');
  let threads: number | undefined;
  if (threadsFlag !== undefined) {
    if (name !== 'use') return { message: '--threads needs --embedder use' };
    threads = Number(threadsFlag);
    if (typeof threadsFlag !== 'string' || !Number.isInteger(threads) || threads < 0 || threads > 64)
      return { message: '--threads must be an integer from 0 to 64' };
  }
  const named = await createEvalEmbedder(name, {
    conceptFeatures: !noConcepts,
    env,
    ...(threads === undefined ? {} : { threads }),
  });
  if (flags.has('no-cache')) return { named };
  const directory =
    typeof cacheFlag === 'string' ? resolveUserPath(cacheFlag, env) : defaultCacheDirectory(env);
  const cache = openVectorCache(directory, {
    id: named.cacheId,
    dimensions: named.embedder.profile.dimensions,
  });
  return { named, cache };
}

/** Logs the embedder's profile and the cache in use (paths and counts only). */
export function logEmbedder(log: (line: string) => void, chosen: CliEmbedder): void {
  const { profile } = chosen.named.embedder;
  const { threads } = chosen.named.embedder as { readonly threads?: unknown };
  const on = typeof threads === 'number' ? `, ${threads} worker thread(s)` : '';
  log(`embedder ${chosen.named.name}: ${profile.id}, ${profile.dimensions}d${on}`);
  log(
    chosen.cache === undefined
      ? 'vector cache: off'
      : `vector cache: ${chosen.cache.directory} (${chosen.cache.loaded} vectors)`,
  );
}

/** The flags both evaluation CLIs take to add a rerank stage. */
export const RERANK_FLAGS: KnownFlags = {
  boolean: [],
  valued: ['rerank', 'rerank-candidates', 'rerank-timeout'],
};

/** The usage lines of {@link RERANK_FLAGS}. */
export const RERANK_USAGE: string = `  --rerank <${EVAL_RERANKER_NAMES.join('|')}>         rerank the fused head of every retriever variant (default none); http reads
                         ENGRAM_RERANK_BASE_URL, ENGRAM_RERANK_MODEL, ENGRAM_RERANK_API_KEY, ENGRAM_RERANK_FLAVOR;
                         local (@engram/local-onnx) reads ENGRAM_RERANK_MODEL (a directory or a hub id, never
                         downloaded unless ENGRAM_RERANK_ALLOW_DOWNLOAD=true)
  --rerank-candidates <n> fused results reranked (default 20)
  --rerank-timeout <ms>  budget of one rerank call (default 1000; a query over it fails the run)`;

/** The rerank stage a CLI run adds (see `RunFixtureConfig.rerank`). */
export type CliRerank = NonNullable<RunFixtureConfig['rerank']>;

/**
 * Reads `--rerank`, `--rerank-candidates` and `--rerank-timeout`: undefined without `--rerank`, a message for
 * a wrong value (the CLI exits 2 with it), else the created reranker and its budget.
 */
export async function rerankFromFlags(
  flags: ReadonlyMap<string, string | true>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CliRerank | { readonly message: string } | undefined> {
  const raw = flags.get('rerank');
  if (raw === undefined) {
    if (flags.has('rerank-candidates') || flags.has('rerank-timeout'))
      return { message: '--rerank-candidates and --rerank-timeout need --rerank' };
    return undefined;
  }
  if (typeof raw !== 'string' || !isEvalRerankerName(raw)) {
    return { message: `unknown reranker; expected one of ${EVAL_RERANKER_NAMES.join(', ')}` };
  }
  const int = (key: string, max: number): number | undefined | null => {
    const value = flags.get(key);
    if (value === undefined) return undefined;
    const n = Number(value);
    return typeof value === 'string' && Number.isSafeInteger(n) && n >= 1 && n <= max ? n : null;
  };
  const candidates = int('rerank-candidates', 100);
  if (candidates === null) return { message: '--rerank-candidates must be an integer in 1..100' };
  const timeoutMs = int('rerank-timeout', 600_000);
  if (timeoutMs === null) return { message: '--rerank-timeout must be an integer in 1..600000' };
  const named = await createEvalReranker(raw, env);
  return {
    name: named.name,
    model: named.reranker,
    ...(candidates === undefined ? {} : { candidates }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}
