// `--workers N`: N processes serving one listening port (node:cluster: the primary hands each new
// connection to a worker in turn). A worker is the whole proxy; what one learns of a session (its
// version, capabilities, tool catalogue, its end: exchange/sessions.ts SessionFact) it sends to the
// primary, which passes it to every other worker, so a session whose requests land on different
// workers is judged as on one. The primary serves no traffic: it starts the workers, relays the
// facts, restarts a worker that dies, passes SIGHUP on, and on SIGINT/SIGTERM stops them all.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from '../sinks/logger.ts';
import type { SessionFact, SessionStore } from '../exchange/sessions.ts';

const FACT = 'mcp-warden:session-fact';
/** Restarts allowed within RESTART_WINDOW_MS before the primary gives up (a worker that cannot start). */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 30_000;

interface FactMessage {
  type: typeof FACT;
  fact: SessionFact;
}

const isFact = (m: unknown): m is FactMessage => typeof m === 'object' && m !== null && (m as { type?: unknown }).type === FACT;

/** `--workers`: a count, or `auto` (the cores this process may use). */
export function parseWorkers(value: string): number {
  if (value === 'auto') return availableParallelism();
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 256)
    throw new Error(`--workers takes a number from 1 to 256, or auto (got ${JSON.stringify(value)})`);
  return n;
}

/** Whether this process is a worker of `--workers` (it serves traffic and shares what it learns). */
export const isWorker = (): boolean => cluster.isWorker;

/** In a worker: what its sessions learn goes to the others, and theirs comes in. */
export function shareSessions(sessions: SessionStore, now: () => number): void {
  sessions.share = (fact) => process.send?.({ type: FACT, fact } satisfies FactMessage);
  process.on('message', (m: unknown) => {
    if (isFact(m)) sessions.learn(m.fact, now(), undefined, true);
  });
}

export interface Primary {
  /** Resolves when every worker has exited after stop(). */
  stopped: Promise<void>;
  stop(signal: NodeJS.Signals): void;
  reload(): void;
  /** Workers running now. */
  readonly count: number;
}

/** In the primary: starts `n` workers (this same command, in cluster mode) and keeps them running until stop(). */
export function startWorkers(n: number, logger: Logger, onGiveUp: (reason: string) => void): Primary {
  const workers = new Set<Worker>();
  const restarts: number[] = [];
  let stopping = false;
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });

  const fork = (): void => {
    const worker = cluster.fork();
    workers.add(worker);
    worker.on('message', (m: unknown) => {
      if (!isFact(m)) return;
      for (const other of workers) if (other !== worker && other.isConnected()) other.send(m);
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) {
        if (workers.size === 0) resolveStopped();
        return;
      }
      const now = Date.now();
      restarts.push(now);
      while (restarts.length > 0 && restarts[0]! < now - RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length > MAX_RESTARTS) {
        logger.error({ worker: worker.id, code, signal, restarts: restarts.length }, 'worker exited; too many restarts, stopping');
        return onGiveUp('workers kept exiting');
      }
      logger.error({ worker: worker.id, code, signal }, 'worker exited; starting another');
      fork();
    });
  };
  for (let i = 0; i < n; i++) fork();
  logger.info({ workers: n }, 'workers started');

  return {
    stopped,
    get count() {
      return workers.size;
    },
    stop(signal) {
      if (stopping) return;
      stopping = true;
      if (workers.size === 0) resolveStopped();
      for (const worker of workers) worker.process.kill(signal);
    },
    reload() {
      for (const worker of workers) worker.process.kill('SIGHUP');
    },
  };
}
