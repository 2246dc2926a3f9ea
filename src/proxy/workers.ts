// `--workers N`: N processes serving one listening port (node:cluster: the primary hands each new
// connection to a worker in turn). A worker is the whole proxy; what one learns of a session (its
// version, capabilities, tool catalogue, its end: exchange/sessions.ts SessionFact) goes to the
// others through the primary (state/worker-relay.ts, the worker's side: one order for all, and the
// sessions each one's traffic used), unless they share it through Redis (--state).
// A legacy HTTP+SSE session is judged whole by the worker holding its GET stream (peers.ts): that
// worker tells the others which session it holds (a LegacyStreamFact, through the primary) and
// where it takes forwarded POSTs; the primary remembers both, so that a worker that starts later
// learns them before it listens, and when a worker exits tells the others that its sessions are
// gone.
// The primary serves no traffic: it starts the workers, relays the facts and touches, restarts a
// worker that dies, passes SIGHUP on to the workers that are listening, and on SIGINT/SIGTERM
// stops them all. Port 0 is resolved once, before the first fork: every worker, restarted ones
// too, listens on that one port.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../sinks/logger.ts';
import { EXIT_CANNOT_LISTEN } from './listen.ts';
import { CAPTURE_KEY_ENV, captureKey } from '../sinks/capture.ts';
import type { LegacySessions, LegacyStreamFact } from '../transport/legacy-sse.ts';
import type { LegacyPeers, PeerAddress } from './peers.ts';
import { isFact, isTouched, type TouchedMessage, typed } from '../state/worker-relay.ts';

const LISTENING = 'mcp-warden:listening';
const STREAM = 'mcp-warden:legacy-stream';
const PEER = 'mcp-warden:peer';
const GONE = 'mcp-warden:worker-gone';
/** The port every worker listens on when the command said port 0 (resolved by the primary). */
const WORKER_PORT_ENV = 'MCP_WARDEN_WORKER_PORT';
/** Restarts allowed within RESTART_WINDOW_MS before the primary gives up (a worker that cannot start). */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 30_000;

interface StreamMessage {
  type: typeof STREAM;
  fact: LegacyStreamFact;
  /** The worker holding the stream (set by the primary). */
  origin?: number;
}

interface PeerMessage {
  type: typeof PEER;
  address: PeerAddress;
  /** Whose address (set by the primary). */
  worker?: number;
}

interface GoneMessage {
  type: typeof GONE;
  worker: number;
}

const isStream = typed<StreamMessage>(STREAM);
const isPeer = typed<PeerMessage>(PEER);
const isGone = typed<GoneMessage>(GONE);
const isListening = typed<{ type: typeof LISTENING }>(LISTENING);

/** Whether this process is a worker of `--workers` (it serves traffic and shares what it learns). */
export const isWorker = (): boolean => cluster.isWorker;

/** In a worker: the port to listen on (for port 0, the one the primary chose). */
export const workerPort = (asked: number): number => (asked === 0 ? Number(process.env[WORKER_PORT_ENV] ?? 0) : asked);

/**
 * In a worker: the legacy streams it holds are known to the others and theirs here, it takes the
 * POSTs they forward (peers.ts), and a worker's exit drops the sessions it held. Call before the
 * proxy listens: the primary then answers this worker's address with every peer and stream known
 * so far, on the channel it later hands this worker its connections on.
 */
export async function shareLegacyStreams(
  proxy: Parameters<LegacyPeers['listen']>[0] & { legacy: LegacySessions },
  peers: LegacyPeers,
  now: () => number,
): Promise<void> {
  const self = cluster.worker?.id;
  proxy.legacy.share = (fact) => void process.send?.({ type: STREAM, fact } satisfies StreamMessage, undefined, {}, () => {});
  process.on('message', (m: unknown) => {
    if (isStream(m) && m.origin !== undefined && m.origin !== self) {
      proxy.legacy.learnPeer(m.fact, String(m.origin), now());
      peers.learned();
    } else if (isPeer(m) && m.worker !== undefined && m.worker !== self) peers.setPeer(String(m.worker), m.address);
    else if (isGone(m)) {
      peers.setPeer(String(m.worker), undefined);
      proxy.legacy.forgetHolder(String(m.worker));
    }
  });
  const address = await peers.listen(proxy);
  process.send?.({ type: PEER, address } satisfies PeerMessage, undefined, {}, () => {});
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
export function startWorkers(
  n: number,
  port: number | undefined,
  logger: Logger,
  onGiveUp: (reason: string, exitCode: number) => void,
): Primary {
  const workers = new Set<Worker>();
  const listening = new Set<Worker>();
  const restarts: number[] = [];
  // Where each worker takes forwarded POSTs, and which worker holds each legacy session's stream.
  const addresses = new Map<number, PeerAddress>();
  const streams = new Map<string, { holder: number; fact: LegacyStreamFact }>();
  const others = (worker: Worker, message: TouchedMessage | StreamMessage | PeerMessage): void => {
    for (const other of workers) if (other !== worker && other.isConnected()) other.send(message, undefined, () => {});
  };
  let stopping = false;
  let resolveStopped: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    resolveStopped = resolve;
  });

  const fork = (): void => {
    // One capture key for all: a credential gets one label in every worker's capture lines.
    const worker = cluster.fork({ [CAPTURE_KEY_ENV]: captureKey(), ...(port === undefined ? {} : { [WORKER_PORT_ENV]: String(port) }) });
    workers.add(worker);
    // A send to a worker that just died fails with EPIPE: an 'error' event, never the primary's end.
    worker.on('error', () => {});
    worker.on('message', (m: unknown) => {
      if (isListening(m)) return void listening.add(worker);
      // A fact goes to every worker, its sender too (one order for all); touches to the others.
      if (isFact(m)) for (const each of workers) if (each.isConnected()) each.send({ ...m, origin: worker.id }, undefined, () => {});
      if (isTouched(m)) others(worker, m);
      if (isStream(m)) {
        const { key } = m.fact;
        if (m.fact.kind === 'open') streams.set(key, { holder: worker.id, fact: m.fact });
        else if (streams.get(key)?.holder === worker.id) streams.delete(key);
        others(worker, { ...m, origin: worker.id } satisfies StreamMessage);
      }
      if (isPeer(m)) {
        // A worker that starts learns every peer and stream known so far; then the others learn it.
        const send = (message: PeerMessage | StreamMessage) => worker.send(message, undefined, () => {});
        for (const [id, address] of addresses) send({ type: PEER, address, worker: id });
        for (const { holder, fact } of streams.values()) send({ type: STREAM, fact, origin: holder });
        addresses.set(worker.id, m.address);
        others(worker, { type: PEER, address: m.address, worker: worker.id } satisfies PeerMessage);
      }
    });
    worker.once('exit', (code, signal) => {
      workers.delete(worker);
      listening.delete(worker);
      // Its legacy sessions went with it: their POSTs now find no session, on every worker.
      addresses.delete(worker.id);
      for (const [key, { holder }] of streams) if (holder === worker.id) streams.delete(key);
      for (const other of workers)
        if (other.isConnected()) other.send({ type: GONE, worker: worker.id } satisfies GoneMessage, undefined, () => {});
      if (stopping) {
        if (workers.size === 0) resolveStopped();
        return;
      }
      // A worker that cannot listen (the port taken since the primary tried it): another would not either.
      if (code === EXIT_CANNOT_LISTEN) {
        logger.error({ worker: worker.id, code }, 'worker cannot listen; stopping');
        return onGiveUp('a worker cannot listen', EXIT_CANNOT_LISTEN);
      }
      const now = Date.now();
      restarts.push(now);
      while (restarts.length > 0 && restarts[0]! < now - RESTART_WINDOW_MS) restarts.shift();
      if (restarts.length > MAX_RESTARTS) {
        logger.error({ worker: worker.id, code, signal, restarts: restarts.length }, 'worker exited; too many restarts, stopping');
        return onGiveUp('workers kept exiting', 1);
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
