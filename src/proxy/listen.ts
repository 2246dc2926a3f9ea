// Starts a node:http server on host:port and says where it listens; finds a free port.
import type { Server } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';

/** Listens; resolves with the server's base URL (http://host:port/), rejects if the address is taken. */
export async function listenOn(server: Server, port: number, host: string): Promise<URL> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  return new URL(`http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}/`);
}

/** A port free now on `host` (for a port that must be known before a process listens on it). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
