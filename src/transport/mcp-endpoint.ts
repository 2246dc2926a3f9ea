// The MCP endpoint: POST, GET and DELETE go through undici so the proxy owns both bodies and every
// JSON-RPC message runs through the pipeline. Unedited bytes reach the client exactly as they came.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { JsonRpcId, Message } from '../codec/jsonrpc.ts';
import { decodeJson } from '../codec/json-body.ts';
import type { Limits } from '../config/defaults.ts';
import { ProxyError } from '../errors.ts';
import type { Completed, Correlator, Flow } from '../exchange/correlate.ts';
import { resolveFlow } from '../exchange/flow.ts';
import type { SessionStore } from '../exchange/sessions.ts';
import { H } from '../mcp/headers.ts';
import { eraOf } from '../mcp/versions.ts';
import { runPipeline, type Frame } from '../pipeline.ts';
import { logExchange, type ExchangeHttp } from '../sinks/exchange-log.ts';
import { clientHeaders, sendProxyError } from './egress.ts';
import { readBody, upstreamHeaders } from './ingress.ts';
import { collectBody, streamRest } from './relay.ts';
import { relaySse } from './sse-relay.ts';
import { toProxyError, type Upstream, type UpstreamResponse } from './upstream.ts';

export interface EndpointContext {
  upstream: Upstream;
  limits: Limits;
  logger: Logger;
  sessions: SessionStore;
  correlator: Correlator;
  /** Monotonic clock in ms. */
  now: () => number;
  /** Rewrites response headers that name the upstream's own address (WWW-Authenticate). */
  fixHeaders: (req: IncomingMessage, headers: UpstreamResponse['headers']) => UpstreamResponse['headers'];
}

/** One HTTP exchange on the endpoint, from the proxy's point of view. */
interface HttpExchange {
  req: IncomingMessage;
  res: ServerResponse;
  flow: Flow;
  /** Ids of the requests this POST carried (the ones the client is waiting on). */
  requestIds: JsonRpcId[];
  batch: boolean;
  abort: AbortController;
}

const contentType = (headers: UpstreamResponse['headers']): string =>
  String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

export function createMcpEndpoint(ctx: EndpointContext) {
  const { logger, correlator, sessions, limits } = ctx;
  let seq = 0;

  const log = (completed: readonly Completed[], http: ExchangeHttp): void => {
    for (const c of completed) logExchange(logger, c, http);
  };

  const pipe = (frame: Omit<Frame, 'completed'>): Frame => runPipeline({ ...frame, completed: [] }, { correlator, now: ctx.now() });

  /** Requests of this exchange that got no response on it are logged now, as `outcome`. */
  const settle = (x: HttpExchange, outcome: string, http: ExchangeHttp): void => {
    const now = ctx.now();
    for (const id of x.requestIds) {
      const c = correlator.abandon(x.flow.scope, 'client', id, now, outcome);
      if (c) logExchange(logger, c, http);
    }
  };

  const undecodable = (frame: Frame, transport: string): void => {
    if (frame.decoded && !frame.decoded.ok) {
      logger.info(
        { from: frame.from, problem: frame.decoded.problem, detail: frame.decoded.detail, session: frame.flow.sessionId ?? null, transport, bytes: frame.size },
        'undecodable',
      );
    }
  };

  function abortOnClose(res: ServerResponse): AbortController {
    const abort = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    return abort;
  }

  /** The proxy could not get an answer: the client gets a JSON-RPC error, the log says why. */
  function fail(x: HttpExchange, err: unknown): void {
    if (x.abort.signal.aborted) {
      settle(x, 'client-closed', { status: undefined, transport: 'none' });
      return;
    }
    const pe = toProxyError(err);
    if (pe.code === 'WARDEN_INTERNAL') logger.error({ err }, 'proxy error');
    const status = x.res.headersSent ? x.res.statusCode : pe.status;
    sendProxyError(x.res, pe, x.requestIds, x.batch);
    settle(x, 'no-response', { status, transport: 'none', proxyError: pe.code });
  }

  /** A JSON (or any non-SSE) upstream body: collected, read, forwarded as it came. */
  async function relayBody(x: HttpExchange, up: UpstreamResponse, issuedSessionId: string | undefined): Promise<void> {
    const collected = await collectBody(up.body, limits.auditBodyBytes);
    const headers = ctx.fixHeaders(x.req, up.headers);
    if (!collected.complete) {
      logger.warn({ session: x.flow.sessionId ?? null, status: up.status, limit: limits.auditBodyBytes }, 'unaudited body');
      x.res.writeHead(up.status, clientHeaders(headers, true));
      if ((await streamRest(x.res, collected.head, collected.rest)) && !x.res.writableEnded) x.res.end();
      settle(x, 'unaudited', { status: up.status, transport: 'json' });
      return;
    }
    const { bytes } = collected;
    const http: ExchangeHttp = { status: up.status, transport: 'json' };
    if (bytes.length > 0) {
      const frame = pipe({ from: 'server', body: bytes, size: bytes.length, flow: x.flow, issuedSessionId });
      log(frame.completed, http);
      undecodable(frame, 'json');
    }
    const out = clientHeaders(headers, false);
    if (up.status !== 204 && up.status !== 304) out['content-length'] = bytes.length;
    x.res.writeHead(up.status, out);
    x.res.end(bytes);
    settle(x, bytes.length > 0 ? 'invalid-response' : 'no-response', http);
  }

  async function relayResponse(x: HttpExchange, up: UpstreamResponse, streamTransport: 'sse' | 'get-sse'): Promise<void> {
    const issued = up.headers[H.sessionId];
    const issuedSessionId = typeof issued === 'string' ? issued : undefined;
    if (contentType(up.headers) !== 'text/event-stream') return relayBody(x, up, issuedSessionId);
    x.res.writeHead(up.status, clientHeaders(ctx.fixHeaders(x.req, up.headers), false));
    x.res.flushHeaders();
    const http: ExchangeHttp = { status: up.status, transport: streamTransport };
    const started = ctx.now();
    const summary = await relaySse(up.body, x.res, limits.auditEventBytes, (data, size) => {
      const frame = pipe({ from: 'server', body: data, size, flow: x.flow, issuedSessionId });
      log(frame.completed, http);
      undecodable(frame, streamTransport);
    });
    if (summary.error && !x.abort.signal.aborted) {
      logger.warn({ session: x.flow.sessionId ?? null, proxyError: summary.error.code, events: summary.events }, 'stream broken');
    }
    if (!x.res.writableEnded) x.res.end();
    // A legacy session whose stream carried event ids may resume it on a GET: keep waiting then.
    const resumable = x.flow.sessionId !== undefined && summary.sawEventId && eraOf(x.flow.protocolVersion ?? '') === 'legacy';
    if (!resumable) {
      if (x.abort.signal.aborted) settle(x, 'client-closed', http);
      else settle(x, 'no-response', summary.error ? { ...http, proxyError: summary.error.code } : http);
    }
    if (streamTransport === 'get-sse') {
      logger.info(
        { session: x.flow.sessionId ?? null, status: up.status, events: summary.events, bytes: summary.bytes, durationMs: Math.round(ctx.now() - started) },
        'stream',
      );
    }
  }

  async function post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const abort = abortOnClose(res);
    let body: Buffer;
    try {
      body = await readBody(req, limits.maxRequestBytes);
    } catch (err) {
      const pe = toProxyError(err);
      if (pe.code === 'WARDEN_BODY_TOO_LARGE') res.setHeader('connection', 'close');
      logger.warn({ proxyError: pe.code, detail: pe.message }, 'request rejected');
      sendProxyError(res, pe, [], false);
      return;
    }
    const decoded = decodeJson(body);
    const messages: readonly Message[] = decoded.ok ? decoded.payload.messages : [];
    const flow = resolveFlow(req.headers, messages, sessions, ++seq, ctx.now());
    const inbound = pipe({ from: 'client', body, size: body.length, flow, issuedSessionId: undefined, decoded });
    undecodable(inbound, 'json');
    const x: HttpExchange = {
      req,
      res,
      flow,
      requestIds: messages.flatMap((m) => (m.kind === 'request' ? [m.id] : [])),
      batch: decoded.ok && decoded.payload.batch,
      abort,
    };
    try {
      const up = await ctx.upstream.request({ method: 'POST', path: upstreamPath(req), headers: upstreamHeaders(req), body, signal: abort.signal, longLived: false });
      // Answers the client gave to server requests are complete once the server accepted them.
      log(inbound.completed, { status: up.status, transport: 'none' });
      await relayResponse(x, up, 'sse');
    } catch (err) {
      fail(x, err);
    }
  }

  async function get(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const flow = resolveFlow(req.headers, [], sessions, ++seq, ctx.now());
    const x: HttpExchange = { req, res, flow, requestIds: [], batch: false, abort: abortOnClose(res) };
    try {
      const up = await ctx.upstream.request({ method: 'GET', path: upstreamPath(req), headers: upstreamHeaders(req), body: undefined, signal: x.abort.signal, longLived: true });
      await relayResponse(x, up, 'get-sse');
    } catch (err) {
      fail(x, err);
    }
  }

  async function del(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const flow = resolveFlow(req.headers, [], sessions, ++seq, ctx.now());
    const x: HttpExchange = { req, res, flow, requestIds: [], batch: false, abort: abortOnClose(res) };
    try {
      const up = await ctx.upstream.request({ method: 'DELETE', path: upstreamPath(req), headers: upstreamHeaders(req), body: undefined, signal: x.abort.signal, longLived: false });
      await relayBody(x, up, undefined);
      if (up.status >= 200 && up.status < 300 && flow.sessionId) sessions.end(flow.session.key);
      logger.info({ session: flow.sessionId ?? null, status: up.status }, 'session end');
    } catch (err) {
      fail(x, err);
    }
  }

  function upstreamPath(req: IncomingMessage): string {
    const q = (req.url ?? '').indexOf('?');
    return ctx.upstream.url.pathname + (q >= 0 ? (req.url ?? '').slice(q) : '');
  }

  return {
    /** Handles POST, GET and DELETE; returns false for any other method (the caller forwards it). */
    handle(req: IncomingMessage, res: ServerResponse): boolean {
      const run = req.method === 'POST' ? post : req.method === 'GET' ? get : req.method === 'DELETE' ? del : undefined;
      if (!run) return false;
      run(req, res).catch((err: unknown) => {
        logger.error({ err }, 'unexpected failure on the MCP endpoint');
        if (!res.headersSent) sendProxyError(res, new ProxyError('WARDEN_INTERNAL'), [], false);
        else res.destroy();
      });
      return true;
    },
  };
}
