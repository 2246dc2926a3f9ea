// `mcp-warden proxy`: settings from the command line, then the policy file, then the defaults;
// the policy is watched and reloaded on SIGHUP; SIGINT/SIGTERM close the proxy and exit 0.
import { DEFAULT_LIMITS } from '../config/defaults.ts';
import { createAdminServer } from '../proxy/admin.ts';
import { createProxy } from '../proxy/server.ts';
import { createLogger } from '../sinks/logger.ts';
import { policyStore, shadowPolicy, startupPolicy, VERSION } from './startup-policy.ts';
import { Tracing } from '../sinks/tracing.ts';
import { LiveReport } from '../report/live.ts';
import type { TransportMode } from '../transport/legacy-sse.ts';

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
}

export async function runProxyCommand(opts: ProxyCommandOptions): Promise<void> {
  const { policy, text: policyText } = await startupPolicy(opts.policy, 'proxy');
  const upstream = opts.upstream ?? policy.upstream.url;
  if (!upstream) throw new Error('no upstream: give --upstream <url>, or upstream.url in the policy file');

  const tracing = Tracing.fromOptions({ endpoint: opts.otlpEndpoint, env: process.env, version: VERSION });
  const logger = createLogger({ level: opts.logLevel ?? policy.log.level ?? 'info', pretty: opts.pretty });
  // Reloads begin once the proxy below is up (the watch, SIGHUP): their results go to its metrics.
  const store = policyStore({ policy, text: policyText }, opts.policy, logger, (ok) => proxy.metrics.reloaded(ok));
  // The admin port's report: fed only when there is an admin port to serve it.
  const report = opts.admin ? new LiveReport() : undefined;
  const proxy = createProxy({
    upstream,
    path: opts.path,
    publicUrl: opts.publicUrl,
    logger,
    guard: {
      allowedHosts: opts.allowedHosts ?? policy.security.allowedHosts,
      allowedOrigins: opts.allowedOrigins ?? policy.security.allowedOrigins,
    },
    hostHeader: opts.hostHeader ?? policy.upstream.hostHeader,
    transport: opts.transport ?? policy.upstream.transport,
    shadow: await shadowPolicy(opts.shadow),
    tracing,
    report,
    policy: () => store.current(),
    limits: {
      upstreamHeadersTimeoutMs: opts.timeout ?? policy.upstream.headersTimeoutMs ?? DEFAULT_LIMITS.upstreamHeadersTimeoutMs,
      upstreamBodyTimeoutMs: opts.idleTimeout ?? policy.upstream.bodyTimeoutMs ?? DEFAULT_LIMITS.upstreamBodyTimeoutMs,
      upstreamConnectTimeoutMs: policy.upstream.connectTimeoutMs ?? DEFAULT_LIMITS.upstreamConnectTimeoutMs,
      maxRequestBytes: opts.maxBody ?? policy.limits.maxRequestBytes ?? DEFAULT_LIMITS.maxRequestBytes,
      auditBodyBytes: opts.auditLimit ?? policy.limits.auditBodyBytes ?? DEFAULT_LIMITS.auditBodyBytes,
      auditEventBytes: policy.limits.auditEventBytes ?? DEFAULT_LIMITS.auditEventBytes,
      maxConnections: opts.maxConnections ?? DEFAULT_LIMITS.maxConnections,
      clientHeadersTimeoutMs: opts.headerTimeout ?? DEFAULT_LIMITS.clientHeadersTimeoutMs,
    },
  });
  await proxy.listen(opts.listen.port, opts.listen.host);
  logger.info({ policy: policy.source, mode: policy.mode }, 'policy in force');
  const admin = opts.admin ? createAdminServer({ metrics: proxy.metrics, upstream, draining: proxy.draining, report }) : undefined;
  if (admin && opts.admin) logger.info({ admin: (await admin.listen(opts.admin.port, opts.admin.host)).href }, 'admin listening');
  if (opts.policy !== undefined) store.watch();
  const reload = () => void store.reload('signal');
  process.on('SIGHUP', reload);
  const stop = (signal: string) => {
    const deadlineMs = opts.shutdownTimeout ?? DEFAULT_LIMITS.shutdownTimeoutMs;
    logger.info({ signal, deadlineMs }, 'shutting down: no new connections, waiting for in-flight exchanges');
    process.off('SIGHUP', reload);
    store.close();
    void proxy
      .shutdown(deadlineMs)
      .then((finished) => logger.info({ finished }, 'stopped'))
      .finally(async () => {
        await admin?.close();
        await tracing?.shutdown();
        logger.flush();
        process.exit(0);
      });
  };
  process.once('SIGINT', stop).once('SIGTERM', stop);
}
