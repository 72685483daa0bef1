/**
 * The `engram` command line: subcommand specs, strict parsing (`node:util` `parseArgs`), zod validation of
 * every value, and help texts. Pure: no I/O, no native code — the CLI decides what to print and how to exit.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { isValidTag, MAX_AGENT_ID_LENGTH } from '@engram/contracts';
import { z } from 'zod';

/** Subcommands of the CLI, in the order the help lists them. */
export const COMMAND_NAMES = [
  'demo',
  'remember',
  'search',
  'get',
  'ingest',
  'drain',
  'maintain',
  'health',
  'serve',
  'mcp',
] as const;
/** A subcommand name. */
export type CommandName = (typeof COMMAND_NAMES)[number];

/** Default database file, relative to the working directory. */
export const DEFAULT_DB = '.engram/engram.db';
/** Default database file of `engram demo`, relative to the working directory. */
export const DEFAULT_DEMO_DB = '.engram/demo.db';
/** Default agent id. */
export const DEFAULT_AGENT = 'default';
/** Default port of the health page. */
export const DEFAULT_PORT = 4319;
/** Default number of search results. */
export const DEFAULT_SEARCH_LIMIT = 5;

/** An archive pointer `session/<sessionId>#<from>-<to>` as `memory_search` prints it. */
export interface ArchivePointer {
  readonly sessionId: string;
  readonly from: number;
  readonly to: number;
}

/** A validated invocation of one subcommand. */
export type Command =
  | { readonly name: 'demo'; readonly db: string; readonly port: number; readonly serve: boolean }
  | {
      readonly name: 'remember';
      readonly db: string;
      readonly agent: string;
      readonly content: string;
      readonly topic: string | null;
    }
  | {
      readonly name: 'search';
      readonly db: string;
      readonly agent: string;
      readonly query: string;
      readonly limit: number;
      readonly tags: readonly string[];
      readonly explain: boolean;
      readonly json: boolean;
    }
  | {
      readonly name: 'get';
      readonly db: string;
      readonly agent: string;
      readonly target:
        | { readonly kind: 'id'; readonly id: string }
        | ({ readonly kind: 'pointer' } & ArchivePointer);
      readonly json: boolean;
    }
  | {
      readonly name: 'ingest';
      readonly db: string;
      readonly agent: string;
      readonly file: string;
      readonly session: string | null;
    }
  | { readonly name: 'drain'; readonly db: string; readonly agent: string | null }
  | { readonly name: 'maintain'; readonly db: string; readonly agent: string | null; readonly force: boolean }
  | { readonly name: 'health'; readonly db: string; readonly agent: string | null; readonly json: boolean }
  | { readonly name: 'serve'; readonly db: string; readonly port: number }
  | { readonly name: 'mcp'; readonly db: string; readonly agent: string };

/** What the command line asks for. */
export type ParsedCommandLine =
  | { readonly ok: true; readonly kind: 'run'; readonly command: Command }
  | { readonly ok: true; readonly kind: 'help'; readonly text: string }
  | { readonly ok: true; readonly kind: 'version' }
  | {
      readonly ok: false;
      /** One line: what is wrong. */
      readonly message: string;
      /** The usage line(s) of the command (or of the CLI) and where to find more. */
      readonly hint: string;
    };

interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  readonly value?: string;
  readonly description: string;
}

interface CommandSpec {
  readonly summary: string;
  readonly positionals: readonly { readonly name: string; readonly description: string }[];
  readonly options: Readonly<Record<string, OptionSpec>>;
  readonly details?: readonly string[];
  readonly examples: readonly string[];
}

const dbOption = (fallback: string): OptionSpec => ({
  type: 'string',
  value: 'file',
  description: `SQLite database file (default: ${fallback} in the working directory)`,
});
const agentOption = (what: string): OptionSpec => ({ type: 'string', value: 'id', description: what });
const helpOption: OptionSpec = { type: 'boolean', short: 'h', description: 'show this help' };

const SPECS: Readonly<Record<CommandName, CommandSpec>> = {
  demo: {
    summary: 'Ingest a bundled sample, search it, maintain it, and serve the health page.',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DEMO_DB),
      port: {
        type: 'string',
        value: 'n',
        description: `health page port on 127.0.0.1 (default ${DEFAULT_PORT}; a free one if taken)`,
      },
      'no-serve': {
        type: 'boolean',
        description: 'exit after the summary instead of serving the health page',
      },
      help: helpOption,
    },
    details: [
      'Running it again adds nothing: events are ingested by cursor and facts dedupe by hash.',
      'Set ENGRAM_OPENAI_BASE_URL, ENGRAM_OPENAI_API_KEY and ENGRAM_OPENAI_CHAT_MODEL to run the heavy maintenance phase with a real model.',
    ],
    examples: ['engram demo', 'engram demo --no-serve', 'engram demo --db /tmp/engram-demo.db --port 8080'],
  },
  remember: {
    summary: 'Remember one durable fact for an agent (exact duplicates are ignored).',
    positionals: [{ name: 'content', description: 'the fact, as one self-contained sentence' }],
    options: {
      db: dbOption(DEFAULT_DB),
      agent: agentOption(`agent id (default ${DEFAULT_AGENT})`),
      topic: { type: 'string', value: 'label', description: 'a short topic label, stored as a topic: tag' },
      help: helpOption,
    },
    examples: [
      'engram remember "The team uses pnpm, never npm." --topic tooling',
      'engram remember "用户喜欢简洁的回答" --agent assistant',
    ],
  },
  search: {
    summary: "Search an agent's memories (keyword and vector arms, fused).",
    positionals: [{ name: 'query', description: 'words, identifiers, paths or a question' }],
    options: {
      db: dbOption(DEFAULT_DB),
      agent: agentOption(`agent id (default ${DEFAULT_AGENT})`),
      limit: {
        type: 'string',
        value: 'n',
        description: `most results, 1-100 (default ${DEFAULT_SEARCH_LIMIT})`,
      },
      tag: {
        type: 'string',
        multiple: true,
        value: 'prefix:value',
        description: 'only memories with this tag (repeatable), e.g. file:src/a.ts',
      },
      explain: { type: 'boolean', description: 'show which arms found each result, with ranks and scores' },
      json: { type: 'boolean', description: 'print the results as JSON' },
      help: helpOption,
    },
    examples: [
      'engram search "deploy rollback" --explain',
      'engram search src/store/sqlite-store.ts --agent coder',
      'engram search 会议 --agent assistant --limit 3',
    ],
  },
  get: {
    summary: 'Print one memory by id, or the archived events of a pointer.',
    positionals: [
      {
        name: 'id|pointer',
        description: 'a memory id, or session/<sessionId>#<from>-<to> as search prints it',
      },
    ],
    options: {
      db: dbOption(DEFAULT_DB),
      agent: agentOption(`agent id (default ${DEFAULT_AGENT})`),
      json: { type: 'boolean', description: 'print JSON' },
      help: helpOption,
    },
    examples: ['engram get session/s1#3-5 --agent coder', 'engram get 0b6c2f0e-… --json'],
  },
  ingest: {
    summary: 'Append a JSONL file of session events to the archive and ingest them (idempotent by seq).',
    positionals: [{ name: 'events.jsonl', description: 'one JSON event per line' }],
    options: {
      db: dbOption(DEFAULT_DB),
      agent: agentOption(`agent id for lines without "agentId" (default ${DEFAULT_AGENT})`),
      session: { type: 'string', value: 'id', description: 'session id for lines without "sessionId"' },
      help: helpOption,
    },
    details: [
      'A line: {"sessionId":"s1","seq":1,"type":"message|tool_call|tool_result","role":"user","content":"…",',
      '         "toolName"?:"edit_file","metadata"?:{"path":"src/a.ts"},"createdAt"?:1700000000000,"agentId"?:"coder"}',
      'Run `engram drain` afterwards to embed the new memories.',
    ],
    examples: ['engram ingest session.jsonl --agent coder', 'engram ingest chat.jsonl --session 2024-06-01'],
  },
  drain: {
    summary: 'Embed every pending memory (all agents, or one).',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      agent: agentOption('only this agent (default: all agents)'),
      help: helpOption,
    },
    examples: ['engram drain', 'engram drain --agent coder'],
  },
  maintain: {
    summary: 'Run a maintenance pass (cheap phase; heavy phase when a model is configured).',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      agent: agentOption('only this agent (default: every agent in the database)'),
      force: { type: 'boolean', description: 'run the heavy phase even inside its cool-down' },
      help: helpOption,
    },
    details: [
      'The heavy phase (challenge, merge, reflection, persona) needs ENGRAM_OPENAI_CHAT_MODEL and a base URL or API key.',
    ],
    examples: ['engram maintain', 'engram maintain --agent coder --force'],
  },
  health: {
    summary: "Print store counts and this process's diagnostics (a table, or the health DTO as JSON).",
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      agent: agentOption('only this agent (default: all agents)'),
      json: { type: 'boolean', description: 'print the health DTO { store, runtime } as JSON' },
      help: helpOption,
    },
    examples: ['engram health', 'engram health --agent coder --json'],
  },
  serve: {
    summary: 'Serve the health page and /api/health for a database on 127.0.0.1.',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      port: {
        type: 'string',
        value: 'n',
        description: `port (default ${DEFAULT_PORT}; a free one if taken; 0 = any)`,
      },
      help: helpOption,
    },
    examples: ['engram serve', 'engram serve --port 8080 --db .engram/demo.db'],
  },
  mcp: {
    summary: 'Run a Model Context Protocol server over stdio exposing the memory tools.',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      agent: agentOption(`agent id the tools act for (default ${DEFAULT_AGENT})`),
      help: helpOption,
    },
    details: [
      'Tools: memory_search, memory_remember, memory_get, skill_write, skill_delete, skill_list.',
      'stdout carries protocol messages only; logs go to stderr.',
    ],
    examples: ['engram mcp --agent coder --db ~/.engram/memory.db'],
  },
};

const CONTROL = /[\u0000-\u001f\u007f]/;

const agentSchema = z
  .string()
  .refine((v) => v.trim() !== '', { error: 'must not be empty' })
  .refine((v) => v.length <= MAX_AGENT_ID_LENGTH, {
    error: `must be at most ${MAX_AGENT_ID_LENGTH} characters`,
  })
  .refine((v) => !CONTROL.test(v), { error: 'must not contain control characters' });

function intSchema(min: number, max: number): z.ZodType<number, string> {
  return z
    .string()
    .regex(/^\d{1,9}$/, { error: `must be an integer from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .min(min, { error: `must be an integer from ${min} to ${max}` })
        .max(max, { error: `must be an integer from ${min} to ${max}` }),
    );
}

const portSchema = intSchema(0, 65_535);
const limitSchema = intSchema(1, 100);
const textSchema = (max: number): z.ZodType<string, string> =>
  z
    .string()
    .refine((v) => v.trim() !== '', { error: 'must not be empty' })
    .refine((v) => v.length <= max, { error: `must be at most ${max} characters` });
const tagSchema = z
  .string()
  .refine((v) => isValidTag(v), { error: 'must look like prefix:value (e.g. file:src/a.ts)' });
const fileSchema = z
  .string()
  .refine((v) => v.trim() !== '' && !v.includes('\u0000'), { error: 'must be a file path' });

const POINTER = /^session\/([^#\s]{1,200})#(\d{1,9})(?:-(\d{1,9}))?$/;
const ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/;

class ArgumentError extends Error {}

function check<T>(schema: z.ZodType<T, string>, value: string, label: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw new ArgumentError(`${label} ${parsed.error.issues[0]?.message ?? 'is invalid'}`);
}

/** Parses an archive pointer; null when the text is not one. */
export function parsePointer(text: string): ArchivePointer | null {
  const match = POINTER.exec(text);
  if (match === null) return null;
  const from = Number(match[2]);
  const to = match[3] === undefined ? from : Number(match[3]);
  if (!(from >= 1) || !(to >= from)) return null;
  return { sessionId: match[1] as string, from, to };
}

/** Resolves a database path against the working directory. */
export function resolveDbPath(cwd: string, db: string | undefined, fallback: string): string {
  const file = db ?? fallback;
  return isAbsolute(file) ? file : resolve(join(cwd, file));
}

function pad(text: string, width: number): string {
  return text + ' '.repeat(Math.max(1, width - text.length));
}

/** The one-line usage of a subcommand, e.g. `engram search <query> [--agent <id>] …`. */
export function usageLine(name: CommandName): string {
  const spec = SPECS[name];
  const parts = [`engram ${name}`];
  for (const p of spec.positionals) parts.push(`<${p.name}>`);
  for (const [option, o] of Object.entries(spec.options)) {
    if (option === 'help') continue;
    parts.push(o.type === 'string' ? `[--${option} <${o.value ?? 'value'}>]` : `[--${option}]`);
  }
  return parts.join(' ');
}

/** The help text of one subcommand. */
export function commandHelp(name: CommandName): string {
  const spec = SPECS[name];
  const lines = [`Usage: ${usageLine(name)}`, '', spec.summary, ''];
  if (spec.positionals.length > 0) {
    lines.push('Arguments:');
    for (const p of spec.positionals) lines.push(`  ${pad(`<${p.name}>`, 24)}${p.description}`);
    lines.push('');
  }
  lines.push('Options:');
  for (const [option, o] of Object.entries(spec.options)) {
    const flag = `${o.short === undefined ? '    ' : `-${o.short}, `}--${option}${o.type === 'string' ? ` <${o.value ?? 'value'}>` : ''}`;
    lines.push(`  ${pad(flag, 24)}${o.description}`);
  }
  if (spec.details !== undefined) lines.push('', ...spec.details);
  lines.push('', 'Examples:', ...spec.examples.map((e) => `  ${e}`));
  return `${lines.join('\n')}\n`;
}

/** The top-level help text. */
export function mainHelp(): string {
  const lines = [
    'Usage: engram <command> [options]',
    '',
    'Engram: embedded, observable long-term memory for AI agents (one SQLite file).',
    '',
    'Commands:',
    ...COMMAND_NAMES.map((name) => `  ${pad(name, 12)}${SPECS[name].summary}`),
    '',
    'Every command takes --db <file> (default .engram/engram.db; the demo uses .engram/demo.db) and --help.',
    '',
    'Options:',
    '  -h, --help      show this help',
    '  -v, --version   print the version',
    '',
    "Run 'engram <command> --help' for a command's options.",
  ];
  return `${lines.join('\n')}\n`;
}

function commandHint(name: CommandName): string {
  return `Usage: ${usageLine(name)}\nRun 'engram ${name} --help' for details.`;
}

const MAIN_HINT = "Usage: engram <command> [options]\nRun 'engram --help' for the list of commands.";

function isCommandName(value: string): value is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(value);
}

function describeParseError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : '';
  const option = /'(-{1,2}[^'\s]*)/.exec(message)?.[1];
  switch (code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${option ?? ''}`.trim();
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': {
      const name = (option ?? '').replace(/ .*$/, '');
      if (/argument missing/.test(message)) return `option ${name} needs a value`;
      if (/ambiguous/.test(message))
        return `option ${name} needs a value (write ${name}=<value> for a value starting with -)`;
      return `option ${name} does not take a value`;
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return 'this command takes no positional arguments';
    default:
      return 'invalid arguments';
  }
}

/** True when `argv` asks for help before any `--` terminator. */
function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

interface Raw {
  readonly values: Readonly<Record<string, string | boolean | readonly string[] | undefined>>;
  readonly positionals: readonly string[];
}

function str(raw: Raw, key: string): string | undefined {
  const value = raw.values[key];
  return typeof value === 'string' ? value : undefined;
}

function bool(raw: Raw, key: string): boolean {
  return raw.values[key] === true;
}

function list(raw: Raw, key: string): readonly string[] {
  const value = raw.values[key];
  return Array.isArray(value) ? value : [];
}

function positional(raw: Raw, name: CommandName): string {
  const spec = SPECS[name];
  const wanted = spec.positionals[0];
  if (wanted === undefined) {
    if (raw.positionals.length > 0) throw new ArgumentError('this command takes no positional arguments');
    return '';
  }
  if (raw.positionals.length === 0) throw new ArgumentError(`missing <${wanted.name}>`);
  if (raw.positionals.length > 1) {
    throw new ArgumentError(
      `expected one <${wanted.name}>, got ${raw.positionals.length} arguments (quote it)`,
    );
  }
  return raw.positionals[0] as string;
}

function agentOf(raw: Raw): string {
  const agent = str(raw, 'agent');
  return agent === undefined ? DEFAULT_AGENT : check(agentSchema, agent, '--agent');
}

function optionalAgent(raw: Raw): string | null {
  const agent = str(raw, 'agent');
  return agent === undefined ? null : check(agentSchema, agent, '--agent');
}

function dbOf(raw: Raw, cwd: string, fallback: string): string {
  const db = str(raw, 'db');
  if (db !== undefined) check(fileSchema, db, '--db');
  return resolveDbPath(cwd, db, fallback);
}

function portOf(raw: Raw): number {
  const port = str(raw, 'port');
  return port === undefined ? DEFAULT_PORT : check(portSchema, port, '--port');
}

function build(name: CommandName, raw: Raw, cwd: string): Command {
  const text = positional(raw, name);
  switch (name) {
    case 'demo':
      return { name, db: dbOf(raw, cwd, DEFAULT_DEMO_DB), port: portOf(raw), serve: !bool(raw, 'no-serve') };
    case 'remember': {
      const topic = str(raw, 'topic');
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        content: check(textSchema(4000), text, '<content>'),
        topic: topic === undefined ? null : check(textSchema(64), topic, '--topic'),
      };
    }
    case 'search': {
      const limit = str(raw, 'limit');
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        query: check(textSchema(2000), text, '<query>'),
        limit: limit === undefined ? DEFAULT_SEARCH_LIMIT : check(limitSchema, limit, '--limit'),
        tags: list(raw, 'tag').map((tag) => check(tagSchema, tag, '--tag')),
        explain: bool(raw, 'explain'),
        json: bool(raw, 'json'),
      };
    }
    case 'get': {
      const pointer = parsePointer(text);
      let target: Extract<Command, { name: 'get' }>['target'];
      if (pointer !== null) target = { kind: 'pointer', ...pointer };
      else if (text.startsWith('session/')) {
        throw new ArgumentError(
          '<id|pointer> is not a valid pointer (expected session/<sessionId>#<from>-<to>)',
        );
      } else if (ID.test(text)) target = { kind: 'id', id: text };
      else throw new ArgumentError('<id|pointer> must be a memory id or session/<sessionId>#<from>-<to>');
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), agent: agentOf(raw), target, json: bool(raw, 'json') };
    }
    case 'ingest': {
      const session = str(raw, 'session');
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        file: resolveDbPath(cwd, check(fileSchema, text, '<events.jsonl>'), text),
        session: session === undefined ? null : check(textSchema(200), session, '--session'),
      };
    }
    case 'drain':
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), agent: optionalAgent(raw) };
    case 'maintain':
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), agent: optionalAgent(raw), force: bool(raw, 'force') };
    case 'health':
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), agent: optionalAgent(raw), json: bool(raw, 'json') };
    case 'serve':
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), port: portOf(raw) };
    case 'mcp':
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), agent: agentOf(raw) };
  }
}

/**
 * Parses the CLI's arguments (without `node` and the script). Strict: unknown options, missing values and
 * stray arguments are errors with a one-line message and a usage hint; `cwd` resolves relative paths.
 */
export function parseCommandLine(argv: readonly string[], cwd: string): ParsedCommandLine {
  const [first, ...rest] = argv;
  if (first === undefined) return { ok: false, message: 'engram: missing command', hint: MAIN_HINT };
  if (first === '--help' || first === '-h') return { ok: true, kind: 'help', text: mainHelp() };
  if (first === '--version' || first === '-v') return { ok: true, kind: 'version' };
  if (first === 'help') {
    const topic = rest[0];
    if (topic === undefined) return { ok: true, kind: 'help', text: mainHelp() };
    if (!isCommandName(topic))
      return { ok: false, message: `engram: unknown command '${clip(topic)}'`, hint: MAIN_HINT };
    return { ok: true, kind: 'help', text: commandHelp(topic) };
  }
  if (!isCommandName(first)) {
    const message = first.startsWith('-')
      ? `engram: expected a command before ${clip(first)}`
      : `engram: unknown command '${clip(first)}'`;
    return { ok: false, message, hint: MAIN_HINT };
  }
  if (wantsHelp(rest)) return { ok: true, kind: 'help', text: commandHelp(first) };
  const spec = SPECS[first];
  let raw: Raw;
  try {
    const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
    for (const [option, o] of Object.entries(spec.options)) {
      options[option] = {
        type: o.type,
        ...(o.short === undefined ? {} : { short: o.short }),
        ...(o.multiple === true ? { multiple: true } : {}),
      };
    }
    const parsed = parseArgs({ args: [...rest], options, strict: true, allowPositionals: true });
    raw = { values: parsed.values as Raw['values'], positionals: parsed.positionals };
  } catch (error) {
    return { ok: false, message: `engram ${first}: ${describeParseError(error)}`, hint: commandHint(first) };
  }
  try {
    return { ok: true, kind: 'run', command: build(first, raw, cwd) };
  } catch (error) {
    if (error instanceof ArgumentError) {
      return { ok: false, message: `engram ${first}: ${error.message}`, hint: commandHint(first) };
    }
    throw error;
  }
}

function clip(text: string): string {
  const flat = text.replace(CONTROL, '?');
  return flat.length <= 40 ? flat : `${flat.slice(0, 39)}…`;
}
