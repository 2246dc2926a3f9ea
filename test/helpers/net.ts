// Socket helpers for tests: every server listens on 127.0.0.1 port 0 and is torn down with all of
// its connections, so a test run never leaves a handle open.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on 127.0.0.1 on an ephemeral port; resolves to the base URL `http://127.0.0.1:PORT/`. */
export function listen(server: Server): Promise<URL> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', onError);
      const { port } = server.address() as AddressInfo;
      resolve(new URL(`http://127.0.0.1:${port}/`));
    });
  });
}

/**
 * Stops accepting, destroys every open connection (idle keep-alive sockets and live SSE streams
 * alike) and resolves once the server has closed. Safe to call twice or on a server that never
 * listened.
 */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
