// Debian's redis-server for the tests of a fleet's shared state (--state redis://): one server per
// call on a port of its own, nothing saved to disk, in the foreground so the test owns its PID.
// stop() ends it (SIGTERM); kill() ends it at once (SIGKILL), as a crash would; start it again on
// the same port with restart().
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { childPort } from './net.ts';
import { findNginx } from './nginx.ts';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'];

/** The redis-server binary, or undefined when it is not installed. */
export function findRedis(): string | undefined {
  return CANDIDATES.find((p) => existsSync(p));
}

/**
 * Debian's redis-server and nginx for a fleet's tests: their binaries, or the reason to skip
 * (thrown instead under CI, where .ci/run installs both).
 */
export function fleetParts(): { nginx: string | undefined; redis: string | undefined; skip: string | false } {
  const nginx = findNginx();
  const redis = findRedis();
  if ((!nginx || !redis) && process.env.CI) throw new Error('redis-server or nginx is not installed: .ci/run installs them');
  return {
    nginx,
    redis,
    skip: nginx && redis ? false : 'redis-server or nginx-light is not installed (apt-get install redis-server nginx-light)',
  };
}

/** One command over RESP (inline form), its reply line. */
export function redisCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.once('error', reject);
    socket.on('data', (d: Buffer) => {
      reply += d.toString('utf8');
      if (reply.includes('\r\n')) {
        socket.destroy();
        resolve(reply.split('\r\n')[0]!);
      }
    });
    socket.write(`${command}\r\n`);
  });
}

export interface RunningRedis {
  port: number;
  url: URL;
  /** The server's PID now (another after restart()). */
  pid(): number;
  /** SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash), and waits for the exit. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved). */
  restart(): Promise<void>;
}

/** Starts redis-server on a free port (`password`: clients must AUTH); resolves once it answers PING. */
export async function startRedis(binary: string, password?: string): Promise<RunningRedis> {
  const at = await childPort();
  const auth = password === undefined ? [] : ['--requirepass', password];
  let proc: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    const child = spawn(binary, ['--port', String(at), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...auth], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    proc = child;
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) break;
      // Up: PONG, or (with a password) the refusal of an unauthenticated PING.
      if (/^\+PONG|^-NOAUTH/.test(await redisCommand(at, 'PING').catch(() => ''))) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill('SIGKILL');
    throw new Error(`redis-server did not start on 127.0.0.1:${at}`);
  };
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const child = proc;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  };
  await start();
  return {
    port: at,
    url: new URL(`redis://127.0.0.1:${at}`),
    pid: () => proc?.pid ?? -1,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    restart: start,
  };
}
