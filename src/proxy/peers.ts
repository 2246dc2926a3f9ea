// A legacy HTTP+SSE session's answers all come on its one GET stream, which one process holds,
// while its POSTs may land on any: with `--workers` (node:cluster hands out connections, not
// sessions), and in a fleet of replicas behind a balancer without affinity (`--state redis://`
// with `--peer-address`). The process holding the stream judges the whole session: another that
// gets one of its POSTs forwards that HTTP request, as it came, to the holder, on a port of the
// holder's own that only the proxies know (with the holder's token), and relays the holder's
// answer back as it came. The holder serves it as if it had come from the client (guard, limits,
// judging, relaying upstream; the client's address in X-Forwarded-For), so each exchange is judged
// once, by the process its record names. Which process holds which session, and where it takes
// forwarded POSTs, is learned from the stream facts: through the primary (workers.ts) or through
// Redis (state/redis-streams.ts).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, isIP, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { PEER_BOUNDS } from '../config/defaults.ts';
import { ProxyError } from '../errors.ts';
import type { Logger } from '../sinks/logger.ts';
import { redactTarget } from '../sinks/redact.ts';
import { sendProxyError } from '../transport/egress.ts';
import type { LegacySessions } from '../transport/legacy-sse.ts';

/** Where a process takes the POSTs others forward to it, and the token they must show. */
export interface PeerAddress {
  host: string;
  port: number;
  token: string;
}

const TOKEN = 'x-mcp-warden-peer-token';
/** The client's address as the forwarding worker saw it. */
const CLIENT = 'x-mcp-warden-peer-client';
/** How long a POST naming a session nobody is known to hold waits for its stream's fact (one IPC hop or pub/sub message, well under this). */
const HOLDER_WAIT_MS = PEER_BOUNDS.holderWaitMs;
/** How long a forwarded POST may take to connect to the holder before it is served where it landed (a replica gone with its address). */
const CONNECT_TIMEOUT_MS = PEER_BOUNDS.connectTimeoutMs;
/** Of the holder's answer, what belongs to the hop between the two processes only. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);
/** Forwarded POSTs a process takes at once (one connection each). */
export const MAX_PEER_CONNECTIONS = PEER_BOUNDS.connections;
/**
 * Connections on the peer port that have not shown a valid token yet, at most: past it the oldest
 * of them is closed. A peer's connection shows its token in its first request head, at once; a
 * flood of silent or unauthenticated sockets only pushes out its own, never the peers' (and each
 * is closed anyway past the request-head timeout).
 */
export const MAX_UNPROVEN_PEER_CONNECTIONS = PEER_BOUNDS.unprovenConnections;
/** Peers remembered (the newest): a fleet whose replicas come and go names new ones all the time. */
const MAX_PEERS = PEER_BOUNDS.peers;

/** `raw` (as rawHeaders) without the headers named in `drop`. */
function without(raw: readonly string[], drop: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!drop(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  return out;
}

export class LegacyPeers {
  private readonly token = randomBytes(24).toString('base64url');
  private readonly peers = new Map<string, PeerAddress>();
  /** Requests to serve here whatever session they name: forwarded to this worker, or not deliverable to their holder. */
  private readonly here = new WeakSet<IncomingMessage>();
  /** POSTs waiting for the fact of their session's stream. */
  private readonly waiting = new Set<() => void>();
  private legacy: LegacySessions | undefined;
  /**
   * In a fleet: asks the store where the session a POST names is held (the answer comes as a
   * stream fact). Set, a POST naming a session not known here waits for it even before any peer is known.
   */
  locate: ((target: string) => void) | undefined;
  /** How long a POST naming a session not known here waits for its holder (in a fleet, past the store's read bound too). */
  holderWaitMs: number = HOLDER_WAIT_MS;
  /** Where this process takes forwarded POSTs, once it listens. */
  private own: PeerAddress | undefined;
  /** This process's MCP server (its port: a holder there would be this process). */
  private main: Server | undefined;

  constructor(private readonly logger: Logger) {}

  /**
   * Listens on `at` (default: a loopback port of this process's own, not the cluster's shared
   * one); what comes there with the token is served by `proxy` as its own client's request.
   * Closes with it.
   */
  async listen(
    proxy: { server: Server; legacy: LegacySessions; metrics?: { proxyError(reason: string): void } },
    at: { host: string; port: number } = { host: '127.0.0.1', port: 0 },
  ): Promise<PeerAddress> {
    this.legacy = proxy.legacy;
    this.main = proxy.server;
    /** Connections that have not shown the token yet, oldest first. */
    const unproven = new Set<Socket>();
    // Node checks the timeouts below (a connection that sends no request head in time included)
    // only every connectionsCheckingInterval, 30 s by default.
    const server = createServer({ connectionsCheckingInterval: 1000 }, (req, res) => {
      const token = req.headers[TOKEN];
      if (typeof token !== 'string' || !this.isToken(token)) {
        this.logger.warn({ reason: 'peer-token', peer: req.socket.remoteAddress, method: req.method }, 'request refused');
        proxy.metrics?.proxyError('WARDEN_FORBIDDEN_PEER');
        res.setHeader('connection', 'close');
        return sendProxyError(res, new ProxyError('WARDEN_FORBIDDEN_PEER'), [], false);
      }
      unproven.delete(req.socket);
      const client = req.headers[CLIENT];
      delete req.headers[TOKEN];
      delete req.headers[CLIENT];
      req.rawHeaders = without(req.rawHeaders, (name) => name === TOKEN || name === CLIENT);
      // One request per loopback connection: the socket's address may stand for the client's (an
      // address, never any other text a peer puts there).
      if (typeof client === 'string' && isIP(client) !== 0)
        Object.defineProperty(req.socket, 'remoteAddress', { value: client, configurable: true });
      this.here.add(req);
      proxy.server.emit('request', req, res);
    });
    server.headersTimeout = proxy.server.headersTimeout;
    server.requestTimeout = proxy.server.requestTimeout;
    // Reachable by the network in a fleet: a bounded number of connections (each forwarded POST
    // comes on a connection of its own, at once), those not yet proven bounded apart.
    server.maxConnections = MAX_PEER_CONNECTIONS + MAX_UNPROVEN_PEER_CONNECTIONS;
    server.on('connection', (socket: Socket) => {
      unproven.add(socket);
      socket.once('close', () => unproven.delete(socket));
      if (unproven.size <= MAX_UNPROVEN_PEER_CONNECTIONS) return;
      const oldest = unproven.values().next().value!;
      unproven.delete(oldest);
      oldest.destroy();
    });
    proxy.server.once('close', () => {
      server.close();
      server.closeAllConnections();
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // exclusive: a cluster worker's own port, not one shared through the primary.
      server.listen({ port: at.port, host: at.host, exclusive: true }, resolve);
    });
    this.own = { host: at.host, port: (server.address() as AddressInfo).port, token: this.token };
    return this.own;
  }

  /**
   * Whether `address` is this process itself: its peer address, or one of its ports on a loopback
   * or its own peer host (the store may say so; forwarding there would loop). Another name for the
   * same host is not known here: a request that comes back is served, never sent on (forward()).
   */
  private isOwnListener(address: PeerAddress): boolean {
    const ports = [this.own?.port, (this.main?.address() as AddressInfo | null)?.port];
    if (!ports.includes(address.port)) return false;
    const host = address.host.toLowerCase().replace(/^\[|\]$/g, '');
    return host === this.own?.host || host === 'localhost' || /^127\./.test(host) || host === '::1' || host === '0.0.0.0' || host === '::';
  }

  private isToken(token: string): boolean {
    const a = Buffer.from(token);
    const b = Buffer.from(this.token);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /** Another process's address (it started, or holds a stream), or its end (it exited); false (refused) when the address is this process's own. */
  setPeer(holder: string, address: PeerAddress | undefined): boolean {
    if (address && this.isOwnListener(address)) return false;
    this.peers.delete(holder);
    if (!address) return true;
    this.peers.set(holder, address);
    if (this.peers.size > MAX_PEERS) this.peers.delete(this.peers.keys().next().value!);
    return true;
  }

  /** A stream fact came from another process: POSTs waiting for their session's holder look again. */
  learned(): void {
    const waiting = [...this.waiting];
    this.waiting.clear();
    for (const retry of waiting) retry();
  }

  /**
   * A POST for a legacy session whose stream another process holds goes there (true: it is being
   * forwarded). One naming a session nobody is known to hold waits up to HOLDER_WAIT_MS for the
   * fact of its stream (the client may have read the endpoint event before this process heard of
   * it; in a fleet, the store is asked), then is served here. Should the holder be unreachable before the request went out,
   * `serveHere` serves it here, where the session is unknown (as once its stream is gone).
   */
  forward(req: IncomingMessage, res: ServerResponse, serveHere: () => void): boolean {
    if (req.method !== 'POST' || !this.legacy || this.here.has(req)) return false;
    // Sent by a process already (the store pointed it at this one's MCP port): served here, never
    // sent on, or one POST would loop.
    if (req.headers[TOKEN] !== undefined) return false;
    const target = req.url ?? '/';
    // Only a legacy message POST: never the endpoint's own path, an OAuth or pass-through path.
    if (!this.legacy.forwardable(target)) return false;
    if ((this.peers.size > 0 || this.locate) && this.legacy.unplaced(target, performance.now())) {
      this.awaitHolder(req, res, serveHere);
      return true;
    }
    return this.send(req, res, serveHere);
  }

  /** Waits for the holder of the session `req` names, then forwards it, or serves it here when none turns up in time. */
  private awaitHolder(req: IncomingMessage, res: ServerResponse, serveHere: () => void): void {
    const legacy = this.legacy!;
    const target = req.url ?? '/';
    const settle = (): void => {
      clearTimeout(timer);
      this.waiting.delete(retry);
      res.off('close', settle);
    };
    const retry = (): void => {
      if (legacy.unplaced(target, performance.now())) return void this.waiting.add(retry);
      settle();
      if (!this.send(req, res, serveHere)) this.serveHere(req, serveHere);
    };
    const timer = setTimeout(() => {
      settle();
      this.serveHere(req, serveHere);
    }, this.holderWaitMs);
    this.waiting.add(retry);
    res.once('close', settle);
    this.locate?.(target);
  }

  private serveHere(req: IncomingMessage, serveHere: () => void): void {
    this.here.add(req);
    serveHere();
  }

  private send(req: IncomingMessage, res: ServerResponse, serveHere: () => void): boolean {
    const target = req.url ?? '/';
    const holder = this.legacy?.holderOf(target, performance.now());
    const address = holder === undefined ? undefined : this.peers.get(holder);
    if (!address) return false;
    // The client's own copies of the hop's headers go: joined with ours, they would speak for it.
    const own = without(req.rawHeaders, (name) => name === TOKEN || name === CLIENT);
    const headers = [...own, TOKEN, address.token, CLIENT, req.socket.remoteAddress ?? ''];
    let out: ReturnType<typeof request>;
    try {
      out = request({ host: address.host, port: address.port, method: 'POST', path: target, headers, agent: false });
    } catch (err) {
      // An address node cannot connect to (checked where it came in; never a throw in a request's handler).
      this.logger.warn(
        { to: holder, err: (err as Error).message },
        'the process holding a legacy stream cannot be reached; the POST is served here',
      );
      return false;
    }
    let sent = false;
    const connecting = setTimeout(() => out.destroy(new Error(`no connection within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    out.once('socket', (socket) =>
      socket.once('connect', () => {
        clearTimeout(connecting);
        sent = true;
        pipeline(req, out).catch(() => out.destroy());
      }),
    );
    out.once('close', () => clearTimeout(connecting));
    out.once('response', (answer) => {
      res.writeHead(
        answer.statusCode ?? 502,
        answer.statusMessage,
        without(answer.rawHeaders, (name) => HOP.has(name)),
      );
      pipeline(answer, res).catch(() => res.destroy());
    });
    out.once('error', (err) => {
      if (!sent) {
        this.logger.warn(
          { to: holder, err: err.message },
          'the process holding a legacy stream cannot be reached; the POST is served here',
        );
        return this.serveHere(req, serveHere);
      }
      // The holder went away with the request (and the session's stream): the session is gone.
      if (res.headersSent) return void res.destroy();
      this.logger.warn({ to: holder, target: redactTarget(target), err: err.message }, 'legacy session unknown');
      sendProxyError(res, new ProxyError('WARDEN_UNKNOWN_SESSION'), [], false);
    });
    res.once('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    this.logger.debug({ to: holder, target: redactTarget(target) }, 'legacy POST forwarded to the worker holding its stream');
    return true;
  }
}
