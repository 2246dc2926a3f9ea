// One proxy under test, in its own process so its memory is its own:
//   node --import tsx test/bench/proxy-child.ts <audit|enforce|http-proxy-3> <upstream-url> [log-file]
// Listens on 127.0.0.1:0, tells its parent the port over IPC ({type:'ready', port}), answers
// {type:'mem', gc} with process.memoryUsage() (after a full GC when asked and --expose-gc is on),
// and exits when its parent goes away or on SIGTERM. mcp-warden logs at info, as in production,
// to `log-file` (default /dev/null: the records are built and written, the disk is left out);
// BENCH_LOG_LEVEL overrides the level (an experiment: warn prices the per-exchange records).
import { Agent, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxyServer } from 'http-proxy-3';
import type { Policy } from '../../src/config/types.ts';

export type ProxyKind = 'audit' | 'enforce' | 'http-proxy-3' | 'undici-floor' | 'dispatch-floor';

interface Running {
  port: number;
  close(): Promise<void>;
}

/** http-proxy-3's native path with a keep-alive agent: the floor of the stack mcp-warden is built on. */
async function startPlain(upstream: URL): Promise<Running> {
  const agent = new Agent({ keepAlive: true });
  const proxy = createProxyServer({ target: new URL(upstream.origin), agent });
  proxy.on('error', (_err, _req, res) => {
    const r = res as import('node:http').ServerResponse;
    if (!r.headersSent && typeof r.writeHead === 'function') r.writeHead(502).end();
    else r.destroy();
  });
  const server: Server = createServer((req, res) => proxy.web(req, res));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
      proxy.close();
    },
  };
}

/** What the floor experiments leave out of an answer's headers: hop-by-hop, and the length they set. */
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

type FloorForward = (
  agent: import('undici').Agent,
  request: { origin: string; path: string; method: 'POST'; headers: Record<string, string>; body: Buffer },
  res: import('node:http').ServerResponse,
) => void;

/** Writes a collected answer with its length, as mcp-warden does. */
function answerWhole(res: import('node:http').ServerResponse, status: number, headers: Record<string, unknown>, body: Buffer[]): void {
  const bytes = Buffer.concat(body);
  const out: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(headers)) if (typeof v === 'string' && !HOP.has(k)) out[k] = v;
  out['content-length'] = bytes.length;
  res.writeHead(status, out);
  res.end(bytes);
}

/**
 * An experiment, not a setup of the run: mcp-warden's transport alone (node:http in, the whole
 * request body read, undici upstream, the whole response collected, then written with its
 * length), with no decoding, rules or logging. Its cost is the floor of mcp-warden's design;
 * `forward` is how the request goes upstream.
 */
async function startFloor(upstream: URL, forward: FloorForward): Promise<Running> {
  const { Agent: UndiciAgent } = await import('undici');
  const agent = new UndiciAgent();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'connection' && k !== 'content-length' && k !== 'host') headers[k] = v;
      forward(agent, { origin: upstream.origin, path: req.url ?? '/', method: 'POST', headers, body: Buffer.concat(chunks) }, res);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await agent.close();
    },
  };
}

/** The floor through undici's `request()` and the body's async iteration, as mcp-warden's transport does. */
const throughRequest: FloorForward = (agent, request, res) => {
  agent
    .request(request)
    .then(async (up) => {
      const body: Buffer[] = [];
      for await (const c of up.body as AsyncIterable<Buffer>) body.push(c);
      answerWhole(res, up.statusCode, up.headers, body);
    })
    .catch(() => res.destroy());
};

/**
 * The floor through undici's `dispatch()` with a handler of its own: the body's chunks arrive as
 * calls, with no Readable stream, no promise per chunk and no async resource per request.
 */
const throughDispatch: FloorForward = (agent, request, res) => {
  const body: Buffer[] = [];
  let status = 0;
  let headers: Record<string, unknown> = {};
  agent.dispatch(request, {
    onRequestStart() {},
    onResponseStart(_c, statusCode, h) {
      status = statusCode;
      headers = h;
    },
    onResponseData(_c, chunk) {
      body.push(chunk);
    },
    onResponseEnd() {
      answerWhole(res, status, headers, body);
    },
    onResponseError() {
      res.destroy();
    },
  });
};

async function startWarden(kind: 'audit' | 'enforce', upstream: URL, logFile: string): Promise<Running> {
  // Loaded here, not above, so the http-proxy-3 setup's memory holds none of mcp-warden's modules.
  const { pino } = await import('pino');
  const { loadPolicyFile, formatPolicyError } = await import('../../src/config/load.ts');
  const { REWRITABLE } = await import('../../src/rewrite/rewriters.ts');
  const { createProxy } = await import('../../src/proxy/server.ts');
  const { createLogger, LOG_DESTINATION } = await import('../../src/sinks/logger.ts');
  // BENCH_LOG_LEVEL=warn leaves out the per-exchange records: an experiment that prices logging.
  const logger = createLogger({
    level: process.env.BENCH_LOG_LEVEL ?? 'info',
    destination: pino.destination({ ...LOG_DESTINATION, dest: logFile }),
  });
  let policy: Policy | undefined;
  if (kind === 'enforce') {
    const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
    if (!loaded.ok) throw new Error(loaded.errors.map(formatPolicyError).join('\n'));
    policy = loaded.policy;
  }
  const proxy = createProxy({ upstream, logger, ...(policy ? { policy: () => policy } : {}) });
  const running = await proxy.listen(0, '127.0.0.1');
  running.server.keepAliveTimeout = 60_000;
  return {
    port: Number(running.url.port),
    close: async () => {
      await running.close();
      logger.flush();
    },
  };
}

async function main(): Promise<void> {
  const [kind, upstreamArg, logFile = '/dev/null'] = process.argv.slice(2);
  if (kind !== 'audit' && kind !== 'enforce' && kind !== 'http-proxy-3' && kind !== 'undici-floor' && kind !== 'dispatch-floor')
    throw new Error(`unknown proxy kind ${kind}`);
  const upstream = new URL(upstreamArg ?? '');
  const running =
    kind === 'http-proxy-3'
      ? await startPlain(upstream)
      : kind === 'undici-floor'
        ? await startFloor(upstream, throughRequest)
        : kind === 'dispatch-floor'
          ? await startFloor(upstream, throughDispatch)
          : await startWarden(kind, upstream, logFile);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    const timer = setTimeout(() => process.exit(0), 2000);
    timer.unref();
    void running.close().finally(() => process.exit(0));
  };
  process.on('disconnect', stop);
  process.once('SIGTERM', stop);
  process.on('message', (msg: { type?: string; gc?: boolean }) => {
    if (msg.type !== 'mem') return;
    const gc = (globalThis as { gc?: () => void }).gc;
    if (msg.gc && gc) gc();
    process.send?.({ type: 'mem', ...process.memoryUsage() });
  });
  process.send?.({ type: 'ready', port: running.port });
}

main().catch((err: unknown) => {
  process.stderr.write(`proxy-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
