import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EngramInspectorError } from './errors.js';
import { createInspectorToken } from './guard.js';
import { createInspectorHandler, type InspectorHandlerConfig } from './handler.js';

/** Construction of {@link startInspector}: the handler's configuration (a token is made when none is given) and a port. */
export interface InspectorServerConfig
  extends Omit<InspectorHandlerConfig, 'token' | 'basePath' | 'allowedHosts'> {
  /** The link's secret; default a fresh `createInspectorToken()`. */
  readonly token?: string;
  /** TCP port on 127.0.0.1; 0 (the default) picks a free one. */
  readonly port?: number;
}

/** A running inspector. */
export interface InspectorServer {
  /** The link to open: `http://127.0.0.1:<port>/?token=<secret>` (print it to the user only). */
  readonly url: string;
  /** The bound port. */
  readonly port: number;
  /** Stops listening and closes open connections. */
  close(): Promise<void>;
}

/**
 * Starts the inspector on 127.0.0.1 (never another interface: the page shows memory content) and returns its
 * link with a fresh 256-bit token. Nothing in the library calls this: an application or `engram inspect` does.
 */
export async function startInspector(config: InspectorServerConfig): Promise<InspectorServer> {
  const port = config.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new EngramInspectorError('ENGRAM_INSPECTOR_INVALID_CONFIG', 'port must be an integer in 0..65535');
  }
  const token = config.token ?? createInspectorToken();
  const handler = createInspectorHandler({ ...config, token });
  const server = createServer(handler);
  const host = '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => {
      reject(
        new EngramInspectorError('ENGRAM_INSPECTOR_LISTEN_FAILED', `cannot listen on ${host}:${port}`, {
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
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${bound}/?token=${token}`,
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
