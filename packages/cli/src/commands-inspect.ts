/** `engram inspect`: the memory inspector of a database, on 127.0.0.1 behind a one-time token, until Ctrl+C. */

import { probeStore } from '@engram/memory/compose';
import type { Command } from './args-spec.js';
import { EXIT, out } from './command-support.js';
import { loadEncryptionKey } from './encryption-key.js';
import { EngramCliError } from './errors.js';
import type { CliIo } from './io.js';

export async function inspect(io: CliIo, c: Extract<Command, { name: 'inspect' }>): Promise<number> {
  // The inspector never creates a store: a mistyped --db is refused, not shown as an empty memory.
  const { kind, fresh } = await probeStore(c.db);
  if (fresh) {
    throw new EngramCliError(
      'ENGRAM_CLI_NOT_FOUND',
      kind === 'postgres' ? 'no Engram data in that PostgreSQL database' : `no Engram store at ${c.db}`,
    );
  }
  const key = await loadEncryptionKey(c.keyFile, io.env);
  // Loaded here, not at start: no other command pays for the inspector's modules.
  const { openInspectorSource, startInspector } = await import('@engram/inspector');
  const opened = await openInspectorSource({
    db: c.db,
    ...(key === undefined ? {} : { encryptionKey: key }),
  });
  try {
    const server = await startInspector({
      source: opened.source,
      agentId: c.agent,
      ...(c.user === null ? {} : { userId: c.user }),
      port: c.port,
    });
    out(io, `Inspector: ${server.url}`);
    out(io, 'The link is the key to these memories: open it on this machine, do not share it.');
    io.stderr.write('Press Ctrl+C to stop.\n');
    await io.stopSignal;
    await server.close();
  } finally {
    await opened.close();
  }
  return EXIT.ok;
}
