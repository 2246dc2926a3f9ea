// `--workers N`: N processes serving one listening port (node:cluster: the primary hands each new
// connection to a worker in turn). A worker is the whole proxy; what one learns of a session (its
// version, capabilities, tool catalogue, its end: exchange/sessions.ts SessionFact) it sends to the
// primary, which passes it to every other worker, so a session whose requests land on different
// workers is judged as on one. The primary serves no traffic: it starts the workers, relays the
// facts, restarts a worker that dies, passes SIGHUP on to the workers that are listening, and on
// SIGINT/SIGTERM stops them all. Port 0 is resolved once, before the first fork: every worker,
// restarted ones too, listens on that one port.
import cluster, { type Worker } from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Logger } from '../sinks/logger.ts';
import type { SessionFact, SessionStore } from '../exchange/sessions.ts';

const FACT = 'mcp-warden:session-fact';
const LISTENING = 'mcp-warden:listening';
/** The port every worker listens on when the command said port 0 (resolved by the primary). */
const WORKER_PORT_ENV = 'MCP_WARDEN_WORKER_PORT';
/** Restarts allowed within RESTART_WINDOW_MS before the primary gives up (a worker that cannot start). */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 30_000;

interface FactMessage {
  type: typeof FACT;
  fact: SessionFact;
}

const isFact = (m: unknown): m is FactMessage => typeof m === 'object' && m !== null && (m as { type?: unknown }).type === FACT;
const isListening = (m: unknown): m is { type: typeof LISTENING } =>
  typeof m === 'object' && m !== null && (m as { type?: unknown }).type === LISTENING;

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

/** In a worker: the port to listen on (for port 0, the one the primary chose). */
export const workerPort = (asked: number): number => (asked === 0 ? Number(process.env[WORKER_PORT_ENV] ?? 0) : asked);

/**
 * In a worker: what its sessions learn goes to the others, and theirs comes in. A fact that cannot
 * be sent (a value nested too deep to serialise) stays this worker's: logged once, never thrown
 * into the exchange that taught it.
 */
export function shareSessions(sessions: SessionStore, now: () => number, logger: Logger): void {
  let warned = false;
  const send = (fact: SessionFact): boolean => {
    try {
      process.send?.({ type: FACT, fact } satisfies FactMessage, undefined, {}, () => {});
      return true;
    } catch (err) {
      if (!warned)
        logger.warn({ fact: fact.kind, err: (err as Error).message }, 'a session fact could not be shared with the other workers');
      warned = true;
      return false;
    }
  };
  // Capabilities nested too deep to send: the version (and the session) still reach the others.
  sessions.share = (fact) =>
    void (send(fact) || (fact.kind === 'initialized' && send({ ...fact, serverCapabilities: undefined, clientCapabilities: undefined })));
  process.on('message', (m: unknown) => {
    if (isFact(m)) sessions.learn(m.fact, now(), undefined, true);
  });
}

/** In a worker: tells the primary it listens: it may now be sent SIGHUP, and readiness counts it. */
export const announceListening = (): void => void process.send?.({ type: LISTENING }, undefined, {}, () => {});

export interface Primary {
  /** Resolves when every worker has exited after stop(). */
  stopped: Promise<void>;
  stop(signal: NodeJS.Signals): void;
  reload(): void;
  /** Workers running now. */
  readonly count: number;
  /** Workers listening now (readiness). */
  readonly listening: number;
}

/** In the primary: starts `n` workers (this same command, in cluster mode; `port`: for port 0, the one chosen) and keeps them running until stop(). */
export function startWorkers(n: number, port: number | undefined, logger: Logger, onGiveUp: (reason: string) => void): Primary {
  const workers = new Set<Worker>();
  const listening = new Set<Worker>();
  const restarts: number[] = [];
  let stopping = false;
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });

  const fork = (): void => {
    const worker = cluster.fork(port === undefined ? {} : { [WORKER_PORT_ENV]: String(port) });
    workers.add(worker);
    // A send to a worker that just died fails with EPIPE: an 'error' event, never the primary's end.
    worker.on('error', () => {});
    worker.on('message', (m: unknown) => {
      if (isListening(m)) return void listening.add(worker);
      if (!isFact(m)) return;
      for (const other of workers) if (other !== worker && other.isConnected()) other.send(m, undefined, () => {});
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      listening.delete(worker);
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
    get listening() {
      return listening.size;
    },
    stop(signal) {
      if (stopping) return;
      stopping = true;
      if (workers.size === 0) resolveStopped();
      for (const worker of workers) worker.process.kill(signal);
    },
    reload() {
      // A worker still starting has no SIGHUP handler yet (the signal would kill it); it reads the policy file as it starts.
      for (const worker of listening) worker.process.kill('SIGHUP');
    },
  };
}
