/**
 * The validated invocation of each `engram` subcommand (what the parser in `args.ts` builds from the option
 * table in `args-spec.ts`), and the parser's answer. Types only.
 */
import type { ArchivePointer, MemoryKind } from '@engram/contracts';

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
      /** `--user`: the user the fact is of (null: the agent's own, shared by its users). */
      readonly user: string | null;
      /** `--session`: the conversation the fact came from (null: none). */
      readonly session: string | null;
      readonly content: string;
      readonly topic: string | null;
      readonly json: boolean;
    }
  | {
      readonly name: 'search';
      readonly db: string;
      readonly agent: string;
      /** `--user`: the agent's own memories and this user's, never another user's (null: every user's). */
      readonly user: string | null;
      /** `--session`: only memories of this conversation (null: every session of the scope). */
      readonly session: string | null;
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
      /** `--user`: another user's memory or events are not found (null: every user's). */
      readonly user: string | null;
      readonly target:
        | { readonly kind: 'id'; readonly id: string }
        | ({ readonly kind: 'pointer' } & ArchivePointer);
      readonly json: boolean;
      /** Present when `--agent` was not given: finding nothing then lists the agents the file has. */
      readonly agentDefaulted?: true;
    }
  | {
      readonly name: 'list';
      readonly db: string;
      readonly agent: string;
      readonly user: string | null;
      readonly kinds: readonly MemoryKind[];
      readonly tags: readonly string[];
      /** `--inactive`: archived, superseded and conflicted memories too. */
      readonly inactive: boolean;
      readonly limit: number;
      /** `--after`: the page after this memory id (keyset paging, in id order). */
      readonly after: string | null;
      readonly json: boolean;
    }
  | {
      readonly name: 'update';
      readonly db: string;
      readonly agent: string;
      readonly user: string | null;
      readonly id: string;
      readonly content: string;
      readonly reason: string | null;
      readonly json: boolean;
    }
  | {
      readonly name: 'forget';
      readonly db: string;
      readonly agent: string;
      readonly user: string | null;
      readonly id: string;
      readonly reason: string | null;
      readonly json: boolean;
    }
  | {
      readonly name: 'history';
      readonly db: string;
      readonly agent: string;
      readonly user: string | null;
      readonly id: string;
      readonly json: boolean;
    }
  | {
      readonly name: 'ingest';
      readonly db: string;
      readonly agent: string;
      /** `--user`: the user of every event (and of the memories made from them), or null for none. */
      readonly user: string | null;
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
      /** `--user`: a pass over this user's memories only (null: every user group of the agent). */
      readonly user: string | null;
      readonly force: boolean;
      readonly dryRun: boolean;
      readonly json: boolean;
    }
  | {
      readonly name: 'export';
      readonly db: string;
      readonly agent: string | null;
      /** `--user` (with `--agent`): what this user's scope sees; null: every user's. */
      readonly user: string | null;
      /** `--session` (with `--agent`): one conversation's memories and events; null: every session. */
      readonly session: string | null;
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
      /** `--user`: every tool call and resource read acts for this user of the agent (null: the whole agent). */
      readonly user: string | null;
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
