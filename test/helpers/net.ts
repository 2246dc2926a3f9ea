// Socket helpers for tests: every server listens on 127.0.0.1 port 0 and is torn down with all of
// its connections, so a test run never leaves a handle open.
import type { Server } from 'node:http';
import { type AddressInfo, createConnection, createServer as createNetServer } from 'node:net';

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

/**
 * A free port for a child process to listen on, outside the kernel's ephemeral range (32768-60999
 * on Linux): no listen(0) of another test can be handed it between this probe and the child's
 * bind, as can happen with a port from listen(0) closed and passed on (`freePort`).
 */
export async function childPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await bindable(port)) return port;
  }
  throw new Error('no free port found between 20000 and 32000');
}

/** Whether `port` can be listened on, on every address (as a server listening without a host does). */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}

/** Whether something on 127.0.0.1 accepts a connection on `port` now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
