import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EngramHealthUiError } from './errors.js';
import { createHealthHandler, type HealthHandlerConfig } from './handler.js';

/** Construction of {@link startHealthServer}: the handler's configuration plus where to listen. */
export interface HealthServerConfig extends HealthHandlerConfig {
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number;
  /** Interface to bind; default `127.0.0.1`. The page has no authentication: keep it on loopback. */
  readonly host?: string;
}

/** A running health server. */
export interface HealthServer {
  /** The page's URL, e.g. `http://127.0.0.1:4319/`. */
  readonly url: string;
  /** The bound port. */
  readonly port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/** Starts a node:http server that serves only the health page (a convenience over {@link createHealthHandler}). */
export async function startHealthServer(config: HealthServerConfig): Promise<HealthServer> {
  const port = config.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new EngramHealthUiError('ENGRAM_HEALTH_UI_INVALID_CONFIG', 'port must be an integer in 0..65535');
  }
  const host = config.host ?? '127.0.0.1';
  const handler = createHealthHandler(config);
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      reject(
        new EngramHealthUiError('ENGRAM_HEALTH_UI_LISTEN_FAILED', `cannot listen on ${host}:${port}`, {
          cause: error,
        }),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const basePath = config.basePath === undefined || config.basePath === '/' ? '' : config.basePath;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${hostPart}:${bound}${basePath}/`,
    port: bound,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
