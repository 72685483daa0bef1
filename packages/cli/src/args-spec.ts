/**
 * What the `engram` command line is made of: the subcommand names, their defaults, the validated `Command`
 * each one becomes, and the per-command option table the parser and the help text are both built from.
 */
import type { ArchivePointer } from '@engram/contracts';

/** Subcommands of the CLI, in the order the help lists them. */
export const COMMAND_NAMES = [
  'demo',
  'remember',
  'search',
  'get',
  'ingest',
  'drain',
  'maintain',
  'export',
  'import',
  'health',
  'serve',
  'inspect',
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

/**
 * A validated invocation of one subcommand. `keyFile` (from `--key-file`, any command) is the file holding
 * the database's encryption key; the key itself never appears on the command line. `create` (from `--create`,
 * the commands that do not create a store by themselves) creates an empty store when the file is missing or
 * empty.
 */
export type Command = CommandVariant & { readonly keyFile?: string; readonly create?: boolean };

/** The invocations without the options every command shares. */
type CommandVariant =
  | { readonly name: 'demo'; readonly db: string; readonly port: number; readonly serve: boolean }
  | {
      readonly name: 'remember';
      readonly db: string;
      readonly agent: string;
      readonly content: string;
      readonly topic: string | null;
      readonly json: boolean;
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
      /** Present when `--agent` was not given: finding nothing then lists the agents the file has. */
      readonly agentDefaulted?: true;
      /** Present (true) only with `--include-archived`. */
      readonly includeArchived?: true;
    }
  | {
      readonly name: 'get';
      readonly db: string;
      readonly agent: string;
      readonly target:
        | { readonly kind: 'id'; readonly id: string }
        | ({ readonly kind: 'pointer' } & ArchivePointer);
      readonly json: boolean;
      /** Present when `--agent` was not given: finding nothing then lists the agents the file has. */
      readonly agentDefaulted?: true;
    }
  | {
      readonly name: 'ingest';
      readonly db: string;
      readonly agent: string;
      readonly file: string;
      readonly session: string | null;
      readonly json: boolean;
      /** Present when `--agent` was not given: lines may then name their agents; with it, every line is its. */
      readonly agentDefaulted?: true;
    }
  | { readonly name: 'drain'; readonly db: string; readonly agent: string | null; readonly json: boolean }
  | {
      readonly name: 'maintain';
      readonly db: string;
      readonly agent: string | null;
      readonly force: boolean;
      readonly dryRun: boolean;
      readonly json: boolean;
    }
  | {
      readonly name: 'export';
      readonly db: string;
      readonly agent: string | null;
      readonly vectors: boolean;
      readonly json: boolean;
    }
  | {
      readonly name: 'import';
      readonly db: string;
      /** `--agent`: every record is imported into this agent (remapped), or null for each record's own. */
      readonly agent: string | null;
      /** `--keep-ages`: keep the exported ages instead of starting the decay clocks at the import. */
      readonly keepAges: boolean;
      readonly json: boolean;
    }
  | { readonly name: 'health'; readonly db: string; readonly agent: string | null; readonly json: boolean }
  | { readonly name: 'serve'; readonly db: string; readonly port: number }
  | {
      readonly name: 'inspect';
      readonly db: string;
      readonly agent: string;
      /** `--user`: the user shown first, or null for the whole agent. */
      readonly user: string | null;
      /** `--port`, or 0 for any free port. */
      readonly port: number;
    }
  | {
      readonly name: 'mcp';
      readonly db: string;
      readonly agent: string;
      /** Port of the health page of the server's own process (`--health-port`), or null for none. */
      readonly healthPort: number | null;
    };

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

/** One option of a subcommand, as `parseArgs` takes it plus what the help prints. */
export interface OptionSpec {
  readonly type: 'string' | 'boolean';
  readonly short?: string;
  readonly multiple?: boolean;
  readonly value?: string;
  readonly description: string;
}

/** A subcommand: its summary, positional argument, options, details and examples. */
export interface CommandSpec {
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
const keyFileOption: OptionSpec = {
  type: 'string',
  value: 'file',
  description: 'file holding the encryption key of an encrypted database (or set ENGRAM_KEY)',
};
const createOption: OptionSpec = {
  type: 'boolean',
  description: 'create an empty store when the file is missing or empty (otherwise that is an error)',
};
const agentOption = (what: string): OptionSpec => ({ type: 'string', value: 'id', description: what });
const jsonOption = (shape: string): OptionSpec => ({ type: 'boolean', description: `print JSON: ${shape}` });
const helpOption: OptionSpec = { type: 'boolean', short: 'h', description: 'show this help' };

/** The spec of every subcommand. */
export const SPECS: Readonly<Record<CommandName, CommandSpec>> = {
  demo: {
    summary: 'Ingest a bundled sample, search it, maintain it, and serve the health page.',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DEMO_DB),
      'key-file': keyFileOption,
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
      'key-file': keyFileOption,
      agent: agentOption(`agent id (default ${DEFAULT_AGENT})`),
      topic: { type: 'string', value: 'label', description: 'a short topic label, stored as a topic: tag' },
      json: jsonOption('{ agent, ok, id, action, text }'),
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
      'key-file': keyFileOption,
      create: createOption,
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
      'include-archived': {
        type: 'boolean',
        description: 'also search memories archived by maintenance (decay or a resolved challenge)',
      },
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
      'key-file': keyFileOption,
      create: createOption,
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
      'key-file': keyFileOption,
      agent: agentOption(
        `the agent of every line: a line naming another is refused (default: ${DEFAULT_AGENT} for lines without "agentId")`,
      ),
      session: { type: 'string', value: 'id', description: 'session id for lines without "sessionId"' },
      json: jsonOption('{ sessions: [{ agent, session, appended, skipped, memories }], totals }'),
      help: helpOption,
    },
    details: [
      'A line: {"sessionId":"s1","seq":1,"type":"message|tool_call|tool_result","role":"user","content":"…",',
      '         "toolName"?:"edit_file","metadata"?:{"path":"src/a.ts"},"createdAt"?:1700000000000,"agentId"?:"coder"}',
      'Run `engram drain` afterwards to embed the new memories.',
      'A line may hold at most 16 MiB; the whole file is checked before anything is written.',
    ],
    examples: ['engram ingest session.jsonl --agent coder', 'engram ingest chat.jsonl --session 2024-06-01'],
  },
  drain: {
    summary: 'Embed every pending memory (all agents, or one).',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      create: createOption,
      agent: agentOption('only this agent (default: all agents)'),
      json: jsonOption('the summary { embedder, rows, ready, error, ftsOnly, stale, backlog, outcome, … }'),
      help: helpOption,
    },
    examples: ['engram drain', 'engram drain --agent coder', 'engram drain --json | jq .backlog'],
  },
  maintain: {
    summary: 'Run a maintenance pass (cheap phase; heavy phase when a model is configured).',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      create: createOption,
      agent: agentOption('only this agent (default: every agent in the database)'),
      force: {
        type: 'boolean',
        description:
          "run the heavy phase even inside its cool-down, and take over the agent's maintenance lease from a pass that holds it",
      },
      'dry-run': {
        type: 'boolean',
        description: 'print what the pass would archive and change nothing (the heavy phase is not run)',
      },
      json: jsonOption(
        '{ model, agents: [{ agent, report, details }] } (report null when a pass was already running)',
      ),
      help: helpOption,
    },
    details: [
      'The heavy phase (challenge, merge, reflection, persona) needs ENGRAM_OPENAI_CHAT_MODEL and a base URL or API key.',
      'A pass that archives many rows, or stops its scan before the end, says so on stderr.',
    ],
    examples: ['engram maintain', 'engram maintain --agent coder --force', 'engram maintain --dry-run'],
  },
  export: {
    summary: 'Write every memory, event, cursor and skill (all agents, or one) as JSON Lines to stdout.',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      agent: agentOption('only this agent (default: every agent)'),
      vectors: { type: 'boolean', description: "include each memory's vectors with the embedder profile" },
      json: { type: 'boolean', description: 'print a JSON summary on stderr when done' },
      help: helpOption,
    },
    details: [
      'The first line is a header (format version, schema version, embedder profile); the last one counts the records.',
      'Progress goes to stderr; stdout carries the records only.',
    ],
    examples: [
      'engram export --db a.db > memories.jsonl',
      'engram export --agent coder --vectors > coder.jsonl',
    ],
  },
  import: {
    summary: 'Read an export (JSON Lines) from stdin into a database; importing twice changes nothing.',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      agent: agentOption(
        'import every record into this agent (remapped; default: each record keeps its own)',
      ),
      'keep-ages': {
        type: 'boolean',
        description: "keep the memories' exported ages (default: their decay clocks start at the import)",
      },
      json: { type: 'boolean', description: 'print the summary as JSON' },
      help: helpOption,
    },
    details: [
      "A new file adopts the export's embedder when this CLI has it, so exported vectors are kept.",
      'A record already stored with other values is a conflict: it is counted and left as stored.',
      'A line may hold at most 16 MiB. Imported memories age from the import unless --keep-ages.',
    ],
    examples: [
      'engram import --db b.db < memories.jsonl',
      'engram export --db a.db | engram import --db b.db',
      'engram export --agent alice | engram import --agent bob --db b.db',
    ],
  },
  health: {
    summary: "Print store counts and this process's diagnostics (a table, or the health DTO as JSON).",
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      create: createOption,
      agent: agentOption('only this agent (default: all agents)'),
      json: { type: 'boolean', description: 'print the health DTO { store, runtime } as JSON' },
      help: helpOption,
    },
    examples: ['engram health', 'engram health --agent coder --json'],
  },
  serve: {
    summary:
      'Serve the health page and /api/health for a database on 127.0.0.1 (runtime figures: this process only).',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      create: createOption,
      port: {
        type: 'string',
        value: 'n',
        description: `port (default ${DEFAULT_PORT}; a free one if taken; 0 = any)`,
      },
      help: helpOption,
    },
    examples: ['engram serve', 'engram serve --port 8080 --db .engram/demo.db'],
  },
  inspect: {
    summary: 'Open the memory inspector for a database on 127.0.0.1 (prints a link with a random token).',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      agent: agentOption(`agent shown first (default ${DEFAULT_AGENT})`),
      user: { type: 'string', value: 'id', description: 'user shown first (default: the whole agent)' },
      port: { type: 'string', value: 'n', description: 'port on 127.0.0.1 (default: any free port)' },
      help: helpOption,
    },
    details: [
      'The page shows memory content: it listens on 127.0.0.1 only and answers only the printed link (its token).',
    ],
    examples: [
      'engram inspect --db .engram/memory.db',
      'engram inspect --agent coder --user alice --port 4400',
    ],
  },
  mcp: {
    summary: 'Run a Model Context Protocol server over stdio exposing the memory tools and resources.',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      agent: agentOption(`agent id the tools act for (default ${DEFAULT_AGENT})`),
      'health-port': {
        type: 'string',
        value: 'n',
        description:
          "also serve the health page of this server's own process on 127.0.0.1:n (0 = any free port)",
      },
      help: helpOption,
    },
    details: [
      'Tools: memory_search, memory_remember, memory_get, skill_write, skill_delete, skill_list (titles, hints, structured results).',
      'Resources: engram://core (the core memory block) and engram://skills/<name> (one per skill).',
      'stdout carries protocol messages only; logs go to stderr.',
    ],
    examples: [
      'engram mcp --agent coder --db ~/.engram/memory.db',
      'npx @engram/cli mcp --db memory.db --health-port 4320',
    ],
  },
};

/** True when `value` names a subcommand. */
export function isCommandName(value: string): value is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(value);
}
