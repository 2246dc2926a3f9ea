// The admin port: /healthz (the process is up), /readyz (this process can serve: the command's
// conditions, proxy/readiness.ts), /upstreamz (the upstream accepts connections), /metrics
// (Prometheus), /report and /report.json (the last hour's report, src/report/live.ts). Separate from
// the proxy's port so probes, scrapes and reports never mix with MCP traffic. The report's paths
// carry sessions, tools and clients: they check Host and Origin as the MCP endpoint does
// (transport/host-guard.ts, same options and defaults), so a page on a rebound DNS name cannot read
// them. Probes and scrapes (/healthz, /readyz, /upstreamz, /metrics) are not guarded: Kubernetes and
// Prometheus send `Host: <pod-ip>:port`, and they say nothing a page could misuse.
import { createServer, type Server } from 'node:http';
import { LIVE_REPORT_BOUNDS } from '../config/defaults.ts';
import { createHostGuard, type HostGuard, type HostGuardOptions } from '../transport/host-guard.ts';
import { listenOn } from './listen.ts';
import type { LiveReport } from '../report/live.ts';
import { renderReportHtml } from '../report/html.ts';
import { firstUnready, type ReadyCondition } from './readiness.ts';
import { upstreamReachable } from './upstream-probe.ts';

export interface AdminOptions {
  /** Where /metrics comes from: the proxy's registry, or with --workers the workers' summed. */
  metrics: { registry: { metrics(): Promise<string>; readonly contentType: string } };
  /** The upstream /upstreamz probes. */
  upstream: URL;
  /** What /readyz requires, in order: the first condition that fails is its 503's status. */
  readiness: readonly ReadyCondition[];
  /** The live report (/report, /report.json). */
  report?: LiveReport;
  /** The Host/Origin guard of /report and /report.json: the MCP endpoint's options (--allowed-hosts, --allowed-origins). */
  guard?: HostGuardOptions;
  /** Why there is no live report here (with --workers: each worker keeps its own): /report and /report.json say so with 501. */
  reportUnavailable?: string;
  /** Largest /report or /report.json answer (bytes); past it a 503 says so. */
  renderBytes?: number;
}

const PATHS = ['/healthz', '/readyz', '/upstreamz', '/metrics', '/report', '/report.json'];

export function createAdminServer(options: AdminOptions) {
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
    res.end(text);
  };
  let guard: HostGuard = createHostGuard(options.guard ?? {}, '127.0.0.1');
  const renderBytes = options.renderBytes ?? LIVE_REPORT_BOUNDS.renderBytes;
  /** The report, as JSON or the page, or why it cannot be sent: never a RangeError out of the handler. */
  const render = (path: string): { status: number; type: string; text: string } => {
    try {
      const data = options.report!.data();
      const text = path === '/report.json' ? JSON.stringify(data) : renderReportHtml(data, 'mcp-warden report: the last hour');
      if (Buffer.byteLength(text) <= renderBytes)
        return { status: 200, type: path === '/report.json' ? 'application/json' : 'text/html; charset=utf-8', text };
    } catch {
      // A string past V8's limit: the same answer as too large.
    }
    const text = JSON.stringify({ error: 'report too large', limit: renderBytes });
    return { status: 503, type: 'application/json', text };
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'method not allowed' });
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      void firstUnready(options.readiness).then((status) => json(res, status ? 503 : 200, { status: status ?? 'ready' }));
      return;
    }
    if (path === '/upstreamz') {
      const upstream = options.upstream.origin;
      void upstreamReachable(options.upstream).then((up) => json(res, up ? 200 : 503, { status: up ? 'up' : 'down', upstream }));
      return;
    }
    if (options.report && (path === '/report' || path === '/report.json')) {
      const origin = req.headers.origin;
      const refused = guard.check(req.headers.host, Array.isArray(origin) ? origin[0] : origin);
      if (refused) return json(res, 403, { error: refused === 'host' ? 'forbidden host' : 'forbidden origin' });
      const { status, type, text } = render(path);
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
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
    if (options.reportUnavailable && (path === '/report' || path === '/report.json'))
      return json(res, 501, { error: 'report not available', why: options.reportUnavailable });
    json(res, 404, { error: 'not found', paths: options.report ? PATHS : PATHS.slice(0, 4) });
  });
  return {
    server,
    listen: (port: number, host: string): Promise<URL> => {
      guard = createHostGuard(options.guard ?? {}, host);
      return listenOn(server, port, host);
    },
    close(): Promise<void> {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
