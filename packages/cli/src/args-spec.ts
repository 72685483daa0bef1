/**
 * What the `engram` command line is made of: the subcommand names, their defaults, the validated `Command`
 * each one becomes, and the per-command option table the parser and the help text are both built from.
 */
import { MEMORY_KINDS } from '@engram/contracts';

/** Subcommands of the CLI, in the order the help lists them. */
export const COMMAND_NAMES = [
  'demo',
  'remember',
  'search',
  'get',
  'list',
  'update',
  'forget',
  'history',
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
/** Default number of memories `engram list` prints. */
export const DEFAULT_LIST_LIMIT = 100;

export type { Command, ParsedCommandLine } from './args-command.js';

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
  /**
   * Options a user may expect here that this command does not take, each with the reason: refused as a usage
   * error that says why, instead of the bare `unknown option`.
   */
  readonly refuses?: Readonly<Record<string, string>>;
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
const userOption = (what: string): OptionSpec => ({ type: 'string', value: 'id', description: what });
const reasonOption: OptionSpec = {
  type: 'string',
  value: 'text',
  description: 'why, kept in the history (at most 500 characters, one line)',
};
/** Why a command that reads or writes one scope takes no `--session`. */
const NO_SESSION = 'sessions are inside the user scope';
const jsonOption = (shape: string): OptionSpec => ({ type: 'boolean', description: `print JSON: ${shape}` });
const helpOption: OptionSpec = { type: 'boolean', short: 'h', description: 'show this help' };

/** Every memory kind, as `engram list --kind` takes it. */
const MEMORY_KIND_LIST = MEMORY_KINDS.join(', ');
/** Who `engram forget` and `engram update` record as the actor of the change. */
export const CLI_ACTOR = 'cli';

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
      user: userOption(
        "the user the fact is of: only that user's scope sees it (default: the agent's own, seen by all its users)",
      ),
      session: {
        type: 'string',
        value: 'id',
        description: 'the conversation the fact came from (stored with it)',
      },
      topic: { type: 'string', value: 'label', description: 'a short topic label, stored as a topic: tag' },
      json: jsonOption('{ agent, user, ok, id, action, text }'),
      help: helpOption,
    },
    examples: [
      'engram remember "The team uses pnpm, never npm." --topic tooling',
      'engram remember "Prefers short answers" --agent assistant --user alice',
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
      user: userOption("search the agent's own memories and this user's, never another user's"),
      session: { type: 'string', value: 'id', description: 'only memories of this conversation (session)' },
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
      'engram search "answer style" --agent assistant --user alice',
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
      user: userOption("act for this user: another user's memory or events are not found"),
      json: { type: 'boolean', description: 'print JSON' },
      help: helpOption,
    },
    examples: [
      'engram get session/s1#3-5 --agent coder',
      'engram get 0b6c2f0e-… --json',
      'engram get 0b6c2f0e-… --agent assistant --user alice',
    ],
    refuses: { session: `a memory id or a pointer names what to read; ${NO_SESSION} (--user)` },
  },
  list: {
    summary: "List an agent's memories in id order (a user's scope with --user), a page at a time.",
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      create: createOption,
      agent: agentOption(`agent id (default ${DEFAULT_AGENT})`),
      user: userOption("list the agent's own memories and this user's, never another user's"),
      kind: {
        type: 'string',
        multiple: true,
        value: 'kind',
        description: `only this kind (repeatable): ${MEMORY_KIND_LIST}`,
      },
      tag: {
        type: 'string',
        multiple: true,
        value: 'prefix:value',
        description: 'only memories with this tag (repeatable; all of them)',
      },
      inactive: {
        type: 'boolean',
        description: 'also list archived, superseded and conflicted memories (default: active ones)',
      },
      limit: {
        type: 'string',
        value: 'n',
        description: `most memories, 1-10000 (default ${DEFAULT_LIST_LIMIT})`,
      },
      after: {
        type: 'string',
        value: 'id',
        description: 'the page after this memory id (pass the "next" of the previous page)',
      },
      json: jsonOption('{ agent, user, memories: [memory records], next } (next: null on the last page)'),
      help: helpOption,
    },
    details: ['A full page says how to get the next one (--after <id>); --json gives it as "next".'],
    examples: [
      'engram list --agent coder',
      'engram list --agent assistant --user alice --kind fact --json',
      'engram list --agent coder --limit 50 --after 0192f3c4-…',
    ],
    refuses: { session: `list covers every session of its scope; ${NO_SESSION} (--user)` },
  },
  update: {
    summary: 'Correct a memory: the new text becomes a new version; the old one stays in its history.',
    positionals: [
      { name: 'id', description: 'the id of a current memory (from search, list or get)' },
      { name: 'text', description: 'the corrected text, stated on its own' },
    ],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      agent: agentOption(`agent id (default ${DEFAULT_AGENT})`),
      user: userOption("act for this user: another user's memory is not found"),
      reason: reasonOption,
      json: jsonOption('{ agent, user, ok, id, previousId, action: "updated", text }'),
      help: helpOption,
    },
    details: [
      'Prints the id of the new version; the old id is superseded (engram history <id> shows both).',
      "A memory that is not current (superseded, archived, forgotten) or another user's is not found (exit 1, ENGRAM_CLI_NOT_FOUND).",
    ],
    examples: [
      'engram update 0192f3c4-… "The API listens on port 9090" --reason "moved in June"',
      'engram update 0192f3c4-… "Prefers long answers" --agent assistant --user alice --json',
    ],
    refuses: { session: `a correction keeps the memory's own session; ${NO_SESSION} (--user)` },
  },
  forget: {
    summary: 'Forget a memory and its earlier versions; a tombstone keeps who, when and why.',
    positionals: [{ name: 'id', description: 'the id of the memory (from search, list or get)' }],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      agent: agentOption(`agent id (default ${DEFAULT_AGENT})`),
      user: userOption("act for this user: another user's memory is not found"),
      reason: reasonOption,
      json: jsonOption('{ agent, user, ok, id, forgotten: [ids], mode: "erase" | "keep" }'),
      help: helpOption,
    },
    details: [
      `The tombstone records the actor "${CLI_ACTOR}" and the reason; engram history <id> shows it.`,
      "A memory forgotten already, or another user's, is not found (exit 1, ENGRAM_CLI_NOT_FOUND).",
    ],
    examples: [
      'engram forget 0192f3c4-… --reason "asked to be forgotten"',
      'engram forget 0192f3c4-… --agent assistant --user alice --json',
    ],
    refuses: { session: `a memory id names what to forget; ${NO_SESSION} (--user)` },
  },
  history: {
    summary: "Print a memory's versions, oldest first, and the tombstones of forgotten ones.",
    positionals: [{ name: 'id', description: 'the id of any version of the memory' }],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      create: createOption,
      agent: agentOption(`agent id (default ${DEFAULT_AGENT})`),
      user: userOption("act for this user: another user's memory is not found"),
      json: jsonOption(
        '{ agent, user, id, versions: [memory record (+ change: { at, by, reason }) | { id, lifecycle: "forgotten", forgottenAt, forgottenBy, reason }] }',
      ),
      help: helpOption,
    },
    details: [
      'A superseded version carries who replaced it and why, when that was recorded; a forgotten one shows its tombstone, never its text.',
    ],
    examples: [
      'engram history 0192f3c4-…',
      'engram history 0192f3c4-… --agent assistant --user alice --json',
    ],
    refuses: { session: `a memory id names the history; ${NO_SESSION} (--user)` },
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
      user: userOption(
        "the user of every event and of the memories made from them (only that user's scope sees them)",
      ),
      session: { type: 'string', value: 'id', description: 'session id for lines without "sessionId"' },
      json: jsonOption('{ user, sessions: [{ agent, session, appended, skipped, memories }], totals }'),
      help: helpOption,
    },
    details: [
      'A line: {"sessionId":"s1","seq":1,"type":"message|tool_call|tool_result","role":"user","content":"…",',
      '         "toolName"?:"edit_file","metadata"?:{"path":"src/a.ts"},"createdAt"?:1700000000000,"agentId"?:"coder"}',
      'Run `engram drain` afterwards to embed the new memories.',
      'A line may hold at most 16 MiB; the whole file is checked before anything is written.',
    ],
    examples: [
      'engram ingest session.jsonl --agent coder',
      'engram ingest chat.jsonl --session 2024-06-01',
      'engram ingest chat.jsonl --agent assistant --user alice --session s1',
    ],
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
    refuses: {
      user: 'drain embeds every pending row of the agent (or all agents); it reads no scope',
      session: 'drain embeds every pending row of the agent (or all agents); it reads no scope',
    },
  },
  maintain: {
    summary: 'Run a maintenance pass (cheap phase; heavy phase when a model is configured).',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      create: createOption,
      agent: agentOption('only this agent (default: every agent in the database)'),
      user: userOption(
        "a pass over this user's memories only, for each agent maintained (default: every user group apart)",
      ),
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
        '{ model, user, agents: [{ agent, report, details }] } (report null when a pass was already running)',
      ),
      help: helpOption,
    },
    details: [
      'The heavy phase (challenge, merge, reflection, persona) needs ENGRAM_OPENAI_CHAT_MODEL and a base URL or API key.',
      'A pass that archives many rows, or stops its scan before the end, says so on stderr.',
    ],
    examples: [
      'engram maintain',
      'engram maintain --agent coder --force',
      'engram maintain --agent assistant --user alice',
      'engram maintain --dry-run',
    ],
    refuses: { session: `a pass covers every session of its scope; ${NO_SESSION} (--user)` },
  },
  export: {
    summary: 'Write every memory, event, cursor and skill (all agents, or one) as JSON Lines to stdout.',
    positionals: [],
    options: {
      db: dbOption(DEFAULT_DB),
      'key-file': keyFileOption,
      agent: agentOption('only this agent (default: every agent)'),
      user: userOption(
        "with --agent: what this user's scope sees (the agent's own memories and this user's, their events, the agent's skills)",
      ),
      session: {
        type: 'string',
        value: 'id',
        description: 'with --agent: one conversation, its memories and events (no skills)',
      },
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
      'engram export --agent assistant --user alice > alice.jsonl',
      'engram export --agent assistant --user alice --session s1 > alice-s1.jsonl',
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
    refuses: {
      user: 'every record is imported with the user it was exported with (export --user picks what to export)',
    },
  },
  health: {
    summary:
      'Print store counts and the diagnostics of every process using the file (a table, or the health DTO as JSON).',
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
    refuses: { user: 'health counts the whole agent (or every agent); it has no user view' },
  },
  serve: {
    summary:
      'Serve the health page and /api/health for a database on 127.0.0.1 (runtime figures: every process using it).',
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
    refuses: { user: 'the health page counts the whole file; it has no user view' },
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
      user: userOption(
        "the user every tool call and resource acts for: the agent's own memories and this user's, never another user's",
      ),
      'health-port': {
        type: 'string',
        value: 'n',
        description:
          "also serve the health page of this server's own process on 127.0.0.1:n (0 = any free port)",
      },
      help: helpOption,
    },
    details: [
      'Tools: memory_search, memory_remember, memory_get (by id or pointer), memory_update, memory_forget,',
      '       skill_write, skill_delete, skill_list (titles, behaviour hints, structured results).',
      'Resources: engram://core (the core memory block) and engram://skills/<name> (one per skill).',
      "The scope is fixed when the server starts: no tool call's arguments can name another agent or user.",
      "With --user, the server sees the agent's own memories and that user's, never another user's, writes",
      "carry that user, and skills (shared by the agent's users) can be read but not written or deleted.",
      'stdout carries protocol messages only; logs go to stderr.',
    ],
    examples: [
      'engram mcp --agent coder --db ~/.engram/memory.db',
      'engram mcp --agent assistant --user alice --db ~/.engram/memory.db',
      'npx @engram/cli mcp --db memory.db --health-port 4320',
    ],
    refuses: { session: 'the server serves every session of its scope; sessions are inside the user scope' },
  },
};

/** True when `value` names a subcommand. */
export function isCommandName(value: string): value is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(value);
}
