// Starts a server on host:port and says where it listens, or why it cannot (naming the flag that gave the address); finds a free port.
import { createServer, type AddressInfo, type Server } from 'node:net';

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

/** The exit code of a command that could not listen on an address it was given (in use, not permitted, not this host's). */
export const EXIT_CANNOT_LISTEN = 3;

/** An address a command could not listen on: one line that names the flag and says what to do; exits EXIT_CANNOT_LISTEN. */
export class CannotListen extends Error {
  readonly exitCode = EXIT_CANNOT_LISTEN;

  constructor(flag: string, host: string, port: number, cause: NodeJS.ErrnoException) {
    const at = `${host.includes(':') ? `[${host}]` : host}:${port}`;
    const why =
      cause.code === 'EADDRINUSE'
        ? 'the port is in use (EADDRINUSE): stop what holds it, or give another port'
        : cause.code === 'EACCES'
          ? 'not permitted (EACCES): ports below 1024 need privileges; give a port from 1024 up'
          : cause.code === 'EADDRNOTAVAIL'
            ? 'no interface of this host has that address (EADDRNOTAVAIL): give one of its addresses, or 0.0.0.0'
            : cause.message;
    super(`cannot listen on ${at} (${flag}): ${why}`, { cause });
    this.name = 'CannotListen';
  }
}

/** Listens `at` the address `flag` gave; one it cannot have becomes a CannotListen naming the flag. */
export async function listenAs(
  flag: string,
  at: { host: string; port: number },
  listen: (port: number, host: string) => Promise<URL>,
): Promise<URL> {
  try {
    return await listen(at.port, at.host);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (typeof e.code === 'string' && (e.syscall === 'listen' || e.syscall === 'bind')) throw new CannotListen(flag, at.host, at.port, e);
    throw err;
  }
}

/** Whether `host:port` can be listened on now (a CannotListen naming `flag` when not); nothing stays open. */
export async function probeListen(flag: string, host: string, port: number): Promise<void> {
  const probe = createServer();
  await listenAs(flag, { host, port }, (p, h) => listenOn(probe, p, h));
  await new Promise<void>((resolve) => probe.close(() => resolve()));
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
