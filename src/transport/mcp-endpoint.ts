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
import type { RuleEngine } from '../rules/engine.ts';
import { bodyProblemOf, exchangeSubject, type ResponseHttp } from '../rules/subjects.ts';
import type { BodyProblem } from '../rules/types.ts';
import { logExchange, logFindings, type ExchangeHttp } from '../sinks/exchange-log.ts';
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
  engine: RuleEngine;
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
  /** What the server sent that answered nothing (the first such body or event). */
  bodyProblem?: BodyProblem;
  /** Responses the server sent on this exchange that matched no open request (bounded). */
  unmatched: Message[];
}

const MAX_UNMATCHED = 8;

const contentType = (headers: UpstreamResponse['headers']): string =>
  String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();

export function createMcpEndpoint(ctx: EndpointContext) {
  const { logger, correlator, sessions, limits, engine } = ctx;
  let seq = 0;

  const log = (completed: readonly Completed[], http: ExchangeHttp): void => {
    for (const c of completed) logExchange(logger, c, http);
  };

  /** Runs a frame through the pipeline and remembers on the exchange what answered nothing. */
  const pipe = (x: HttpExchange, frame: Omit<Frame, 'completed' | 'unmatched'>): Frame => {
    const done = runPipeline({ ...frame, completed: [], unmatched: [] }, { correlator, engine, now: ctx.now() });
    if (done.from === 'server') {
      x.bodyProblem ??= bodyProblemOf(done.decoded, done.body);
      for (const m of done.unmatched) if (x.unmatched.length < MAX_UNMATCHED) x.unmatched.push(m);
    }
    return done;
  };

  /** Requests of this exchange that got no response on it are judged and logged now, as `outcome`. */
  const settle = (x: HttpExchange, outcome: string, http: ExchangeHttp, contentType?: string): void => {
    const now = ctx.now();
    const responseHttp: ResponseHttp = { status: http.status, contentType, transport: http.transport, proxyError: http.proxyError };
    for (const id of x.requestIds) {
      const c = correlator.abandon(x.flow.scope, 'client', id, now, outcome);
      if (!c) continue;
      c.findings = engine.evaluate(exchangeSubject(c, x.flow, responseHttp, x.bodyProblem, x.unmatched));
      logExchange(logger, c, http);
    }
  };

  /** Judges the POST as a whole (rules about the HTTP exchange rather than one request). */
  const judgePost = (x: HttpExchange, request: Frame, up: UpstreamResponse, response: Frame | undefined): void => {
    const findings = engine.evaluate({
      kind: 'post',
      version: x.flow.protocolVersion,
      requestHeaders: x.req.headers,
      request: request.decoded!,
      status: up.status,
      contentType: contentType(up.headers) || undefined,
      responseHeaders: up.headers,
      response: response?.decoded,
      responseBytes: response?.size ?? 0,
      session: x.flow.session,
    });
    if (findings.length === 0) return;
    const first = request.decoded?.ok ? request.decoded.payload.messages[0] : undefined;
    const method = first && (first.kind === 'request' || first.kind === 'notification') ? first.method : undefined;
    logFindings(logger, findings, { method, id: x.requestIds[0], tool: undefined, session: x.flow.sessionId, protocolVersion: x.flow.protocolVersion });
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

  /** A JSON (or any non-SSE) upstream body: collected, read, forwarded as it came. Returns its frame if it was read. */
  async function relayBody(x: HttpExchange, up: UpstreamResponse, issuedSessionId: string | undefined): Promise<Frame | undefined> {
    const collected = await collectBody(up.body, limits.auditBodyBytes);
    const headers = ctx.fixHeaders(x.req, up.headers);
    const type = contentType(up.headers);
    if (!collected.complete) {
      logger.warn({ session: x.flow.sessionId ?? null, status: up.status, limit: limits.auditBodyBytes }, 'unaudited body');
      x.res.writeHead(up.status, clientHeaders(headers, true));
      if ((await streamRest(x.res, collected.head, collected.rest)) && !x.res.writableEnded) x.res.end();
      settle(x, 'unaudited', { status: up.status, transport: 'json' }, type);
      return undefined;
    }
    const { bytes } = collected;
    const http: ExchangeHttp = { status: up.status, transport: 'json' };
    let frame: Frame | undefined;
    if (bytes.length > 0) {
      frame = pipe(x, { from: 'server', body: bytes, size: bytes.length, flow: x.flow, http: { ...http, contentType: type }, issuedSessionId });
      log(frame.completed, http);
      undecodable(frame, 'json');
    } else if (x.requestIds.length > 0) {
      x.bodyProblem ??= { problem: 'empty', excerpt: '' };
    }
    const out = clientHeaders(headers, false);
    if (up.status !== 204 && up.status !== 304) out['content-length'] = bytes.length;
    x.res.writeHead(up.status, out);
    x.res.end(bytes);
    settle(x, bytes.length > 0 ? 'invalid-response' : 'no-response', http, type);
    return frame;
  }

  /** Relays the upstream response (an SSE stream or a body); returns the body's frame when there was one. */
  async function relayResponse(x: HttpExchange, up: UpstreamResponse, streamTransport: 'sse' | 'get-sse'): Promise<Frame | undefined> {
    const issued = up.headers[H.sessionId];
    const issuedSessionId = typeof issued === 'string' ? issued : undefined;
    const type = contentType(up.headers);
    if (type !== 'text/event-stream') return relayBody(x, up, issuedSessionId);
    x.res.writeHead(up.status, clientHeaders(ctx.fixHeaders(x.req, up.headers), false));
    x.res.flushHeaders();
    const http: ExchangeHttp = { status: up.status, transport: streamTransport };
    const frameHttp: ResponseHttp = { ...http, contentType: type };
    const started = ctx.now();
    const summary = await relaySse(up.body, x.res, limits.auditEventBytes, (data, size) => {
      const frame = pipe(x, { from: 'server', body: data, size, flow: x.flow, http: frameHttp, issuedSessionId });
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
      if (x.abort.signal.aborted) settle(x, 'client-closed', http, type);
      else settle(x, 'no-response', summary.error ? { ...http, proxyError: summary.error.code } : http, type);
    }
    if (streamTransport === 'get-sse') {
      logger.info(
        { session: x.flow.sessionId ?? null, status: up.status, events: summary.events, bytes: summary.bytes, durationMs: Math.round(ctx.now() - started) },
        'stream',
      );
    }
    return undefined;
  }

  const exchangeFor = (req: IncomingMessage, res: ServerResponse, flow: Flow, abort: AbortController, messages: readonly Message[] = [], batch = false): HttpExchange => ({
    req,
    res,
    flow,
    requestIds: messages.flatMap((m) => (m.kind === 'request' ? [m.id] : [])),
    batch,
    abort,
    unmatched: [],
  });

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
    const x = exchangeFor(req, res, flow, abort, messages, decoded.ok && decoded.payload.batch);
    const inbound = pipe(x, { from: 'client', body, size: body.length, flow, http: { status: undefined, contentType: undefined, transport: 'none' }, issuedSessionId: undefined, decoded });
    undecodable(inbound, 'json');
    try {
      const up = await ctx.upstream.request({ method: 'POST', path: upstreamPath(req), headers: upstreamHeaders(req), body, signal: abort.signal, longLived: false });
      // Answers the client gave to server requests are complete once the server accepted them.
      log(inbound.completed, { status: up.status, transport: 'none' });
      const reply = await relayResponse(x, up, 'sse');
      judgePost(x, inbound, up, reply);
    } catch (err) {
      fail(x, err);
    }
  }

  async function get(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const flow = resolveFlow(req.headers, [], sessions, ++seq, ctx.now());
    const x = exchangeFor(req, res, flow, abortOnClose(res));
    try {
      const up = await ctx.upstream.request({ method: 'GET', path: upstreamPath(req), headers: upstreamHeaders(req), body: undefined, signal: x.abort.signal, longLived: true });
      await relayResponse(x, up, 'get-sse');
    } catch (err) {
      fail(x, err);
    }
  }

  async function del(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const flow = resolveFlow(req.headers, [], sessions, ++seq, ctx.now());
    const x = exchangeFor(req, res, flow, abortOnClose(res));
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
