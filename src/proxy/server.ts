// The proxy process: a node:http server that sends the MCP endpoint through the pipeline and every
// other path through the pass-through, plus the timers that expire idle state.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { DEFAULT_LIMITS, type Limits } from '../config/defaults.ts';
import { Engine } from '../engine/engine.ts';
import type { Judged } from '../engine/plans.ts';
import type { SessionStore } from '../exchange/sessions.ts';
import { ProxyError } from '../errors.ts';
import { listenOn } from './listen.ts';
import { ClientDepartures, isDeparture } from './client-departures.ts';
import { upstreamReachable } from './upstream-probe.ts';
import { rawProxyError, sendProxyError } from '../transport/egress.ts';
import { firstValue, H } from '../mcp/headers.ts';
import { defaultPolicy } from '../config/compile.ts';
import type { Policy } from '../config/types.ts';
import { runtimeFactory } from '../config/runtime.ts';
import { REWRITABLE } from '../rewrite/rewriters.ts';
import { CaptureSink } from '../sinks/capture.ts';
import { Metrics } from '../sinks/metrics.ts';
import type { Tracing } from '../sinks/tracing.ts';
import type { LiveReport } from '../report/live.ts';
import { recordJudged } from '../sinks/judged.ts';
import { redactTarget, redactUrl } from '../sinks/redact.ts';
import { MisconfigurationWatch } from '../transport/misconfiguration.ts';
import { BodyBudget } from '../transport/ingress.ts';
import { createHostGuard, type HostGuard, type HostGuardOptions, refusalMessage } from '../transport/host-guard.ts';
import { createMcpEndpoint } from '../transport/mcp-endpoint.ts';
import { createPassthrough } from '../transport/passthrough.ts';
import { MetadataLocations, publicOrigin, rewriteWwwAuthenticate } from '../transport/public-url.ts';
import { endpointMatcher, targetPath } from '../transport/target.ts';
import { McpRouter } from '../transport/routing.ts';
import type { TransportMode } from '../mcp/transport-modes.ts';
import { LegacySessions } from '../transport/legacy-sse.ts';
import { Upstream, type UpstreamResponse } from '../transport/upstream.ts';
import { JudgingQueue } from '../transport/judge-later.ts';
import type { LegacyPeers } from './peers.ts';
import { headersKey } from '../exchange/flow.ts';
import { shareSessions, type SharedSessions } from '../state/shared.ts';
import { ClaimBook } from '../exchange/claims.ts';

export interface ProxyOptions {
  upstream: URL;
  /** Path of the MCP endpoint on the proxy; defaults to the upstream URL's path. */
  path?: string;
  /** Address clients use to reach the proxy, for OAuth metadata; defaults to what each client used. */
  publicUrl?: URL;
  limits?: Partial<Limits>;
  logger: Logger;
  /** The policy in force (a PolicyStore's current()); default: audit mode, every rule logged. */
  policy?: () => Policy;
  /** Host and Origin values clients may send; default: loopback names on a loopback listener, else any. */
  guard?: HostGuardOptions;
  /** Which Host the upstream gets: the client's (default, as `proxy_set_header Host $http_host`) or the upstream URL's (virtual-hosted upstreams). */
  hostHeader?: 'client' | 'upstream';
  /** Under audit, the policy whose actions each violation record reports as `shadow` (what enforcing it would do). */
  shadow?: Policy;
  /** OpenTelemetry export: a span per exchange (the caller shuts it down). */
  tracing?: Tracing;
  /** The live report the admin port serves (/report, /report.json). */
  report?: LiveReport;
  /** Which MCP transport the upstream speaks: learned per stream (auto, the default), the legacy HTTP+SSE, or Streamable HTTP only. */
  transport?: TransportMode;
  /** With `--workers`: a legacy session's POST goes to the worker holding its stream (peers.ts). */
  peers?: LegacyPeers;
  /** With `--state redis://`: what this replica learns of sessions is shared with the others, and theirs comes in. */
  state?: SharedSessions;
}

export interface RunningProxy {
  /** The proxy's MCP endpoint URL. */
  url: URL;
  server: Server;
  close(): Promise<void>;
}

/** The proxy createProxy builds: not listening until listen(). */
export interface Proxy {
  server: Server;
  /** What the proxy remembers of sessions (versions, capabilities, tool catalogues). */
  sessions: SessionStore;
  /** The legacy SSE sessions whose streams pass through the proxy (and, with `--workers`, another worker's). */
  legacy: LegacySessions;
  metrics: Metrics;
  /** True once shutdown began: readiness probes report it. */
  draining(): boolean;
  /** Stops accepting connections, lets in-flight exchanges finish for up to `deadlineMs`, then closes the rest; whether all finished. */
  shutdown(deadlineMs?: number): Promise<boolean>;
  /** Listens on host:port (0: any free port); the MCP endpoint's URL is in the result. */
  listen(port: number, host: string): Promise<RunningProxy>;
  /** Closes everything now; calling it again returns the same promise. */
  close(): Promise<void>;
}

/** Resolves once `count()` is 0, or false after `deadlineMs`. */
function drained(count: () => number, deadlineMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const started = Date.now();
    const check = (): void => {
      if (count() === 0) resolve(true);
      else if (Date.now() - started >= deadlineMs) resolve(false);
      else setTimeout(check, 25);
    };
    check();
  });
}

/** How many Host headers a request carried (node keeps only the first in `req.headers`). */
function hostHeaders(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') n++;
  return n;
}

/** A proxy in front of `options.upstream`, judging every exchange by the policy in force. */
export function createProxy(options: ProxyOptions): Proxy {
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const { logger } = options;
  const mcpPath = options.path ?? options.upstream.pathname;
  const hostHeader = options.hostHeader ?? 'client';
  // The upstream's own time goes to the metrics made below, once requests flow.
  const upstream = new Upstream(options.upstream, limits, hostHeader, (timedAs, seconds) => metrics.upstreamTimed(timedAs, seconds));
  const isEndpoint = endpointMatcher(mcpPath);
  const legacy = new LegacySessions(options.transport ?? 'auto', mcpPath, limits.maxSessions);
  // Set at listen(): the default allow-list depends on the address the proxy listens on.
  let guard: HostGuard = createHostGuard(options.guard ?? {}, '127.0.0.1');
  const fallback = defaultPolicy(REWRITABLE);
  const policy = options.policy ?? (() => fallback);
  const judging = new JudgingQueue((err) => logger.error({ err }, 'proxy error'));
  const engine = new Engine({
    limits,
    runtime: runtimeFactory((rule, err) => logger.error({ rule, err }, 'rule failed')),
    policy,
    now: () => performance.now(),
  });
  const { sessions } = engine;
  const { state } = options;
  const recallSession = state ? shareSessions(sessions, state, () => performance.now()) : undefined;
  const claims = state?.claim ? new ClaimBook(state.claim.bind(state)) : undefined;
  if (claims) engine.claimRequestIds(claims);
  const metadata = new MetadataLocations();
  const metrics = new Metrics({
    sessions: () => sessions.size,
    openRequests: () => engine.openRequests,
    upstreamUp: () => upstreamReachable(options.upstream),
  });
  const passthrough = createPassthrough({
    upstream: options.upstream,
    publicUrl: options.publicUrl,
    logger,
    hostHeader,
    metadata,
    // The same bound as the MCP endpoint's (--timeout, upstream.timeout): every path waits as long.
    timeoutMs: limits.upstreamHeadersTimeoutMs,
  });
  const upstreamOrigin = options.upstream.origin;

  const fixHeaders = (req: IncomingMessage, headers: UpstreamResponse['headers']): UpstreamResponse['headers'] => {
    const challenge = headers[H.wwwAuthenticate];
    if (typeof challenge !== 'string') return headers;
    metadata.learn(challenge, upstreamOrigin);
    return { ...headers, [H.wwwAuthenticate]: rewriteWwwAuthenticate(challenge, upstreamOrigin, publicOrigin(req, options.publicUrl)) };
  };

  // One capture file per path a policy names; a reload to another path opens another.
  const captures = new Map<string, CaptureSink>();
  const capture = (path: string): CaptureSink => {
    let sink = captures.get(path);
    if (!sink) captures.set(path, (sink = new CaptureSink(path, logger, () => metrics.captureError())));
    return sink;
  };
  const router = new McpRouter(
    isEndpoint,
    (target) => legacy.isMessagePath(target),
    () => policy().scope.passthrough,
    limits.maxRequestBytes,
  );
  // A path the policy relays unjudged is never another replica's legacy message path (peers.ts).
  legacy.scopedOut = (path) => router.scopedOut(path);
  const upstreamPath = options.upstream.pathname;
  /** The configured endpoint goes to the upstream URL's path; any other path to itself. */
  const upstreamTarget = (req: IncomingMessage): string => {
    const target = req.url ?? '/';
    const q = target.indexOf('?');
    const query = q >= 0 ? target.slice(q) : '';
    return (isEndpoint(target) ? upstreamPath : targetPath(target)) + query;
  };
  const misconfiguration = new MisconfigurationWatch();
  const endpoint = createMcpEndpoint({
    upstream,
    limits,
    logger,
    engine,
    judging,
    now: () => performance.now(),
    capture,
    metrics,
    bodies: new BodyBudget(limits.maxBufferedRequestBytes),
    fixHeaders,
    legacy,
    publicOrigin: (req) => publicOrigin(req, options.publicUrl),
    shadow: options.shadow,
    tracing: options.tracing,
    report: options.report,
    router,
    upstreamTarget,
    notMcp: (req, res, body) => passthrough.handle(req, res, { body }),
    recall:
      recallSession &&
      (async (req, messages) => {
        // An initialize without a session id opens a session: no replica knows it yet.
        const opens = messages.length > 0 && messages.every((m) => m.kind === 'request' && m.method === 'initialize');
        const sessionId = firstValue(req.headers[H.sessionId]);
        if (opens && sessionId === undefined) return;
        // Both in one round trip's time: what the session is, and whether its request ids are in flight elsewhere.
        // Claimed in the scope the flow gives them: a session id, when there is one (an empty header names none).
        await Promise.all([recallSession(headersKey(req.headers)), sessionId ? claims?.claim(sessionId, messages) : undefined]);
      }),
    upstreamAnswered: (path, status, contentType) => {
      const wrong = misconfiguration.answered(path, status, contentType);
      if (wrong)
        logger.error(
          {
            upstream: redactUrl(options.upstream),
            paths: wrong.paths.map(redactTarget),
            status: wrong.status,
            contentType: wrong.contentType || undefined,
            hint: 'the upstream answered MCP requests with a page no MCP endpoint gives: check that --upstream names the MCP endpoint (scheme, host, port and path)',
          },
          'upstream probably misconfigured',
        );
    },
  });

  // Requests being served now (SSE streams included): a graceful shutdown waits for them.
  let inFlight = 0;
  let draining = false;
  let closing: Promise<void> | undefined;
  // Node checks the client timeouts below only every connectionsCheckingInterval (30 s by default).
  const checkInterval = Math.min(1000, limits.clientHeadersTimeoutMs);
  const server = createServer({ connectionsCheckingInterval: checkInterval }, (req, res) => {
    inFlight++;
    res.once('close', () => inFlight--);
    if (draining) res.setHeader('connection', 'close');
    // Two Host headers make the target ambiguous; RFC 9112 §3.2 asks for a 400 (node keeps the first).
    if (hostHeaders(req.rawHeaders) > 1) {
      metrics.proxyError('WARDEN_BAD_REQUEST');
      sendProxyError(res, new ProxyError('WARDEN_BAD_REQUEST', 'Request has more than one Host header'), [], false);
      return;
    }
    const refused = guard.check(req.headers.host, firstValue(req.headers.origin));
    if (refused) {
      logger.warn(
        { reason: refused, host: req.headers.host, origin: req.headers.origin, peer: req.socket.remoteAddress, method: req.method },
        'request refused',
      );
      const code = refused === 'host' ? 'WARDEN_FORBIDDEN_HOST' : 'WARDEN_FORBIDDEN_ORIGIN';
      metrics.proxyError(code);
      const message = refusalMessage(refused, refused === 'host' ? req.headers.host : firstValue(req.headers.origin));
      sendProxyError(res, new ProxyError(code, message), [], false);
      return;
    }
    // With --workers: a POST of a legacy session another worker holds the stream of is judged there.
    if (options.peers?.forward(req, res, () => server.emit('request', req, res))) return;
    // MCP traffic by what it is (routing.ts): every spelling of the endpoint's path, a legacy
    // session's message path, JSON-RPC on any other path; the rest passes through.
    const route = router.route(req);
    if ((route === 'endpoint' || route === 'sniff') && endpoint.handle(req, res, route === 'sniff')) return;
    if (route === 'scoped-out' || route === 'json-post') {
      metrics.unjudged(route);
      options.report?.passthrough(route);
      return passthrough.handle(req, res, { unjudged: route });
    }
    passthrough.handle(req, res);
  });
  // A client that trickles its headers or body (slowloris) is cut off; responses may stream for long.
  server.headersTimeout = limits.clientHeadersTimeoutMs;
  server.requestTimeout = limits.clientRequestTimeoutMs;
  // Node times a request head out only once it has begun: a connection that never sends one (or
  // never finishes its first) is closed here. Past the connection cap a newcomer gets a 503.
  let connections = 0;
  const departures = new ClientDepartures(logger, metrics);
  const firstRequest = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('connection', (socket: Socket) => {
    if (connections >= limits.maxConnections) {
      logger.warn({ peer: socket.remoteAddress, connections, limit: limits.maxConnections }, 'connection refused');
      metrics.proxyError('WARDEN_OVERLOADED');
      // Written and closed at once: the newcomer holds no file descriptor past its answer.
      socket.end(rawProxyError(new ProxyError('WARDEN_OVERLOADED', 'Proxy is at its connection limit; retry later')), () =>
        socket.destroy(),
      );
      return;
    }
    connections++;
    departures.watch(socket);
    socket.once('close', () => {
      connections--;
      clearTimeout(firstRequest.get(socket));
    });
    // Later than node's own check (every checkInterval), so a head that began gets its 408 first.
    const timer = setTimeout(
      () => {
        logger.debug({ peer: socket.remoteAddress, timeoutMs: limits.clientHeadersTimeoutMs }, 'idle connection closed');
        socket.destroy();
      },
      limits.clientHeadersTimeoutMs + checkInterval + 50,
    );
    timer.unref();
    firstRequest.set(socket, timer);
  });
  server.on('request', (req: IncomingMessage) => {
    const timer = firstRequest.get(req.socket);
    if (timer) {
      clearTimeout(timer);
      firstRequest.delete(req.socket);
    }
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    // A client that went away gets no answer and is no proxy error.
    if (isDeparture(err)) {
      departures.left(socket as Socket, err.code!);
      return void socket.destroy();
    }
    // Malformed, oversized or too slow HTTP from a client: a JSON-RPC error with the fitting
    // status, then the socket is destroyed (half-closed sockets would pile up), never a crash.
    const code =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? 'WARDEN_CLIENT_TIMEOUT'
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? 'WARDEN_HEADERS_TOO_LARGE'
          : 'WARDEN_BAD_REQUEST';
    logger.warn({ code: err.code, proxyError: code, peer: (socket as Socket).remoteAddress }, 'client error');
    metrics.proxyError(code);
    // As node's own handler: answer only if no response has begun on the socket.
    if (socket.writable && !(socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent)
      socket.end(rawProxyError(new ProxyError(code)), () => socket.destroy());
    else socket.destroy(err);
  });

  // What the engine ended on its own (idle, not resumed, shut down): recorded as it is handed out.
  const recordEnded = (ended: readonly Judged[]): void =>
    recordJudged(
      { logger, metrics, capture, shadow: options.shadow, tracing: options.tracing, report: options.report },
      policy(),
      undefined,
      ended,
    );
  const sweeper = setInterval(
    () => {
      judging.flush();
      recordEnded(engine.tick(performance.now()));
    },
    Math.min(limits.requestIdleMs, limits.sessionIdleMs, limits.resumeWindowMs, 5_000),
  );
  sweeper.unref();

  return {
    server,
    sessions,
    legacy,
    metrics,
    /** True once shutdown began: readiness probes report it. */
    draining: () => draining,
    /**
     * Stops accepting connections, lets in-flight exchanges and streams finish for up to
     * `deadlineMs`, then closes what is left. Resolves with whether everything finished in time.
     */
    async shutdown(deadlineMs: number = limits.shutdownTimeoutMs): Promise<boolean> {
      draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const finished = await drained(() => inFlight, deadlineMs);
      if (!finished) logger.warn({ inFlight, deadlineMs }, 'shutdown deadline reached; closing what is left');
      await this.close();
      await closed;
      return finished;
    },
    async listen(port: number, host: string): Promise<RunningProxy> {
      guard = createHostGuard(options.guard ?? {}, host);
      const url = new URL(mcpPath, await listenOn(server, port, host));
      logger.info({ listen: url.href, upstream: redactUrl(options.upstream), hostHeader, ...guard.describe() }, 'listening');
      return { url, server, close: () => this.close() };
    },
    /** Closes everything now; calling it again returns the same promise. */
    close(): Promise<void> {
      closing ??= (async () => {
        clearInterval(sweeper);
        await new Promise<void>((resolve) => {
          if (!server.listening) return resolve();
          server.close(() => resolve());
          server.closeAllConnections();
        });
        server.closeAllConnections();
        judging.flush();
        // A request still waiting gets its record now: a clean log must not hide one never answered.
        recordEnded(engine.tick(performance.now()));
        recordEnded(engine.giveUpAll());
        passthrough.close();
        await upstream.close();
        await Promise.all([...captures.values()].map((c) => c.close()));
      })();
      return closing;
    },
  };
}
