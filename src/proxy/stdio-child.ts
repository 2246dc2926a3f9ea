// The stdio server's process, started before the rest of mcp-warden loads: its own start-up (a
// Node server takes a quarter of a second) then overlaps with loading the engine and the rules,
// instead of following it. Nothing is read from it here: its pipes wait for the relay.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

export interface ServerChild {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Resolves once the process runs (undefined), or could not be started (the error: ENOENT, EACCES). */
  started: Promise<NodeJS.ErrnoException | undefined>;
}

export function spawnServer(command: string, args: readonly string[]): ServerChild {
  const child = spawn(command, [...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  // Listened to at once: a failed spawn's 'error' comes on the next tick, long before the relay is there.
  const started = new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', (err: NodeJS.ErrnoException) => resolve(err));
  });
  return { child, started };
}
