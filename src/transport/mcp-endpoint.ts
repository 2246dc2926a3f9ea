// The MCP endpoint over Streamable HTTP and the legacy HTTP+SSE transport (legacy-sse.ts): POST,
// GET and DELETE go through undici so the proxy owns both bodies. This file reads bytes, hands them
// to the engine and carries out its plans; what is judged, rewritten or blocked, and in which
// order, the engine decides (src/engine/).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { decodeJson } from '../codec/json-body.ts';
import type { CollectedBody } from '../engine/body.ts';
import type { BodyDelivery, FailureDelivery, Reply } from '../engine/plans.ts';
import { causeOf, ProxyError } from '../errors.ts';
import { H } from '../mcp/headers.ts';
import { mediaType } from '../mcp/media-type.ts';
import type { ResponseHttp } from '../rules/subjects.ts';
import { redactTarget, redactUrl } from '../sinks/redact.ts';
import { ClientGone } from './client-gone.ts';
import { codingOf, undecodableDetail } from './content-coding.ts';
import { clientHeaders, sendProxyError } from './egress.ts';
import { lingerAfterAnswer } from './linger.ts';
import { recorder, type EndpointContext, type Http } from './endpoint-context.ts';
import { createStreamRelay } from './endpoint-stream.ts';
import { readBody, upstreamHeaders } from './ingress.ts';
import { answerLegacyPost, failureTexts, messageTexts } from './legacy-sse.ts';
import { isJsonRpc } from './routing.ts';
import { targetPath } from './target.ts';
import { upstreamTrace } from './trace-context.ts';
import { collect, streamRest } from './relay.ts';
import { decodedRequestBody } from './request-coding.ts';
import { toProxyError, type UpstreamResponse } from './upstream.ts';

export type { EndpointContext };

/** The upstream failures logged at error: nothing answers there. */
const UPSTREAM_DOWN: ReadonlySet<string> = new Set(['WARDEN_UPSTREAM_UNREACHABLE', 'WARDEN_UPSTREAM_RESET']);

/** What a POST's upstream time is recorded under: its first message's method (a response or bad JSON: other). */
function firstMethod(decoded: ReturnType<typeof decodeJson>): string {
  const first = decoded.ok ? decoded.payload.messages[0] : undefined;
  return first && 'method' in first ? first.method : 'other';
}

export function createMcpEndpoint(ctx: EndpointContext) {
  const { logger, engine, limits } = ctx;

  const record = recorder(ctx);
  const relayStream = createStreamRelay(ctx);

  /** Sends a body the engine built, as JSON, unencoded: the server's Content-Encoding described its bytes, not these. */
  function sendReply(res: ServerResponse, reply: Reply, upstreamHeaders: ReturnType<typeof clientHeaders> = {}): void {
    const { 'content-encoding': _coding, ...rest } = upstreamHeaders;
    res.writeHead(reply.status, { ...rest, 'content-type': 'application/json', 'content-length': reply.body.length });
    res.end(reply.body);
  }

  /** The proxy could not get an answer: the client gets what the engine planned, the log says why. */
  function fail(h: Http, err: unknown): void {
    ctx.judging.flush();
    const pe = toProxyError(err);
    if (!h.gone.aborted && pe.code === 'WARDEN_INTERNAL') logger.error({ err }, 'proxy error');
    // An upstream that cannot be reached or resets is what an operator is paged for; a slow or malformed answer is a warning.
    else if (!h.gone.aborted && pe.code.startsWith('WARDEN_UPSTREAM_')) {
      // What failed underneath (ECONNREFUSED, a reset) and where: the first thing an operator asks.
      const record = {
        proxyError: pe.code,
        detail: pe.message,
        cause: causeOf(pe),
        upstream: redactUrl(ctx.upstream.url),
        session: h.x.flow.sessionId ?? null,
      };
      if (UPSTREAM_DOWN.has(pe.code)) logger.error(record, 'upstream failed');
      else logger.warn(record, 'upstream failed');
    }
    const { deliver, judged } = engine.failure(h.x, pe, h.gone.aborted, h.res.headersSent ? h.res.statusCode : undefined);
    deliverFailure(h, deliver);
    record(h, judged);
  }

  function deliverFailure(h: Http, deliver: FailureDelivery): void {
    if (h.legacy && deliver.kind !== 'none' && !h.res.headersSent)
      answerLegacyPost(h.res, h.legacy, failureTexts(deliver), deliver.kind === 'reply' ? deliver.status : deliver.error.status, h.refused);
    else if (deliver.kind === 'reply') sendReply(h.res, deliver);
    else if (deliver.kind === 'proxy-error') sendProxyError(h.res, deliver.error, deliver.ids, deliver.batch);
  }

  /** A JSON (or any non-SSE) upstream body: collected (decoded, when it has a Content-Encoding), then delivered as the engine plans. */
  async function relayBody(
    h: Http,
    up: UpstreamResponse,
    issuedSessionId: string | undefined,
    contentType = mediaType(up.headers['content-type']),
  ): Promise<void> {
    const coding = codingOf(up.headers['content-encoding']);
    const collected = await collect(up.body, coding, limits.auditBodyBytes);
    const headers = clientHeaders(ctx.fixHeaders(h.req, up.headers), collected.kind !== 'complete');
    // An audited body's plan judges nothing yet; every other call finds the put-off judging done.
    if (collected.kind === 'unread' || h.x.order !== 'deliver-first') ctx.judging.flush();
    const http: ResponseHttp = { status: up.status, contentType, transport: 'json' };
    const session = h.x.flow.sessionId ?? null;
    if (collected.kind === 'unread') {
      // Too large to hold (as it came or decoded), or in a coding the proxy cannot undo (read as
      // text it would look like garbage): relayed as it came, unless the policy stops it.
      const why =
        collected.reason === 'too-large'
          ? { limit: limits.auditBodyBytes }
          : { reason: 'unknown-content-encoding', contentEncoding: up.headers['content-encoding'] };
      logger.warn({ session, status: up.status, ...why }, 'unaudited body');
      http.unread = collected.reason === 'too-large' ? 'too-large' : 'unknown-coding';
      const plan = engine.unreadBody(h.x, http);
      record(h, plan.judged());
      if (plan.deliver.kind === 'reply') {
        await collected.rest.return?.();
        // undici's body reports its own destruction as an error: with no listener it would end the process.
        up.body.on('error', () => {}).destroy();
        return void replyTo(h, plan.deliver, headers);
      }
      h.res.writeHead(up.status, headers);
      const sent = await streamRest(h.res, collected.head, collected.rest);
      if (sent.delivered && !h.res.writableEnded) h.res.end();
      record(h, engine.unreadDelivered(h.x, http, sent.bytes));
      return;
    }
    let body: CollectedBody;
    if (collected.kind === 'complete') body = { kind: 'complete', bytes: collected.bytes };
    else {
      const detail = undecodableDetail(coding, collected.error);
      logger.warn({ session, status: up.status, contentEncoding: up.headers['content-encoding'], detail }, 'undecodable body');
      body = { kind: 'undecodable', detail };
    }
    const plan = engine.serverBody(h.x, body, http, collected.wire.length, issuedSessionId);
    if (plan.settled) await plan.settled;
    deliverBody(h, plan.deliver, up.status, headers, collected.wire);
    // Judged already (enforce) or not yet (audit): either way recorded once the poll phase is over.
    ctx.judging.defer(() => {
      try {
        record(h, plan.judged());
      } catch (err) {
        fail(h, err);
      }
    });
  }

  function deliverBody(h: Http, deliver: BodyDelivery, status: number, headers: ReturnType<typeof clientHeaders>, wire: Buffer): void {
    if (deliver.kind === 'reply') return void replyTo(h, deliver, headers);
    if (status !== 204 && status !== 304) headers['content-length'] = wire.length;
    h.res.writeHead(status, headers);
    h.res.end(wire);
  }

  /** The engine's reply in place of the server's body: on a legacy session's stream (the client reads its answers there), else as the body. */
  function replyTo(h: Http, reply: Reply, headers: ReturnType<typeof clientHeaders>): void {
    if (h.legacy) answerLegacyPost(h.res, h.legacy, messageTexts(reply.body), reply.status, h.refused);
    else sendReply(h.res, reply, headers);
  }

  /** Relays the upstream response: an SSE stream, or a body. */
  function relayResponse(h: Http, up: UpstreamResponse, streamTransport: 'sse' | 'get-sse'): Promise<void> {
    const issued = up.headers[H.sessionId];
    const issuedSessionId = typeof issued === 'string' ? issued : undefined;
    const type = mediaType(up.headers['content-type']);
    if (type === 'text/event-stream') return relayStream(h, up, streamTransport, issuedSessionId);
    return relayBody(h, up, issuedSessionId, type);
  }

  /** Reads a POST's body within the limits; undefined when it was refused (the client has its answer). */
  async function readPost(req: IncomingMessage, res: ServerResponse): Promise<{ body: Buffer; plain: Buffer } | undefined> {
    try {
      const body = await readBody(req, limits.maxRequestBytes, ctx.bodies);
      // Held until the exchange is over: judging and forwarding both read it.
      let held = body.length;
      res.once('close', () => ctx.bodies.give(held));
      // What the server will read: the body itself, or, with a Content-Encoding, the body decoded.
      const plain = await decodedRequestBody(body, req.headers['content-encoding'], limits.maxRequestBytes);
      if (plain !== body) {
        if (!ctx.bodies.take(plain.length))
          throw new ProxyError('WARDEN_OVERLOADED', 'Request bodies held by the proxy reached their limit; retry later');
        held += plain.length;
      }
      return { body, plain };
    } catch (err) {
      // The client left mid-request: nothing to answer, and its departure is counted where its
      // socket said so (proxy/client-departures.ts), not as an answer of the proxy.
      if (req.socket.destroyed) return undefined;
      const pe = toProxyError(err);
      // Refused while the body may still be coming: the connection closes after the answer, but
      // only once the client could read it (a close on unread bytes resets the connection).
      if ((pe.code === 'WARDEN_BODY_TOO_LARGE' || pe.code === 'WARDEN_OVERLOADED') && !req.complete) {
        res.setHeader('connection', 'close');
        lingerAfterAnswer(req);
      }
      logger.warn({ proxyError: pe.code, detail: pe.message }, 'request rejected');
      ctx.metrics.proxyError(pe.code);
      sendProxyError(res, pe, [], false);
      return undefined;
    }
  }

  /** `sniff`: a POST off the MCP paths, judged only if its body is JSON-RPC (else passed through as it came). */
  async function post(req: IncomingMessage, res: ServerResponse, sniff: boolean): Promise<void> {
    const gone = new ClientGone(res);
    const read = await readPost(req, res);
    if (!read) return;
    const decoded = decodeJson(read.plain);
    const target = req.url ?? '/';
    if (sniff) {
      if (!isJsonRpc(decoded)) return ctx.notMcp(req, res, read.body);
      ctx.router.learn(target);
    }
    // Only with a store to read: an await costs every request a turn of the microtask queue.
    if (ctx.recall) await ctx.recall(req, decoded.ok ? decoded.payload.messages : []);
    // What the engine knows when this POST opens is what it would know had every body been judged at once.
    ctx.judging.flush();
    const now = ctx.now();
    // A legacy session's message on another path its server routes too: named by its session id.
    const legacy = ctx.legacy.lookup(target, now) ?? (sniff ? ctx.legacy.named(target, now) : undefined);
    const session = legacy === 'unknown' ? undefined : legacy;
    const h: Http = { x: engine.openPost(req.headers, decoded, session?.via, req.socket.remoteAddress), req, res, gone, legacy: session };
    if (legacy === 'unknown') {
      // No stream of this session passes through the proxy: its answers could reach no one here
      // (and a legacy server may never answer the POST at all).
      logger.warn({ target: redactTarget(req.url ?? '/') }, 'legacy session unknown');
      return fail(h, new ProxyError('WARDEN_UNKNOWN_SESSION'));
    }
    // With traces exported, the upstream sees the proxy's span as its parent, the way the client
    // sent its own (trace-context.ts). Only a POST with a request has an exchange to end the span.
    const trace = upstreamTrace(ctx.tracing, h.x, decoded, req.headers, read.body === read.plain ? read.body : undefined);
    const forward = (headers: Record<string, string> | undefined) =>
      ctx.upstream.request({
        method: 'POST',
        path: legacy && !sniff ? legacy.upstreamTarget : ctx.upstreamTarget(req),
        headers: { ...upstreamHeaders(req), ...headers, ...trace?.header },
        body: trace?.body ?? read.body,
        signal: gone,
        longLived: false,
        timedAs: firstMethod(decoded),
      });
    const plan = engine.clientBody(h.x, read.plain, read.body.length, decoded);
    // Under audit the plan forwards before judging: the request is on its way while judged() runs.
    const answer = plan.deliver.kind === 'forward' ? forward(plan.deliver.headers) : undefined;
    // Awaited below; should the judging throw first, its failure must not go unhandled.
    answer?.catch(() => {});
    record(h, plan.judged());
    if (plan.deliver.kind === 'reply') {
      if (session) answerLegacyPost(res, session, messageTexts(plan.deliver.body), plan.deliver.status);
      else sendReply(res, plan.deliver);
      return;
    }
    try {
      const up = await answer!;
      if (h.x.requestIds.length > 0) ctx.upstreamAnswered(targetPath(target), up.status, up.headers['content-type']);
      // No flush: what the upstream's headers complete is this exchange's own (the client's answers in its POST).
      record(h, engine.upstreamAnswered(h.x, up.status, up.headers));
      // A legacy POST refused (any status but 2xx, any body) is the answer its requests get: judged
      // like any answer; what the policy makes of it keeps the refusal's status (answerLegacyPost).
      if (legacy && up.status >= 200 && up.status < 300) {
        // Accepted: the answers are the stream's; this body is relayed as it came.
        record(h, engine.legacyPostAccepted(h.x));
        res.writeHead(up.status, clientHeaders(ctx.fixHeaders(req, up.headers), true));
        // The messages are accepted (or refused) by now: a body cut short changes nothing for them.
        await pipeline(up.body, res).catch(() => res.destroy());
        return;
      }
      if (legacy) h.refused = up.status;
      await relayResponse(h, up, 'sse');
    } catch (err) {
      fail(h, err);
    }
  }

  /** GET (the server's stream, long-lived) and DELETE (the session's end): no body to read, the answer relayed. */
  async function bodiless(req: IncomingMessage, res: ServerResponse, method: 'GET' | 'DELETE'): Promise<void> {
    if (ctx.recall) await ctx.recall(req, []);
    ctx.judging.flush();
    const h: Http = { x: engine.openBodiless(method === 'GET' ? 'get' : 'delete', req.headers), req, res, gone: new ClientGone(res) };
    try {
      const up = await ctx.upstream.request({
        method,
        path: ctx.upstreamTarget(req),
        headers: upstreamHeaders(req),
        body: undefined,
        signal: h.gone,
        longLived: method === 'GET',
        timedAs: method,
      });
      // No flush: the upstream's headers complete nothing a GET or DELETE shares with other exchanges.
      record(h, engine.upstreamAnswered(h.x, up.status, up.headers));
      if (method === 'GET') return await relayResponse(h, up, 'get-sse');
      await relayBody(h, up, undefined);
      // The session ends after its last answers are judged, as it would without the put-off judging.
      ctx.judging.flush();
      engine.sessionEnd(h.x, up.status);
      logger.info({ session: h.x.flow.sessionId ?? null, status: up.status }, 'session end');
    } catch (err) {
      fail(h, err);
    }
  }

  return {
    /** Handles POST, GET and DELETE (`sniff`: a POST whose body decides); returns false for any other method (the caller forwards it). */
    handle(req: IncomingMessage, res: ServerResponse, sniff = false): boolean {
      const method = req.method;
      if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') return false;
      (method === 'POST' ? post(req, res, sniff) : bodiless(req, res, method)).catch((err: unknown) => {
        logger.error({ err }, 'unexpected failure on the MCP endpoint');
        if (!res.headersSent) sendProxyError(res, new ProxyError('WARDEN_INTERNAL'), [], false);
        else res.destroy();
      });
      return true;
    },
  };
}
