// Every path but the MCP endpoint (OAuth discovery and endpoints, anything else the server serves)
// goes through http-proxy-3's native path, untouched and logged. The one edit is the OAuth
// discovery pointers (see public-url.ts): WWW-Authenticate on any response, and the `resource`
// field of protected-resource metadata, whose bodies alone are self-handled and bounded.
import { Agent } from 'node:http';
import { Readable } from 'node:stream';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { createProxyServer } from 'http-proxy-3';
import { DEFAULT_LIMITS } from '../config/defaults.ts';
import { PROXY_ERRORS, type ProxyErrorCode } from '../errors.ts';
import { redactTarget, type Logger } from '../sinks/logger.ts';
import { MetadataLocations, publicOrigin, rewriteResourceMetadata, rewriteWwwAuthenticate } from './public-url.ts';
import { targetPath } from './target.ts';

export interface PassthroughOptions {
  upstream: URL;
  /** The origin clients use; by default derived from each request's Host and scheme. */
  publicUrl?: URL;
  /** Believe X-Forwarded-Proto when deriving the public origin. */
  trustForwarded?: boolean;
  logger: Logger;
  /** Longest upstream silence (connect, headers, between body chunks) before 504 or a reset. */
  timeoutMs?: number;
  /** 'client' (default): the client's Host goes upstream unchanged; 'upstream': the upstream URL's. */
  hostHeader?: 'client' | 'upstream';
  /** Metadata locations learned from challenges (shared with the MCP endpoint, which sees most 401s). */
  metadata?: MetadataLocations;
}

/** How a request reaches the pass-through: its body already read (sniffed and found not JSON-RPC), or MCP traffic relayed unjudged. */
export interface PassthroughRoute {
  /** The body the proxy read to sniff it: forwarded as it came. */
  body?: Buffer;
  /** Why MCP-looking traffic crosses unjudged (`scope.passthrough`: `scoped-out`; a POST too large to sniff: `json-post`). */
  unjudged?: string;
}

export interface Passthrough {
  handle(req: IncomingMessage, res: ServerResponse, route?: PassthroughRoute): void;
  close(): void;
}

const PRM_PATH = /^\/\.well-known\/oauth-protected-resource(?:[/?]|$)/;
const MAX_PRM_BYTES = 1024 * 1024;
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding'];

interface Exchange {
  selfHandled: boolean;
  fail(err: NodeJS.ErrnoException): void;
}

export function createPassthrough(opts: PassthroughOptions): Passthrough {
  // http-proxy-3 reads this per request; its fetch path drains and drops self-handled bodies.
  if (process.env.FORCE_FETCH_PATH === 'true') throw new Error('FORCE_FETCH_PATH=true breaks the passthrough; unset it');
  const upstreamOrigin = opts.upstream.origin;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_LIMITS.upstreamHeadersTimeoutMs;
  // Without an agent http-proxy-3 forces `connection: close` on every upstream request.
  const agent = new Agent({ keepAlive: true });
  const exchanges = new WeakMap<IncomingMessage, Exchange>();
  const metadata = opts.metadata ?? new MetadataLocations();
  const proxy = createProxyServer({
    // Origin only: a target path would be prepended to every request path.
    target: new URL(upstreamOrigin),
    changeOrigin: opts.hostHeader === 'upstream',
    xfwd: true,
    preserveHeaderKeyCase: true,
    agent,
  });

  // Its own proxyTimeout destroys without an error, indistinguishable from a reset; ours names it.
  proxy.on('proxyReq', (proxyReq) => {
    proxyReq.setTimeout(timeoutMs, () => {
      proxyReq.destroy(Object.assign(new Error(`upstream silent for ${timeoutMs} ms`), { code: 'ETIMEDOUT' }));
    });
  });

  // Runs before http-proxy-3 copies the headers, so an edit here is what the client sees.
  proxy.on('proxyRes', (proxyRes, req, res) => {
    const origin = publicOrigin(req, opts.publicUrl, opts);
    const challenge = proxyRes.headers['www-authenticate'];
    if (challenge !== undefined) {
      metadata.learn(challenge, upstreamOrigin);
      proxyRes.headers['www-authenticate'] = rewriteWwwAuthenticate(challenge, upstreamOrigin, origin);
    }
    // A body cut short is never ended cleanly: the client must see the reset too.
    proxyRes.once('close', () => {
      if (!proxyRes.complete) exchanges.get(req)?.fail(Object.assign(new Error('upstream aborted the response'), { code: 'ECONNRESET' }));
    });
    if (exchanges.get(req)?.selfHandled) sendMetadata(proxyRes, res, upstreamOrigin, origin);
  });

  function handle(req: IncomingMessage, res: ServerResponse, route: PassthroughRoute = {}): void {
    const started = performance.now();
    const target = req.url ?? '/';
    let errorCode: string | undefined;
    let retried = false;
    const fail = (err: NodeJS.ErrnoException): void => {
      if (errorCode !== undefined || res.destroyed) return;
      // A kept-alive socket the upstream closed as it was reused resets a request that never
      // reached it: a GET or HEAD (no body, safe to repeat) goes once more on a fresh socket.
      if (!retried && err.code === 'ECONNRESET' && !res.headersSent && (req.method === 'GET' || req.method === 'HEAD')) {
        retried = true;
        // The request has been read by now: an empty body, not the drained request, goes again.
        forward(Readable.from([]));
        return;
      }
      errorCode = err.code ?? 'ERR_UPSTREAM';
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const code: ProxyErrorCode =
        errorCode === 'ETIMEDOUT'
          ? 'WARDEN_UPSTREAM_TIMEOUT'
          : errorCode === 'ECONNRESET'
            ? 'WARDEN_UPSTREAM_RESET'
            : 'WARDEN_UPSTREAM_UNREACHABLE';
      const body = JSON.stringify({ error: 'upstream_unreachable', message: PROXY_ERRORS[code].message });
      res.writeHead(PROXY_ERRORS[code].status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    res.once('close', () => {
      exchanges.delete(req);
      const error = errorCode ?? (res.writableFinished ? undefined : 'client_aborted');
      const record = {
        method: req.method,
        path: redactTarget(target),
        status: res.headersSent ? res.statusCode : undefined,
        durationMs: Math.round(performance.now() - started),
        error,
        unjudged,
      };
      // Alerts read levels: an upstream that failed is an error; a client that left is no news.
      if (error === 'client_aborted' && unjudged === undefined) opts.logger.debug(record, 'passthrough');
      else if (error !== undefined && error !== 'client_aborted') opts.logger.error(record, 'passthrough');
      else if (unjudged !== undefined) opts.logger.warn(record, 'passthrough');
      else opts.logger.info(record, 'passthrough');
    });
    // MCP traffic that crosses unread: the record says so, at warn.
    const { unjudged } = route;
    const selfHandled = req.method === 'GET' && (PRM_PATH.test(target) || metadata.has(targetPath(target)));
    exchanges.set(req, { selfHandled, fail });
    // Node already answered `Expect: 100-continue`; forwarded, it would also skip the proxyReq event.
    delete req.headers.expect;
    // toProxy sends the raw target; the default re-serializes it through WHATWG URL (dot segments,
    // percent-encoding). Only an absolute-form target needs that to become a path.
    const buffer = route.body && Readable.from([route.body]);
    const forward = (body = buffer): void =>
      proxy.web(req, res, { selfHandleResponse: selfHandled, toProxy: target.startsWith('/'), ...(body && { buffer: body }) }, fail);
    forward();
  }

  return {
    handle,
    close(): void {
      agent.destroy();
      proxy.close();
    },
  };
}

/** Buffers a metadata body (bounded), rebases `resource`, fixes content-length; else the original bytes. */
function sendMetadata(proxyRes: IncomingMessage, res: ServerResponse, upstreamOrigin: string, origin: string): void {
  const status = proxyRes.statusCode ?? 502;
  const headers: OutgoingHttpHeaders = { ...proxyRes.headers };
  for (const name of HOP_BY_HOP) delete headers[name];
  const encoding = proxyRes.headers['content-encoding'];
  if (status !== 200 || (encoding !== undefined && encoding !== 'identity') || Number(proxyRes.headers['content-length']) > MAX_PRM_BYTES) {
    res.writeHead(status, proxyRes.statusMessage, headers);
    proxyRes.pipe(res);
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    chunks.push(chunk);
    size += chunk.length;
    if (size <= MAX_PRM_BYTES) return;
    proxyRes.off('data', onData).off('end', onEnd);
    res.writeHead(status, proxyRes.statusMessage, headers);
    for (const c of chunks) res.write(c);
    proxyRes.pipe(res);
  };
  const onEnd = (): void => {
    const original = Buffer.concat(chunks, size);
    const body = rewriteResourceMetadata(original, upstreamOrigin, origin) ?? original;
    res.writeHead(status, proxyRes.statusMessage, { ...headers, 'content-length': body.length });
    res.end(body);
  };
  proxyRes.on('data', onData).on('end', onEnd);
}
