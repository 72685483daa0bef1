/** Serving the health page of an {@link Engram} on 127.0.0.1, falling back to a free port when taken. */
import { type HealthServer, startHealthServer } from '@engram/health-ui';
import type { Engine as Engram } from '@engram/memory/compose';
import { EngramCliError } from './errors.js';

/** A started health server and whether it had to fall back from the asked port. */
export interface StartedHealthServer {
  readonly server: HealthServer;
  /** The port that was asked for but taken (null when the asked port was used). */
  readonly fellBackFrom: number | null;
}

function isAddressInUse(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    if ((current as { code?: unknown }).code === 'EADDRINUSE') return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Starts the health page for an Engram on 127.0.0.1:`port`, or on a free port when that one is taken. */
export async function serveHealthPage(engram: Engram, port: number): Promise<StartedHealthServer> {
  const config = {
    getHealth: (agentId: string | null) => engram.health(agentId),
    listAgents: () => engram.listAgents(),
    host: '127.0.0.1',
  };
  try {
    return { server: await startHealthServer({ ...config, port }), fellBackFrom: null };
  } catch (error) {
    if (port !== 0 && isAddressInUse(error)) {
      try {
        return { server: await startHealthServer({ ...config, port: 0 }), fellBackFrom: port };
      } catch (again) {
        throw new EngramCliError('ENGRAM_CLI_SERVE_FAILED', 'cannot listen on 127.0.0.1', { cause: again });
      }
    }
    throw new EngramCliError('ENGRAM_CLI_SERVE_FAILED', `cannot listen on 127.0.0.1:${port}`, {
      cause: error,
    });
  }
}
