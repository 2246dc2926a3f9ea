// Starts a node:http server on host:port and says where it listens.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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
