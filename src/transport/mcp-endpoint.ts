// The MCP endpoint: POST, GET and DELETE go through undici so the proxy owns both bodies and every
// JSON-RPC message runs through the pipeline. Unedited bytes reach the client exactly as they came;
// what the policy rewrites or blocks is re-encoded, and only that.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { idTokenOf, type Message } from '../codec/jsonrpc.ts';
import { decodeJson } from '../codec/json-body.ts';
import type { Limits } from '../config/defaults.ts';
import { ProxyError } from '../errors.ts';
import type { Completed, Correlator, Flow } from '../exchange/correlate.ts';
import { resolveFlow } from '../exchange/flow.ts';
import type { SessionStore } from '../exchange/sessions.ts';
import { H } from '../mcp/headers.ts';
import { eraOf } from '../mcp/versions.ts';
import { decideFor, judge, runPipeline, type Frame, type StageContext } from '../pipeline.ts';
import type { Policy } from '../policy/types.ts';
import { nullIdError, rewriteBody, type BodyChange } from '../rewrite/apply.ts';
import { encodeBody, encodeSseEvent } from '../rewrite/encode.ts';
import { decidePost } from '../rewrite/post-rewrite.ts';
import type { Decision } from '../rewrite/types.ts';
import type { Runtime } from '../policy/runtime.ts';
import { bodyProblemOf, exchangeSubject, type ResponseHttp } from '../rules/subjects.ts';
import { captureRecord, type CaptureSink } from '../sinks/capture.ts';
import type { Metrics } from '../sinks/metrics.ts';
import { logDecision, logExchange, type ExchangeHttp } from '../sinks/exchange-log.ts';
import { ClientGone } from './client-gone.ts';
import type { HttpExchange } from './http-exchange.ts';
import { codingOf, decodedBody, decoderFor, undecodableDetail, type Coding } from './content-coding.ts';
import { clientHeaders, sendProxyError } from './egress.ts';
import { readBody, upstreamHeaders, type BodyBudget } from './ingress.ts';
import { decodedRequestBody } from './request-coding.ts';
import { judgeClientRequest, judgedPost, judgePost, postWhere } from './request-verdicts.ts';
import { collect, streamRest } from './relay.ts';
import { answerEvents, mirrorSse, relaySse, type StreamAnswer } from './sse-relay.ts';
import { mediaType } from './media-type.ts';
import { toProxyError, type Upstream, type UpstreamResponse } from './upstream.ts';

export interface EndpointContext {
  upstream: Upstream;
  limits: Limits;
  logger: Logger;
  sessions: SessionStore;
  correlator: Correlator;
  /** The rule engine and rewriters of a policy (its extra patterns included). */
  runtime: (policy: Policy) => Runtime;
  /** The policy in force now; an exchange takes it once, at its start. */
  policy: () => Policy;
  /** Monotonic clock in ms. */
  now: () => number;
  metrics: Metrics;
  /** The capture sink writing to a path (one per path, opened on first use). */
  capture: (path: string) => CaptureSink;
  /** Request bodies held at once, over all exchanges. */
  bodies: BodyBudget;
  /** Rewrites response headers that name the upstream's own address (WWW-Authenticate). */
  fixHeaders: (req: IncomingMessage, headers: UpstreamResponse['headers']) => UpstreamResponse['headers'];
}

const MAX_UNMATCHED = 8;

/** The response's media type: a Content-Type sent twice naming one type is that type (a stream stays a stream). */
const contentType = (headers: UpstreamResponse['headers']): string => mediaType(headers['content-type']);

/** What a decided exchange puts in place of the server's message, if anything. */
const changeOf = (c: Completed, target: Message | undefined): BodyChange | undefined =>
  c.decision && c.decision.kind !== 'pass' ? { target, message: c.decision.message } : undefined;

/** Whether what the client gets cannot depend on the rules (audit mode): then it is delivered first and judged after. */
const judgedAfterDelivery = (x: HttpExchange): boolean => x.policy.mode !== 'enforce';

const statusOf = (c: Completed): number | undefined => (c.decision && c.decision.kind !== 'pass' ? c.decision.status : undefined);

export function createMcpEndpoint(ctx: EndpointContext) {
  const { logger, correlator, sessions, limits } = ctx;
  let seq = 0;

  const stages = (x: HttpExchange): StageContext => ({ correlator, ...ctx.runtime(x.policy), policy: x.policy, now: ctx.now() });

  /** Logs completed exchanges (and captures them, when the exchange's policy asks for it). */
  const log = (x: HttpExchange, completed: readonly Completed[], http: ExchangeHttp): void => {
    for (const c of completed) {
      logExchange(logger, c, { ...http, arguments: x.policy.log.arguments });
      ctx.metrics.exchange(c, http.status, (tool) => x.flow.session.tools.has(tool));
      // The capture keeps what the rules judged (the server's status and body), not what a rewrite sent.
      if (x.policy.capture && c.subject) ctx.capture(x.policy.capture.path).write(captureRecord(c, c.subject, new Date()));
    }
  };

  /** Runs a frame through the pipeline and remembers on the exchange what answered nothing. */
  const pipe = (x: HttpExchange, frame: Pick<Frame, 'from' | 'body' | 'size' | 'http' | 'issuedSessionId' | 'decoded'>): Frame => {
    const done = runPipeline({ ...frame, flow: x.flow, completed: [], unmatched: [], opened: [], postFindings: [] }, stages(x));
    if (done.from === 'server') {
      x.bodyProblem ??= bodyProblemOf(done.decoded, done.body);
      for (const m of done.unmatched) if (x.unmatched.length < MAX_UNMATCHED) x.unmatched.push(m);
    }
    if (done.decoded && !done.decoded.ok) {
      const { problem, detail } = done.decoded;
      logger.info(
        { from: done.from, problem, detail, session: x.flow.sessionId ?? null, transport: done.http.transport, bytes: done.size },
        'undecodable',
      );
    }
    return done;
  };

  /**
   * Requests of this exchange that got no response on it: taken out of the table, judged and
   * decided now. An unaudited answer is decided only while it has not gone out (enforce may block
   * what it cannot read); once relayed there is nothing left to rewrite or block.
   */
  const abandon = (x: HttpExchange, outcome: string, http: ResponseHttp, decidable = outcome !== 'unaudited'): Completed[] => {
    const now = ctx.now();
    const out: Completed[] = [];
    for (const [i, id] of x.requestIds.entries()) {
      const c = correlator.abandon(x.flow.scope, 'client', id, now, outcome, x.flow.exchange, x.requestTokens[i]);
      if (!c) continue;
      const subject = exchangeSubject(c, x.flow, http, x.bodyProblem, x.unmatched);
      judge(c, subject, stages(x));
      if (decidable) decideFor(c, subject, stages(x));
      out.push(c);
    }
    return out;
  };

  /**
   * An SSE event that is the POST's answer, broken (an error without an id, an HTML page, JSON
   * that is not JSON-RPC): with one request waiting on the stream, it is that request's answer,
   * judged and decided here so a rewrite can take the event's place.
   */
  function brokenAnswer(x: HttpExchange, frame: Frame, http: ResponseHttp): Completed[] {
    if (x.requestIds.length !== 1 || frame.completed.length > 0) return [];
    const problem = bodyProblemOf(frame.decoded, frame.body);
    // Only what is clearly a failed answer counts: an error without an id, an HTML page, a JSON
    // object that is not JSON-RPC. Unreadable data may be a broken notification, not the answer.
    const answerLike = problem?.problem === 'html' || problem?.problem === 'not-jsonrpc';
    if (!answerLike && !nullIdError(frame.unmatched)) return [];
    const c = correlator.abandon(
      x.flow.scope,
      'client',
      x.requestIds[0]!,
      ctx.now(),
      'invalid-response',
      x.flow.exchange,
      x.requestTokens[0],
    );
    if (!c) return [];
    const subject = exchangeSubject(c, x.flow, http, problem, frame.unmatched);
    judge(c, subject, stages(x));
    decideFor(c, subject, stages(x));
    return [c];
  }

  /** Whether the policy blocks what it cannot read (unaudited-response) for this exchange's first request. */
  const blocksUnread = (x: HttpExchange): boolean => {
    const first = x.requestIds[0];
    const open = first === undefined ? undefined : correlator.pending(x.flow.scope, 'client', first, x.requestTokens[0]);
    return (
      x.policy.setting({ rule: 'unaudited-response', group: 'bodies', severity: 'info', method: open?.method, tool: open?.tool }).action ===
      'block'
    );
  };

  /** Sends a body the proxy built (rewritten or its own), as JSON, unencoded: the server's Content-Encoding described its bytes, not these. */
  function sendJson(res: ServerResponse, status: number, headers: ReturnType<typeof clientHeaders>, body: Buffer): void {
    const { 'content-encoding': _coding, ...rest } = headers;
    res.writeHead(status, { ...rest, 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  }

  /** The proxy could not get an answer: the client gets a JSON-RPC error (or the policy's rewrite), the log says why. */
  function fail(x: HttpExchange, err: unknown): void {
    if (x.gone.aborted) {
      log(x, abandon(x, 'client-closed', { status: undefined, contentType: undefined, transport: 'none' }), {
        status: undefined,
        transport: 'none',
      });
      return;
    }
    const pe = toProxyError(err);
    if (pe.code === 'WARDEN_INTERNAL') logger.error({ err }, 'proxy error');
    const abandoned = abandon(x, 'no-response', { status: pe.status, contentType: undefined, transport: 'none', proxyError: pe.code });
    const changes = abandoned.map((c) => changeOf(c, undefined)).filter((c) => c !== undefined);
    let status = x.res.headersSent ? x.res.statusCode : pe.status;
    if (!x.res.headersSent && changes.length > 0) {
      status = statusOf(abandoned[0]!) ?? 200;
      sendJson(x.res, status, {}, rewriteBody(undefined, changes)!);
    } else {
      sendProxyError(x.res, pe, x.requestIds, x.batch);
    }
    log(x, abandoned, { status, transport: 'none', proxyError: pe.code });
  }

  /**
   * A JSON (or any non-SSE) upstream body: collected (decoded, when it has a Content-Encoding),
   * judged, rewritten if the policy says so, forwarded: unedited as the server sent it, edited unencoded.
   */
  async function relayBody(
    x: HttpExchange,
    up: UpstreamResponse,
    issuedSessionId: string | undefined,
    coding: Coding = codingOf(up.headers['content-encoding']),
  ): Promise<Frame | undefined> {
    const collected = await collect(up.body, coding, limits.auditBodyBytes);
    const headers = clientHeaders(ctx.fixHeaders(x.req, up.headers), collected.kind !== 'complete');
    const type = contentType(up.headers);
    const http: ResponseHttp = { status: up.status, contentType: type, transport: 'json' };
    const session = x.flow.sessionId ?? null;
    if (collected.kind === 'unread') {
      // Too large to hold (as it came or decoded), or in a coding the proxy cannot undo (read as
      // text it would look like garbage): relayed as it came.
      const why =
        collected.reason === 'too-large'
          ? { limit: limits.auditBodyBytes }
          : { reason: 'unknown-content-encoding', contentEncoding: up.headers['content-encoding'] };
      logger.warn({ session, status: up.status, ...why }, 'unaudited body');
      // Under enforce the policy decides what it cannot read before it goes out: with
      // unaudited-response at block the client gets an error with its id, not the unread body.
      const early = judgedAfterDelivery(x) ? undefined : abandon(x, 'unaudited', http, true);
      const blocked = early?.find((c) => c.decision?.kind === 'reject');
      if (early && blocked) {
        await collected.rest.return?.();
        up.body.destroy();
        const status = statusOf(blocked) ?? 200;
        sendJson(
          x.res,
          status,
          headers,
          rewriteBody(
            undefined,
            early.map((c) => changeOf(c, undefined)).filter((c) => c !== undefined),
          )!,
        );
        log(x, early, { status, transport: 'json' });
        return undefined;
      }
      x.res.writeHead(up.status, headers);
      const sent = await streamRest(x.res, collected.head, collected.rest);
      if (sent.delivered && !x.res.writableEnded) x.res.end();
      const unaudited = early ?? abandon(x, 'unaudited', http);
      for (const c of unaudited) c.responseBytes = sent.bytes;
      log(x, unaudited, http);
      return undefined;
    }
    const { wire } = collected;
    const sendAsIs = (): void => {
      if (up.status !== 204 && up.status !== 304) headers['content-length'] = wire.length;
      x.res.writeHead(up.status, headers);
      x.res.end(wire);
    };
    // Under audit the client gets the body as it came whatever the rules find: it goes out first,
    // and the judging and the log follow, off the response's path.
    const judgedAfter = judgedAfterDelivery(x);
    if (judgedAfter) sendAsIs();
    let frame: Frame | undefined;
    if (collected.kind === 'undecodable') {
      // Not in the coding it names: the client cannot read it either. Judged as the unreadable body
      // it is; relayed as it came unless the policy replaces it.
      const detail = undecodableDetail(coding, collected.error);
      logger.warn({ session, status: up.status, contentEncoding: up.headers['content-encoding'], detail }, 'undecodable body');
      x.bodyProblem ??= { problem: 'not-utf8', excerpt: detail };
    } else if (collected.bytes.length > 0) {
      frame = pipe(x, { from: 'server', body: collected.bytes, size: wire.length, http, issuedSessionId });
    } else if (x.requestIds.length > 0) {
      x.bodyProblem ??= { problem: 'empty', excerpt: '' };
    }
    const empty = collected.kind === 'complete' && collected.bytes.length === 0;
    const abandoned = abandon(x, empty ? 'no-response' : 'invalid-response', http);

    const target = nullIdError(frame?.unmatched ?? []);
    const changes = [...(frame?.completed ?? []).map((c) => changeOf(c, c.response)), ...abandoned.map((c) => changeOf(c, target))].filter(
      (c) => c !== undefined,
    );
    // A body that answered nothing usable is replaced whole; a usable one keeps its other messages.
    const rewritten = rewriteBody(x.bodyProblem ? undefined : frame?.decoded, changes);
    const decided = [...(frame?.completed ?? []), ...abandoned].find((c) => statusOf(c) !== undefined);
    const usable = frame?.decoded?.ok === true && !x.bodyProblem;
    const status = rewritten ? ((decided && statusOf(decided)) ?? (usable ? up.status : 200)) : up.status;
    // A client body that did not parse opened no request: its answer is the POST's own, judged by the
    // POST-level rules, and under enforce decided before it goes out (parse-error-unanswered: -32700).
    const post = !rewritten && !judgedAfter && x.inbound?.decoded?.ok === false ? postDecision(x, up, frame) : undefined;
    if (post) sendJson(x.res, post.status ?? 400, headers, encodeBody([post.message], false));
    else if (rewritten) sendJson(x.res, status, headers, rewritten);
    else if (!judgedAfter) sendAsIs();
    const logged: ExchangeHttp = { status, transport: 'json' };
    log(x, frame?.completed ?? [], logged);
    log(x, abandoned, logged);
    return frame;
  }

  /** Judges the POST (x.judged) and decides on it; the decision when it replaces the server's answer. */
  function postDecision(x: HttpExchange, up: UpstreamResponse, frame: Frame | undefined): Exclude<Decision, { kind: 'pass' }> | undefined {
    const judged = judgedPost(x, x.inbound!, up, frame, ctx.runtime(x.policy).engine);
    const decision = decidePost(judged.findings, judged.subject, x.policy);
    x.judged = decision.kind === 'pass' ? judged : { ...judged, applied: new Set(decision.rules) };
    if (decision.kind === 'pass') return undefined;
    logDecision(logger, decision, postWhere(x, x.inbound!));
    ctx.metrics.decided(decision);
    return decision;
  }

  /** Relays the upstream response (an SSE stream or a body); returns the body's frame when there was one. */
  async function relayResponse(x: HttpExchange, up: UpstreamResponse, streamTransport: 'sse' | 'get-sse'): Promise<Frame | undefined> {
    const issued = up.headers[H.sessionId];
    const issuedSessionId = typeof issued === 'string' ? issued : undefined;
    const type = contentType(up.headers);
    const coding = codingOf(up.headers['content-encoding']);
    if (type !== 'text/event-stream') return relayBody(x, up, issuedSessionId, coding);
    const readAfterWrite = judgedAfterDelivery(x);
    // An event can only be replaced in the clear: when the policy may edit (enforce), a compressed
    // stream goes to the client decoded, without its Content-Encoding. Under audit it goes as it came.
    const decoded = coding.kind === 'known' && !readAfterWrite;
    const headers = clientHeaders(ctx.fixHeaders(x.req, up.headers), false);
    if (decoded) delete headers['content-encoding'];
    x.res.writeHead(up.status, headers);
    x.res.flushHeaders();
    const http: ExchangeHttp = { status: up.status, transport: streamTransport };
    const frameHttp: ResponseHttp = { ...http, contentType: type };
    const session = x.flow.sessionId ?? null;
    const started = ctx.now();
    ctx.metrics.streamOpened();
    const onEvent = (data: string, size: number, raw: Buffer): Buffer | undefined => {
      const frame = pipe(x, { from: 'server', body: data, size, http: frameHttp, issuedSessionId });
      // Most events are notifications: nothing completed, nothing broken, nothing to rewrite.
      if (frame.completed.length === 0 && frame.unmatched.length === 0 && !bodyProblemOf(frame.decoded, frame.body)) return undefined;
      log(x, frame.completed, http);
      const broken = brokenAnswer(x, frame, frameHttp);
      log(x, broken, http);
      const changes = [
        ...frame.completed.map((c) => changeOf(c, c.response)),
        ...broken.map((c) => changeOf(c, nullIdError(frame.unmatched))),
      ].filter((c) => c !== undefined);
      const rewritten = rewriteBody(bodyProblemOf(frame.decoded, frame.body) ? undefined : frame.decoded, changes);
      return rewritten ? encodeSseEvent(raw, rewritten.toString('utf8')) : undefined;
    };
    // A coding the proxy cannot undo: relayed as it came, not read (read as text it would look like garbage).
    if (coding.kind === 'unknown')
      logger.warn(
        { session, status: up.status, reason: 'unknown-content-encoding', contentEncoding: up.headers['content-encoding'] },
        'unaudited stream',
      );
    // Under enforce with unaudited-response at block, an event too large to read is withheld.
    const withhold = !readAfterWrite && blocksUnread(x);
    const summary =
      coding.kind === 'identity'
        ? await relaySse(up.body, x.res, limits.auditEventBytes, readAfterWrite, onEvent, withhold)
        : decoded
          ? await relaySse(decodedBody(up.body, coding), x.res, limits.auditEventBytes, false, onEvent, withhold)
          : await mirrorSse(up.body, x.res, coding.kind === 'known' ? decoderFor(coding) : undefined, limits.auditEventBytes, onEvent);
    ctx.metrics.streamClosed();
    if (summary.error && !x.gone.aborted) {
      logger.warn({ session, proxyError: summary.error.code, events: summary.events }, 'stream broken');
    }
    if (summary.undecodable) {
      // The stream stopped decoding: what is still unanswered was answered with bytes no client can read.
      const detail = undecodableDetail(coding, summary.undecodable);
      logger.warn(
        { session, status: up.status, contentEncoding: up.headers['content-encoding'], events: summary.events, detail },
        'undecodable stream',
      );
      x.bodyProblem ??= { problem: 'not-utf8', excerpt: detail };
    }
    // A legacy session whose stream carried event ids may resume it on a GET: keep waiting then.
    // A client that dropped such a stream may resume it too (legacy disconnection is no
    // cancellation), but only for a while: past the resumption window it is logged client-closed.
    const resumable = x.flow.sessionId !== undefined && summary.sawEventId && eraOf(x.flow.protocolVersion ?? '') === 'legacy';
    if (resumable && x.gone.aborted) {
      for (const [i, id] of x.requestIds.entries())
        correlator.expire(x.flow.scope, 'client', id, ctx.now() + limits.resumeWindowMs, x.flow.exchange, x.requestTokens[i]);
    }
    if (summary.unaudited > 0) {
      logger.warn({ session: x.flow.sessionId ?? null, events: summary.unaudited, limit: limits.auditEventBytes }, 'unaudited event');
    }
    if (!resumable) {
      // An event too large to read may have been the answer: it was delivered, unread, not missed.
      const unread = summary.unaudited > 0 || coding.kind === 'unknown';
      const outcome = x.gone.aborted ? 'client-closed' : unread ? 'unaudited' : summary.undecodable ? 'invalid-response' : 'no-response';
      const broken = summary.error && !x.gone.aborted ? summary.error.code : undefined;
      // The proxy gave up on the stream: the upstream broke it, or its bytes, decoded for the client, stopped decoding.
      const gaveUp = x.gone.aborted
        ? undefined
        : (summary.error ??
          (decoded && summary.undecodable
            ? new ProxyError('WARDEN_UPSTREAM_PROTOCOL', 'Upstream MCP server sent a stream that does not decode as its Content-Encoding')
            : undefined));
      const ended: ExchangeHttp = gaveUp ? { ...http, proxyError: gaveUp.code } : http;
      // A withheld event has not gone out: the policy's block answers for it.
      const abandoned = abandon(x, outcome, { ...frameHttp, proxyError: broken }, outcome !== 'unaudited' || summary.withheld > 0);
      // Each request still waiting gets one answer before the stream ends, if the client is still
      // there: the response the policy built, else, when the proxy gave up, its own error with the
      // request's id. Never into a stream still in the server's coding (the client would decode it
      // as garbage), and no error after an event too large to read: that may have been the answer.
      if (!x.gone.aborted && !x.res.destroyed && (coding.kind === 'identity' || decoded)) {
        const answers: StreamAnswer[] = [];
        for (const c of abandoned) {
          const change = changeOf(c, undefined);
          if (change) answers.push({ message: change.message });
          else if (gaveUp && !unread) answers.push({ error: gaveUp, id: c.request.id });
        }
        if (answers.length > 0) x.res.write(answerEvents(summary, answers));
      }
      log(x, abandoned, ended);
    }
    if (!x.res.writableEnded) x.res.end();
    if (streamTransport === 'get-sse') {
      logger.info(
        {
          session: x.flow.sessionId ?? null,
          status: up.status,
          events: summary.events,
          bytes: summary.bytes,
          durationMs: Math.round(ctx.now() - started),
        },
        'stream',
      );
    }
    return undefined;
  }

  const exchangeFor = (
    req: IncomingMessage,
    res: ServerResponse,
    flow: Flow,
    gone: ClientGone,
    messages: readonly Message[] = [],
    batch = false,
  ): HttpExchange => ({
    req,
    res,
    flow,
    policy: ctx.policy(),
    requestIds: messages.flatMap((m) => (m.kind === 'request' ? [m.id] : [])),
    requestTokens: messages.flatMap((m) => (m.kind === 'request' ? [idTokenOf(m)] : [])),
    batch,
    gone,
    unmatched: [],
  });

  async function post(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const gone = new ClientGone(res);
    let body: Buffer;
    // What the server will read: the body itself, or, with a Content-Encoding, the body decoded.
    let plain: Buffer;
    try {
      body = await readBody(req, limits.maxRequestBytes, ctx.bodies);
      // Held until the exchange is over: judging and forwarding both read it.
      let held = body.length;
      res.once('close', () => ctx.bodies.give(held));
      plain = await decodedRequestBody(body, req.headers['content-encoding'], limits.maxRequestBytes);
      if (plain !== body) {
        if (!ctx.bodies.take(plain.length))
          throw new ProxyError('WARDEN_OVERLOADED', 'Request bodies held by the proxy reached their limit; retry later');
        held += plain.length;
      }
    } catch (err) {
      const pe = toProxyError(err);
      if (pe.code === 'WARDEN_BODY_TOO_LARGE') res.setHeader('connection', 'close');
      logger.warn({ proxyError: pe.code, detail: pe.message }, 'request rejected');
      sendProxyError(res, pe, [], false);
      return;
    }
    const decoded = decodeJson(plain);
    const messages: readonly Message[] = decoded.ok ? decoded.payload.messages : [];
    // The POST's response may answer only the requests this POST carried.
    const flow = resolveFlow(req.headers, messages, sessions, ++seq, ctx.now(), true);
    const x = exchangeFor(req, res, flow, gone, messages, decoded.ok && decoded.payload.batch);
    const forward = (headers: Record<string, string | string[]>) =>
      ctx.upstream.request({ method: 'POST', path: upstreamPath(req), headers, body, signal: gone, longLived: false });
    // Under audit the client's rules can neither block nor change the request: it goes upstream
    // first and is judged while the server works. (Its response cannot be read before this
    // synchronous judging has registered the request.)
    const early = judgedAfterDelivery(x) ? forward(upstreamHeaders(req)) : undefined;
    // Awaited below; should the judging throw first, its failure must not go unhandled.
    early?.catch(() => {});
    const inbound = pipe(x, {
      from: 'client',
      body: plain,
      size: body.length,
      http: { status: undefined, contentType: undefined, transport: 'none' },
      issuedSessionId: undefined,
      decoded,
    });
    x.inbound = inbound;
    const verdict = judgeClientRequest(x, inbound, { logger, correlator, metrics: ctx.metrics, now: ctx.now });
    if (verdict.blocked) return;
    try {
      const up = await (early ?? forward(verdict.headers ?? upstreamHeaders(req)));
      // Answers the client gave to server requests are complete once the server accepted them.
      log(x, inbound.completed, { status: up.status, transport: 'none' });
      const reply = await relayResponse(x, up, 'sse');
      judgePost(x, inbound, up, reply, { logger, metrics: ctx.metrics, engine: ctx.runtime(x.policy).engine }, x.judged);
    } catch (err) {
      fail(x, err);
    }
  }

  /** GET (the server's stream, long-lived) and DELETE (the session's end): no body to read, the answer relayed. */
  async function forward(req: IncomingMessage, res: ServerResponse, method: 'GET' | 'DELETE'): Promise<void> {
    const flow = resolveFlow(req.headers, [], sessions, ++seq, ctx.now());
    const x = exchangeFor(req, res, flow, new ClientGone(res));
    try {
      const longLived = method === 'GET';
      const up = await ctx.upstream.request({
        method,
        path: upstreamPath(req),
        headers: upstreamHeaders(req),
        body: undefined,
        signal: x.gone,
        longLived,
      });
      if (method === 'GET') {
        await relayResponse(x, up, 'get-sse');
        return;
      }
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
      const method = req.method;
      if (method !== 'POST' && method !== 'GET' && method !== 'DELETE') return false;
      (method === 'POST' ? post(req, res) : forward(req, res, method)).catch((err: unknown) => {
        logger.error({ err }, 'unexpected failure on the MCP endpoint');
        if (!res.headersSent) sendProxyError(res, new ProxyError('WARDEN_INTERNAL'), [], false);
        else res.destroy();
      });
      return true;
    },
  };
}
