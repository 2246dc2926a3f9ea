// `mcp-warden proxy`: settings from the command line, then the policy file, then the defaults;
// the policy is watched and reloaded on SIGHUP; SIGINT/SIGTERM close the proxy and exit 0. With
// `--workers N` (N > 1) this process is the primary (proxy/workers.ts): the admin port, the workers'
// life and their shared session knowledge; each worker runs this same command as the proxy.
import { DEFAULT_LIMITS } from '../config/defaults.ts';
import type { Metrics } from '../sinks/metrics.ts';
import type { StateLocation } from '../state/state-url.ts';
import { createAdminServer } from '../proxy/admin.ts';
import { createProxy } from '../proxy/server.ts';
import { createLogger } from '../sinks/logger.ts';
import { policyStore, shadowPolicy, startLimits, startupPolicy, startupTracing } from './startup-policy.ts';
import { LiveReport } from '../report/live.ts';
import type { TransportMode } from '../mcp/transport-modes.ts';
import cluster from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import { announceListening, isWorker, shareLegacyStreams, startWorkers, workerPort, type Primary } from '../proxy/workers.ts';
import { LegacyPeers } from '../proxy/peers.ts';
import { WorkerRelay } from '../state/worker-relay.ts';
import { freePort, listenAs, probeListen } from '../proxy/listen.ts';
import { type ReadyCondition, upstreamAccepts } from '../proxy/readiness.ts';

/** The proxy command's options as commander parsed them: undefined where the user gave nothing. */
export interface ProxyCommandOptions {
  upstream?: URL;
  listen: { host: string; port: number };
  path?: string;
  publicUrl?: URL;
  policy?: string;
  timeout?: number;
  idleTimeout?: number;
  maxBody?: number;
  auditLimit?: number;
  admin?: { host: string; port: number };
  shutdownTimeout?: number;
  drainDelay?: number;
  readyNeedsUpstream?: boolean;
  /** --state-required: /readyz is 503 while the state store is away. */
  stateRequired?: boolean;
  logLevel?: string;
  pretty?: boolean;
  allowedHosts?: string[];
  allowedOrigins?: string[];
  hostHeader?: 'client' | 'upstream';
  transport?: TransportMode;
  shadow?: string;
  otlpEndpoint?: string;
  maxConnections?: number;
  headerTimeout?: number;
  workers?: number;
  state?: StateLocation;
  stateTimeout?: number;
  stateMaxRead?: number;
  peerAddress?: { host: string; port: number };
}

/** The default bound on a wait for the state store (--state-timeout). */
const STATE_TIMEOUT_MS = 50;

/** --ready-needs-upstream: /readyz also waits for the upstream, as before /upstreamz existed. */
const upstreamReadiness = (opts: ProxyCommandOptions, upstream: URL): ReadyCondition[] =>
  opts.readyNeedsUpstream ? [upstreamAccepts(upstream)] : [];

export async function runProxyCommand(opts: ProxyCommandOptions): Promise<void> {
  const { policy, text: policyText } = await startupPolicy(opts.policy, 'proxy');
  const upstream = opts.upstream ?? policy.upstream.url;
  if (!upstream) throw new Error('no upstream: give --upstream <url>, or upstream.url in the policy file');
  if (opts.peerAddress && opts.state?.kind !== 'redis')
    throw new Error('--peer-address needs --state redis://...: the replicas learn who holds which legacy stream through the store');
  // Each worker would need a peer port of its own; the workers of one replica forward among themselves already.
  // The admin port is the primary's, which holds no store connection of its own.
  if (opts.stateRequired && (opts.workers ?? 1) > 1)
    throw new Error('--state-required cannot be used with --workers above 1: run one process per replica');
  if (opts.stateRequired && opts.state?.kind !== 'redis') throw new Error('--state-required needs --state redis://...');
  if (opts.peerAddress && (opts.workers ?? 1) > 1)
    throw new Error('--peer-address cannot be used with --workers above 1: run one process per replica');
  const level = opts.logLevel ?? policy.log.level ?? 'info';
  const processes = opts.workers ?? 1;
  const worker = isWorker();
  if (processes > 1 && !worker) return runPrimary(processes, opts, upstream, level);

  const tracing = await startupTracing(opts.otlpEndpoint);
  const logger = createLogger({
    level,
    pretty: opts.pretty,
    ...(worker ? { fields: { worker: cluster.worker?.id, pid: process.pid }, lineAtATime: true } : {}),
  });
  // Reloads begin once the proxy below is up (the watch, SIGHUP): their results go to its metrics.
  const store = policyStore({ policy, text: policyText }, opts.policy, logger, (ok) => proxy.metrics.reloaded(ok, store));
  // The admin port's report: fed only when there is an admin port to serve it (a worker has none).
  const report = opts.admin && !worker ? new LiveReport() : undefined;
  // A legacy session's POSTs that land on this worker (or replica, with --peer-address), when another holds its stream, go there.
  const peers = worker || opts.peerAddress ? new LegacyPeers(logger) : undefined;
  // The MCP endpoint's Host/Origin guard, and the admin port's report paths too.
  const guard = {
    allowedHosts: opts.allowedHosts ?? policy.security.allowedHosts,
    allowedOrigins: opts.allowedOrigins ?? policy.security.allowedOrigins,
  };
  const limits = startLimits(policy, opts);
  // A replica's metrics exist once the proxy does; the store connects only after that.
  let metrics: Metrics | undefined;
  // Sessions are shared through Redis when asked, else between workers through the primary.
  const redis =
    opts.state?.kind === 'redis'
      ? new (await import('../state/redis-state.ts')).RedisState({
          url: opts.state.url,
          ttlMs: limits.sessionIdleMs,
          requestTtlMs: DEFAULT_LIMITS.requestIdleMs,
          timeoutMs: opts.stateTimeout ?? STATE_TIMEOUT_MS,
          maxReadBytes: opts.stateMaxRead,
          logger,
          onError: (op, reason) => metrics?.stateError(op, reason),
          onConnection: (up) => metrics?.stateConnected(up),
        })
      : undefined;
  const state = redis ?? (worker ? new WorkerRelay(logger) : undefined);
  const proxy = createProxy({
    upstream,
    state,
    path: opts.path,
    publicUrl: opts.publicUrl,
    logger,
    guard,
    hostHeader: opts.hostHeader ?? policy.upstream.hostHeader,
    transport: opts.transport ?? policy.upstream.transport,
    shadow: await shadowPolicy(opts.shadow),
    tracing,
    report,
    policy: () => store.current(),
    peers,
    limits: {
      upstreamHeadersTimeoutMs: opts.timeout ?? policy.upstream.headersTimeoutMs ?? DEFAULT_LIMITS.upstreamHeadersTimeoutMs,
      upstreamBodyTimeoutMs: opts.idleTimeout ?? policy.upstream.bodyTimeoutMs ?? DEFAULT_LIMITS.upstreamBodyTimeoutMs,
      upstreamConnectTimeoutMs: policy.upstream.connectTimeoutMs ?? DEFAULT_LIMITS.upstreamConnectTimeoutMs,
      ...limits,
      maxConnections: opts.maxConnections ?? DEFAULT_LIMITS.maxConnections,
      clientHeadersTimeoutMs: opts.headerTimeout ?? DEFAULT_LIMITS.clientHeadersTimeoutMs,
    },
  });
  metrics = proxy.metrics;
  metrics.policyInForce(store);
  if (redis) metrics.stateConnected(redis.available);
  if (peers && redis && opts.peerAddress) {
    const { shareLegacyStreamsThroughRedis } = await import('../state/redis-streams.ts');
    const at = await listenAs('--peer-address', opts.peerAddress, async (port, host) => {
      const address = await shareLegacyStreamsThroughRedis(proxy, peers, redis, { host, port }, () => performance.now());
      return new URL(`http://${host.includes(':') ? `[${host}]` : host}:${address.port}`);
    });
    logger.info({ peerAddress: at.host }, 'taking forwarded legacy POSTs');
  } else if (peers) {
    // Workers (with or without Redis): one replica's workers forward among themselves through the primary.
    await shareLegacyStreams(proxy, peers, () => performance.now());
    // The primary's /metrics sums the workers' registries: each worker answers its requests.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([proxy.metrics.registry]);
  } else if (redis) {
    // Not forwarded, a POST landing on another replica is not judged with its session: said once, when it can matter.
    proxy.legacy.share = (fact) => {
      if (fact.kind !== 'open') return;
      proxy.legacy.share = undefined;
      logger.warn(
        { hint: 'start every replica with --peer-address HOST:PORT, or keep each legacy session on one replica (affinity)' },
        'a legacy SSE stream opened on a replica of a fleet that does not forward POSTs: each must reach this replica',
      );
    };
  }
  let stopping = false;
  // "This process can serve": it listens and is not stopping (a policy that did not load stopped the start).
  const readiness: ReadyCondition[] = [
    { status: 'draining', holds: () => !stopping },
    { status: 'not listening', holds: () => proxy.server.listening },
    ...(opts.stateRequired && redis ? [{ status: 'state store not connected', holds: () => redis.available }] : []),
    ...upstreamReadiness(opts, upstream),
  ];
  const admin = opts.admin && !worker ? createAdminServer({ metrics: proxy.metrics, upstream, readiness, report, guard }) : undefined;
  // The admin port first: one that is in use stops the start before the proxy says it listens.
  const adminUrl = admin && opts.admin ? await listenAs('--admin', opts.admin, admin.listen) : undefined;
  const port = worker ? workerPort(opts.listen.port) : opts.listen.port;
  try {
    await listenAs('--listen', { host: opts.listen.host, port }, async (p, h) => (await proxy.listen(p, h)).url);
  } catch (err) {
    await admin?.close();
    throw err;
  }
  logger.info({ policy: policy.source, mode: policy.mode }, 'policy in force');
  if (adminUrl) logger.info({ admin: adminUrl.href }, 'admin listening');
  if (opts.policy !== undefined) store.watch();
  // A SIGHUP while stopping is ignored (without a handler it would end the process).
  const reload = () => void (stopping || store.reload('signal'));
  process.on('SIGHUP', reload);
  const stop = (signal: string) => {
    // A terminal's Ctrl-C reaches the workers and the primary, which passes it on: one stop.
    if (stopping) return;
    stopping = true;
    const deadlineMs = opts.shutdownTimeout ?? DEFAULT_LIMITS.shutdownTimeoutMs;
    const drainDelayMs = opts.drainDelay ?? 0;
    store.close();
    // /readyz is 503 from now on; balancers take a while to hear it, so new connections are served meanwhile.
    if (drainDelayMs > 0) logger.info({ signal, drainDelayMs }, 'not ready: serving new connections for the drain delay');
    void drainDelay(drainDelayMs)
      .then(() => {
        logger.info({ signal, deadlineMs }, 'shutting down: no new connections, waiting for in-flight exchanges');
        return proxy.shutdown(deadlineMs);
      })
      .then((finished) => logger.info({ finished }, 'stopped'))
      .finally(async () => {
        await admin?.close();
        await state?.close();
        await tracing?.shutdown();
        logger.flush();
        process.exit(0);
      });
  };
  // One process: a second Ctrl-C ends it at once. A worker keeps its handlers: the primary passes
  // on the signal the terminal already sent it, and that second one must not cut its exchanges.
  if (worker) process.on('SIGINT', stop).on('SIGTERM', stop);
  else process.once('SIGINT', stop).once('SIGTERM', stop);
  if (worker) announceListening();
}

const drainDelay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `--workers N`: this process starts and watches the workers, and serves the admin port (/metrics
 * summed over the workers; /report is each worker's own and is not served here).
 */
async function runPrimary(n: number, opts: ProxyCommandOptions, upstream: URL, level: string): Promise<void> {
  const logger = createLogger({ level, pretty: opts.pretty, fields: { role: 'primary' }, lineAtATime: true });
  let stopping = false;
  let code = 0;
  let primary: Primary | undefined;
  let admin: ReturnType<typeof createAdminServer> | undefined;
  const deadlineMs = opts.shutdownTimeout ?? DEFAULT_LIMITS.shutdownTimeoutMs;
  function stop(signal: NodeJS.Signals, reason?: string): void {
    if (stopping) return;
    stopping = true;
    if (!primary) process.exit(0); // nothing started yet
    const workers = primary;
    logger.info({ signal, reason, workers: workers.count }, 'stopping the workers');
    workers.stop(signal);
    // A worker that outlives its own deadline is killed.
    const late = setTimeout(
      () => {
        for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      },
      (opts.drainDelay ?? 0) + deadlineMs + 5_000,
    );
    late.unref();
    void workers.stopped.finally(async () => {
      clearTimeout(late);
      await admin?.close();
      logger.info({ code }, 'stopped');
      logger.flush();
      process.exit(code);
    });
  }
  // Before anything starts: a signal that came first would otherwise end the process as it is.
  process.on('SIGHUP', () => void (stopping || primary?.reload()));
  process.on('SIGINT', () => stop('SIGINT')).on('SIGTERM', () => stop('SIGTERM'));

  // Port 0 is chosen here, once: a restarted worker must listen where the others do. A port given
  // is tried here first: one in use is one line and exit 3, not workers restarted until they give up.
  const port = opts.listen.port === 0 ? await freePort(opts.listen.host) : undefined;
  if (port === undefined) await probeListen('--listen', opts.listen.host, opts.listen.port);
  const aggregator = new AggregatorRegistry();
  let workers: Primary | undefined;
  admin = opts.admin
    ? createAdminServer({
        metrics: { registry: { metrics: () => aggregator.clusterMetrics(), contentType: aggregator.contentType } },
        upstream,
        readiness: [
          { status: 'draining', holds: () => !stopping },
          { status: 'no worker listening', holds: () => (workers?.listening ?? 0) > 0 },
          ...upstreamReadiness(opts, upstream),
        ],
        reportUnavailable:
          "under --workers each worker keeps its own live report, and the fleet's is not gathered: run one process for /report, or turn the log into a report with `mcp-warden report LOG`",
      })
    : undefined;
  const adminUrl = admin && opts.admin ? await listenAs('--admin', opts.admin, admin.listen) : undefined;
  if (stopping) return;
  workers = startWorkers(n, port, logger, (reason, exitCode) => {
    code = exitCode;
    stop('SIGTERM', reason);
  });
  primary = workers;
  if (adminUrl) logger.info({ admin: adminUrl.href }, 'admin listening');
}
