/**
 * The `engram` command line: turns the words after `engram` into a validated {@link Command}, a help text, the
 * version request, or a one-line mistake with a usage hint. Pure: no I/O, no native code — the CLI decides what
 * to print and how to exit. The option table lives in `args-spec.ts`, the value rules in `args-values.ts`.
 */
import { parseArchivePointer } from '@engram/contracts';
import { commandHelp, commandHint, MAIN_HINT, mainHelp } from './args-help.js';
import { type RawArguments, readArguments } from './args-options.js';
import {
  type Command,
  type CommandName,
  DEFAULT_AGENT,
  DEFAULT_DB,
  DEFAULT_DEMO_DB,
  DEFAULT_LIST_LIMIT,
  DEFAULT_PORT,
  DEFAULT_SEARCH_LIMIT,
  isCommandName,
  type ParsedCommandLine,
  SPECS,
} from './args-spec.js';
import {
  ArgumentError,
  agentSchema,
  check,
  fileSchema,
  kindSchema,
  limitSchema,
  memoryIdSchema,
  pageSchema,
  portSchema,
  reasonSchema,
  resolveDbPath,
  tagSchema,
  textSchema,
} from './args-values.js';
import { clip } from './terminal-text.js';

/** True when `argv` asks for help before any `--` terminator. */
function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

function str(raw: RawArguments, key: string): string | undefined {
  const value = raw.values[key];
  return typeof value === 'string' ? value : undefined;
}

function bool(raw: RawArguments, key: string): boolean {
  return raw.values[key] === true;
}

function list(raw: RawArguments, key: string): readonly string[] {
  const value = raw.values[key];
  return Array.isArray(value) ? value : [];
}

/** The positional arguments, exactly as many as the command takes (one, or `<id> <text>` for update). */
function positionals(raw: RawArguments, name: CommandName): readonly string[] {
  const wanted = SPECS[name].positionals;
  const got = raw.positionals.length;
  if (wanted.length === 0) {
    if (got > 0) throw new ArgumentError('this command takes no positional arguments');
    return [];
  }
  const missing = wanted[got];
  if (missing !== undefined) throw new ArgumentError(`missing <${missing.name}>`);
  if (got > wanted.length) {
    const names = wanted.map((w) => `<${w.name}>`).join(' ');
    const last = wanted[wanted.length - 1]?.name ?? '';
    throw new ArgumentError(
      wanted.length === 1
        ? `expected one <${last}>, got ${got} arguments (quote it)`
        : `expected ${names}, got ${got} arguments (quote <${last}>)`,
    );
  }
  return raw.positionals;
}

function agentOf(raw: RawArguments): string {
  const agent = str(raw, 'agent');
  return agent === undefined ? DEFAULT_AGENT : check(agentSchema, agent, '--agent');
}

/** `{ agentDefaulted: true }` when `--agent` was not given. */
function agentDefaulted(raw: RawArguments): { readonly agentDefaulted?: true } {
  return str(raw, 'agent') === undefined ? { agentDefaulted: true } : {};
}

/** `--user`, or null for none (the whole agent). */
function userOf(raw: RawArguments): string | null {
  const user = str(raw, 'user');
  return user === undefined ? null : check(agentSchema, user, '--user');
}

function sessionOf(raw: RawArguments): string | null {
  const session = str(raw, 'session');
  return session === undefined ? null : check(agentSchema, session, '--session');
}

function reasonOf(raw: RawArguments): string | null {
  const reason = str(raw, 'reason');
  return reason === undefined ? null : check(reasonSchema, reason, '--reason');
}

function idOf(text: string): string {
  return check(memoryIdSchema, text, '<id>');
}

function optionalAgent(raw: RawArguments): string | null {
  const agent = str(raw, 'agent');
  return agent === undefined ? null : check(agentSchema, agent, '--agent');
}

function dbOf(raw: RawArguments, cwd: string, fallback: string): string {
  const db = str(raw, 'db');
  if (db !== undefined) check(fileSchema, db, '--db');
  return resolveDbPath(cwd, db, fallback);
}

function portOf(raw: RawArguments, option: 'port' | 'health-port' = 'port'): number {
  const port = str(raw, option);
  return port === undefined ? DEFAULT_PORT : check(portSchema, port, `--${option}`);
}

function targetOf(text: string): Extract<Command, { name: 'get' }>['target'] {
  const pointer = parseArchivePointer(text);
  if (pointer !== null) return { kind: 'pointer', ...pointer };
  if (text.startsWith('session/')) {
    throw new ArgumentError('<id|pointer> is not a valid pointer (expected session/<sessionId>#<from>-<to>)');
  }
  if (!memoryIdSchema.safeParse(text).success) {
    throw new ArgumentError('<id|pointer> must be a memory id or session/<sessionId>#<from>-<to>');
  }
  return { kind: 'id', id: text };
}

function build(name: CommandName, raw: RawArguments, cwd: string): Command {
  const words = positionals(raw, name);
  const text = words[0] ?? '';
  switch (name) {
    case 'demo':
      return { name, db: dbOf(raw, cwd, DEFAULT_DEMO_DB), port: portOf(raw), serve: !bool(raw, 'no-serve') };
    case 'remember': {
      const topic = str(raw, 'topic');
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        session: sessionOf(raw),
        content: check(textSchema(4000), text, '<content>'),
        topic: topic === undefined ? null : check(textSchema(64), topic, '--topic'),
        json: bool(raw, 'json'),
      };
    }
    case 'search': {
      const limit = str(raw, 'limit');
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        session: sessionOf(raw),
        query: check(textSchema(2000), text, '<query>'),
        limit: limit === undefined ? DEFAULT_SEARCH_LIMIT : check(limitSchema, limit, '--limit'),
        tags: list(raw, 'tag').map((tag) => check(tagSchema, tag, '--tag')),
        explain: bool(raw, 'explain'),
        json: bool(raw, 'json'),
        ...agentDefaulted(raw),
        ...(bool(raw, 'include-archived') ? { includeArchived: true as const } : {}),
      };
    }
    case 'get':
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        target: targetOf(text),
        json: bool(raw, 'json'),
        ...agentDefaulted(raw),
      };
    case 'list': {
      const limit = str(raw, 'limit');
      const after = str(raw, 'after');
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        kinds: list(raw, 'kind').map((kind) => check(kindSchema, kind, '--kind')),
        tags: list(raw, 'tag').map((tag) => check(tagSchema, tag, '--tag')),
        inactive: bool(raw, 'inactive'),
        limit: limit === undefined ? DEFAULT_LIST_LIMIT : check(pageSchema, limit, '--limit'),
        after: after === undefined ? null : check(memoryIdSchema, after, '--after'),
        json: bool(raw, 'json'),
      };
    }
    case 'update':
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        id: idOf(text),
        content: check(textSchema(4000), words[1] ?? '', '<text>'),
        reason: reasonOf(raw),
        json: bool(raw, 'json'),
      };
    case 'forget':
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        id: idOf(text),
        reason: reasonOf(raw),
        json: bool(raw, 'json'),
      };
    case 'history':
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        id: idOf(text),
        json: bool(raw, 'json'),
      };
    case 'ingest': {
      const session = str(raw, 'session');
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        file: resolveDbPath(cwd, check(fileSchema, text, '<events.jsonl>'), text),
        session: session === undefined ? null : check(agentSchema, session, '--session'),
        json: bool(raw, 'json'),
        ...agentDefaulted(raw),
      };
    }
    case 'drain':
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), agent: optionalAgent(raw), json: bool(raw, 'json') };
    case 'maintain':
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: optionalAgent(raw),
        user: userOf(raw),
        force: bool(raw, 'force'),
        dryRun: bool(raw, 'dry-run'),
        json: bool(raw, 'json'),
      };
    case 'export': {
      const agent = optionalAgent(raw);
      const user = userOf(raw);
      const session = sessionOf(raw);
      // A user's export is of one agent: which one is not guessed.
      if (user !== null && agent === null) {
        throw new ArgumentError("--user needs --agent: a user's export is of one agent");
      }
      if (session !== null && agent === null) {
        throw new ArgumentError("--session needs --agent: a session's export is of one agent");
      }
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent,
        user,
        session,
        vectors: bool(raw, 'vectors'),
        json: bool(raw, 'json'),
      };
    }
    case 'import':
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: optionalAgent(raw),
        keepAges: bool(raw, 'keep-ages'),
        json: bool(raw, 'json'),
      };
    case 'health':
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), agent: optionalAgent(raw), json: bool(raw, 'json') };
    case 'serve':
      return { name, db: dbOf(raw, cwd, DEFAULT_DB), port: portOf(raw) };
    case 'inspect':
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: str(raw, 'user') === undefined ? null : check(agentSchema, str(raw, 'user') ?? '', '--user'),
        port: str(raw, 'port') === undefined ? 0 : portOf(raw),
      };
    case 'mcp':
      return {
        name,
        db: dbOf(raw, cwd, DEFAULT_DB),
        agent: agentOf(raw),
        user: userOf(raw),
        healthPort: str(raw, 'health-port') === undefined ? null : portOf(raw, 'health-port'),
      };
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
  try {
    const raw = readArguments(SPECS[first], rest);
    const built = build(first, raw, cwd);
    const command = bool(raw, 'create') ? { ...built, create: true } : built;
    const keyFile = str(raw, 'key-file');
    if (keyFile === undefined) return { ok: true, kind: 'run', command };
    check(fileSchema, keyFile, '--key-file');
    return { ok: true, kind: 'run', command: { ...command, keyFile: resolveDbPath(cwd, keyFile, keyFile) } };
  } catch (error) {
    if (error instanceof ArgumentError) {
      return { ok: false, message: `engram ${first}: ${error.message}`, hint: commandHint(first) };
    }
    throw error;
  }
}
