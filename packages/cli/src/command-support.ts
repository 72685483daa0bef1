/** What every subcommand shares: exit codes, output for people and for programs, opening the database. */
import { existsSync } from 'node:fs';
import { type Engram, openEngram } from './composition.js';
import type { EmbedderChoice } from './embedder-choice.js';
import { loadEncryptionKey } from './encryption-key.js';
import { EngramDemoError } from './errors.js';
import type { CliIo } from './io.js';
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
 * Opens the database for one command. Commands that only read (search, get, drain, maintain, health, serve)
 * refuse a missing file instead of creating an empty one behind a mistyped `--db`. The embedder's model loads
 * on the first search, tool call or drain (never for get, health or serve); `warm` starts loading it at once,
 * for a command that will embed later (the MCP server, while its client connects).
 */
export async function withEngram<T>(
  io: CliIo,
  target: { readonly db: string; readonly keyFile?: string },
  run: (engram: Engram) => Promise<T>,
  options: { readonly create?: boolean; readonly warm?: boolean; readonly embedder?: EmbedderChoice } = {},
): Promise<T> {
  const { db } = target;
  if (options.create !== true && !existsSync(db)) {
    throw new EngramDemoError(
      'ENGRAM_DEMO_NOT_FOUND',
      `no database at ${db} (create one with engram remember, engram ingest or engram demo)`,
    );
  }
  const key = await loadEncryptionKey(target.keyFile, io.env);
  const engram = await openEngram({
    dbPath: db,
    env: io.env,
    warm: options.warm === true,
    ...(options.embedder === undefined ? {} : { embedder: options.embedder }),
    ...(key === undefined ? {} : { encryptionKey: key }),
  });
  try {
    return await run(engram);
  } finally {
    await engram.close();
  }
}
