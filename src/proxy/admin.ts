// The admin port: /healthz (the process is up), /readyz (the upstream accepts connections and the
// proxy is not shutting down), /metrics (Prometheus). Separate from the proxy's port so probes and
// scrapes never mix with MCP traffic.
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { listenOn } from './listen.ts';
import type { Metrics } from '../sinks/metrics.ts';

/** Whether a TCP connection to the upstream opens within `timeoutMs`. */
export function upstreamReachable(url: URL, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true)).once('error', () => done(false));
  });
}

export interface AdminOptions {
  metrics: Metrics;
  upstream: URL;
  /** True once the proxy is draining: readiness goes false so balancers stop sending. */
  draining: () => boolean;
}

export function createAdminServer(options: AdminOptions) {
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
    res.end(text);
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'method not allowed' });
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      if (options.draining()) return json(res, 503, { status: 'draining' });
      void upstreamReachable(options.upstream, 1000).then((ok) =>
        json(res, ok ? 200 : 503, ok ? { status: 'ready' } : { status: 'upstream unreachable', upstream: options.upstream.origin }),
      );
      return;
    }
    if (path === '/metrics') {
      void options.metrics.registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': options.metrics.registry.contentType });
        res.end(text);
      });
      return;
    }
    json(res, 404, { error: 'not found', paths: ['/healthz', '/readyz', '/metrics'] });
  });
  return {
    server,
    listen: (port: number, host: string): Promise<URL> => listenOn(server, port, host),
    close(): Promise<void> {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
