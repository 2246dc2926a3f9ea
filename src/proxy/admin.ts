// The admin port: /healthz (the process is up), /readyz (the upstream accepts connections and the
// proxy is not shutting down), /metrics (Prometheus), /report and /report.json (the last hour's
// report, src/report/live.ts). Separate from the proxy's port so probes, scrapes and reports never
// mix with MCP traffic.
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { listenOn } from './listen.ts';
import type { LiveReport } from '../report/live.ts';
import { renderReportHtml } from '../report/html.ts';

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
  /** Where /metrics comes from: the proxy's registry, or with --workers the workers' summed. */
  metrics: { registry: { metrics(): Promise<string>; readonly contentType: string } };
  upstream: URL;
  /** True once the proxy is draining: readiness goes false so balancers stop sending. */
  draining: () => boolean;
  /** Whether anything serves the proxy's port (with --workers: a worker listens); default yes. */
  serving?: () => boolean;
  /** The live report (/report, /report.json). */
  report?: LiveReport;
}

const PATHS = ['/healthz', '/readyz', '/metrics', '/report', '/report.json'];

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
      if (options.serving && !options.serving()) return json(res, 503, { status: 'no worker listening' });
      void upstreamReachable(options.upstream, 1000).then((ok) =>
        json(res, ok ? 200 : 503, ok ? { status: 'ready' } : { status: 'upstream unreachable', upstream: options.upstream.origin }),
      );
      return;
    }
    if (options.report && (path === '/report' || path === '/report.json')) {
      const data = options.report.data();
      if (path === '/report.json') return json(res, 200, data);
      const html = renderReportHtml(data, 'mcp-warden report: the last hour');
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': Buffer.byteLength(html),
        'cache-control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : html);
      return;
    }
    if (path === '/metrics') {
      // With --workers the metrics are the workers' answers: one that does not come fails this scrape, not the process.
      options.metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': options.metrics.registry.contentType });
          res.end(text);
        },
        (err: Error) => json(res, 503, { error: 'metrics unavailable', detail: err.message }),
      );
      return;
    }
    json(res, 404, { error: 'not found', paths: options.report ? PATHS : PATHS.slice(0, 3) });
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
