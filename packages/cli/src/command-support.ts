/** What every subcommand shares: exit codes, output for people and for programs, opening the database. */
import { existsSync } from 'node:fs';
import { type EmbedderChoice, type Engine as Engram, openEngine, probeStore } from '@engram/memory/compose';
import { loadEncryptionKey } from './encryption-key.js';
import { EngramCliError } from './errors.js';
import type { CliIo } from './io.js';
import { createProgress } from './progress.js';
import { printable } from './terminal-text.js';

/** Exit codes: success, runtime failure, invalid arguments. */
export const EXIT: { readonly ok: 0; readonly failure: 1; readonly usage: 2 } = {
  ok: 0,
  failure: 1,
  usage: 2,
};

/** Prints text for people: every control character but line feeds and tabs becomes `?`. */
export function out(io: CliIo, text: string): void {
  const safe = printable(text, 'lines');
  io.stdout.write(safe.endsWith('\n') ? safe : `${safe}\n`);
}

/** Prints JSON for programs, as `JSON.stringify` escapes it. */
export function outJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function width(io: CliIo): number {
  return io.stdout.isTTY === true && typeof io.stdout.columns === 'number' ? io.stdout.columns : 110;
}

/**
 * The user scope of a command (`--user`), as the facade applies it: a command with a user sees the agent's own
 * memories and that user's, never another user's, and writes that user on what it writes.
 */
export interface UserScoped {
  readonly agent: string;
  readonly user: string | null;
}

/** The store's user scope of a command (undefined for the whole agent). */
export function storeScope(user: string | null): { readonly forUser: string } | undefined {
  return user === null ? undefined : { forUser: user };
}

/** The tool context of a command: its agent, and its user and session when it has them. */
export function toolScope(c: UserScoped & { readonly session?: string | null }): {
  readonly agentId: string;
  readonly userId?: string;
  readonly sessionId?: string;
} {
  return {
    agentId: c.agent,
    ...(c.user === null ? {} : { userId: c.user }),
    ...(c.session === undefined || c.session === null ? {} : { sessionId: c.session }),
  };
}

/** Whether a row of `rowUser` (null: the agent's own) is visible to a command of `user`. */
export function visibleTo(rowUser: string | null, user: string | null): boolean {
  return user === null || rowUser === null || rowUser === user;
}

/** `agent coder`, or `agent assistant, user alice`: what a message says it looked in (ids, never content). */
export function scopeLabel(c: UserScoped): string {
  return c.user === null ? `agent ${c.agent}` : `agent ${c.agent}, user ${c.user}`;
}

/** How a command opens its database: read-only or for writing, and whether it creates a missing store. */
export interface OpenMode {
  /** `read`: a read-only connection that never creates, converts, migrates or waits for a writer. */
  readonly access: 'read' | 'write';
  /** Creates a store when the file is missing or empty (remember, ingest, mcp); otherwise `--create` does. */
  readonly creates?: boolean;
  /** Starts loading the embedder's model at once (a command that will embed later: the MCP server). */
  readonly warm?: boolean;
  /** The command writes: a file that failed its integrity check at open is refused before it runs. */
  readonly writes?: boolean;
  /** The embedder a new file is created with (import adopts the export's); an existing file keeps its own. */
  readonly embedder?: EmbedderChoice;
}

/** What a failed integrity check means for the user. */
export const INTEGRITY_FAILED =
  'the database file failed its integrity check (ENGRAM_STORE_CORRUPT): writes are refused; recover it with the sqlite3 shell (sqlite3 damaged.db ".recover" | sqlite3 recovered.db) or restore a backup';

/** The message of a check that failed only on damaged rows or vector chunks: writes stay allowed. */
export const INTEGRITY_DAMAGED_ROWS =
  'the database file holds damaged rows or vector chunks (its integrity check failed on them): writes stay allowed; forget those rows, or export and restore (a write repairs damaged vector chunks)';

/**
 * Opens the database for one command. Commands that only read (search, get, health, serve) open it with access
 * `read`: a read-only connection that never waits for a writer and never creates, converts or migrates the
 * file. A missing or empty file is refused (instead of becoming an empty store behind a mistyped `--db`)
 * unless the command creates stores (remember, ingest, mcp) or `--create` is given; then it opens for writing
 * once to create the store. The store refuses a file that is not an Engram store, leaving it byte-identical.
 * The embedder's model loads on the first search, tool call or drain (never for get, health or serve).
 */
export async function withEngram<T>(
  io: CliIo,
  target: { readonly db: string; readonly keyFile?: string; readonly create?: boolean },
  run: (engram: Engram) => Promise<T>,
  mode: OpenMode,
): Promise<T> {
  const { db } = target;
  // A database server: "missing" is a database without Engram's schema (named without its URL, which may
  // carry a password); a file: a missing or empty one.
  const { kind, fresh } = await probeStore(db);
  if (fresh && mode.creates !== true && target.create !== true) {
    throw new EngramCliError(
      'ENGRAM_CLI_NOT_FOUND',
      kind === 'postgres'
        ? 'no Engram data in that PostgreSQL database (create some with engram remember, engram ingest or engram demo, or pass --create)'
        : existsSync(db)
          ? `no Engram store at ${db}: the file is empty (create one with engram remember, engram ingest or engram demo, or pass --create)`
          : `no database at ${db} (create one with engram remember, engram ingest or engram demo, or pass --create)`,
    );
  }
  const key = await loadEncryptionKey(target.keyFile, io.env);
  // A writable open finishes a quantised vector index build an interrupted process left (minutes at a million
  // vectors): its progress goes to stderr, counts only.
  const indexProgress = createProgress(io.stderr, 'building the quantised vector index');
  let engram: Engram;
  try {
    engram = await openEngine({
      path: db,
      env: io.env,
      warm: mode.warm === true,
      access: fresh ? 'write' : mode.access,
      ...(mode.embedder === undefined ? {} : { embedder: mode.embedder }),
      ...(key === undefined ? {} : { encryptionKey: key }),
      onIndexProgress: (p) => indexProgress.update(p.done, p.total),
    });
  } finally {
    indexProgress.finish();
  }
  try {
    if (mode.writes === true && !engram.store.integrityAllowsWrites) {
      throw new EngramCliError('ENGRAM_CLI_STORE_FAILED', INTEGRITY_FAILED);
    }
    return await run(engram);
  } finally {
    await engram.close();
  }
}
