// The MCP endpoint's SSE responses: a POST's stream or a GET stream, relayed event by event as the
// engine plans it; a GET stream whose server names an `endpoint` is a legacy HTTP+SSE session.
import type { ExchangeHttp } from '../engine/plans.ts';
import { causeOf, ProxyError } from '../errors.ts';
import { H } from '../mcp/headers.ts';
import { parseBlock } from '../codec/sse.ts';
import { excerpt } from '../redact/excerpt.ts';
import { encodeSseEvent, sseEvent } from '../rewrite/encode.ts';
import type { ResponseHttp } from '../rules/subjects.ts';
import { redactUrl } from '../sinks/redact.ts';
import { codingOf, decodedBody, decoderFor, undecodableDetail } from './content-coding.ts';
import { clientHeaders } from './egress.ts';
import { recorder, type EndpointContext, type Http } from './endpoint-context.ts';
import type { LegacySession } from './legacy-sse.ts';
import { answerEvents, mirrorSse, relaySse } from './sse-relay.ts';
import type { UpstreamResponse } from './upstream.ts';

export function createStreamRelay(ctx: EndpointContext) {
  const { logger, engine, limits } = ctx;
  const record = recorder(ctx);

  /** Relays an SSE stream event by event, as the engine plans it. */
  return async function relayStream(
    h: Http,
    up: UpstreamResponse,
    transport: 'sse' | 'get-sse',
    issuedSessionId: string | undefined,
  ): Promise<void> {
    const coding = codingOf(up.headers['content-encoding']);
    ctx.judging.flush();
    const plan = engine.streamPlan(h.x, coding.kind);
    // A legacy client opens its stream without an Mcp-Session-Id (a Streamable HTTP GET names its session).
    const mayBeLegacy = transport === 'get-sse' && ctx.legacy.mode !== 'streamable-http' && h.req.headers[H.sessionId] === undefined;
    // A legacy session's endpoint event is read and rewritten before it goes out, in any mode: a
    // compressed stream that may carry one goes to the client decoded, as under enforce.
    const decode = plan.decode || (mayBeLegacy && coding.kind === 'known');
    const headers = clientHeaders(ctx.fixHeaders(h.req, up.headers), false);
    if (decode) delete headers['content-encoding'];
    h.res.writeHead(up.status, headers);
    h.res.flushHeaders();
    const http: ExchangeHttp = { status: up.status, transport };
    const frameHttp: ResponseHttp = { ...http, contentType: 'text/event-stream' };
    let session = h.x.flow.sessionId ?? null;
    const started = ctx.now();
    // A GET stream whose server names an `endpoint` is a legacy SSE session: from that event on,
    // its events are judged in that session, where the POSTs that name it open their requests.
    let legacy: LegacySession | undefined;
    const reroute = mayBeLegacy
      ? (data: string, raw: Buffer): Buffer | undefined => {
          if (data.startsWith('{') || parseBlock(raw).event !== 'endpoint') return undefined;
          const learned = ctx.legacy.learn(data, ctx.upstream.url, ctx.publicOrigin(h.req), ctx.now());
          if (!learned) {
            logger.warn({ endpoint: excerpt(data, 200) }, 'legacy endpoint on another origin relayed as it came');
            return undefined;
          }
          legacy = learned.session;
          legacy.deliver = (texts) => {
            if (h.gone.aborted || h.res.writableEnded || h.res.destroyed) return false;
            h.res.write(Buffer.concat(texts.map((t) => sseEvent(t))));
            return true;
          };
          h.x = engine.openBodiless('get', h.req.headers, legacy.via);
          session = legacy.via.sessionId ?? null;
          logger.info({ session, endpoint: learned.data }, 'legacy session');
          return encodeSseEvent(raw, learned.data);
        }
      : undefined;
    ctx.metrics.streamOpened();
    const onEvent = (data: string, size: number, raw: Buffer): Buffer | undefined => {
      // A stream's event may follow a body on another connection (a list, then its list_changed): that body is judged first.
      ctx.judging.flush();
      const { rewritten, judged } = engine.serverEvent(h.x, { data, size, raw }, http, frameHttp, issuedSessionId);
      record(h, judged);
      // The rewritten message in the event's place, under the event's own type and id.
      return rewritten === undefined ? undefined : encodeSseEvent(raw, rewritten);
    };
    // A coding the proxy cannot undo: relayed as it came, not read (read as text it would look like garbage).
    if (coding.kind === 'unknown')
      logger.warn(
        { session, status: up.status, reason: 'unknown-content-encoding', contentEncoding: up.headers['content-encoding'] },
        'unaudited stream',
      );
    const summary =
      coding.kind === 'identity'
        ? await relaySse(up.body, h.res, limits.auditEventBytes, plan.readAfterWrite, onEvent, plan.withholdOversize, reroute)
        : decode && coding.kind === 'known'
          ? await relaySse(
              decodedBody(up.body, coding),
              h.res,
              limits.auditEventBytes,
              plan.readAfterWrite,
              onEvent,
              plan.withholdOversize,
              reroute,
            )
          : await mirrorSse(up.body, h.res, coding.kind === 'known' ? decoderFor(coding) : undefined, limits.auditEventBytes, onEvent);
    ctx.metrics.streamClosed();
    if (summary.error && !h.gone.aborted)
      logger.error(
        // What broke underneath (a reset, a timeout) and where, as 'upstream failed' says it.
        {
          session,
          proxyError: summary.error.code,
          detail: summary.error.message,
          cause: causeOf(summary.error),
          upstream: redactUrl(ctx.upstream.url),
          events: summary.events,
        },
        'stream broken',
      );
    const undecodable = summary.undecodable ? undecodableDetail(coding, summary.undecodable) : undefined;
    if (undecodable !== undefined)
      logger.warn(
        { session, status: up.status, contentEncoding: up.headers['content-encoding'], events: summary.events, detail: undecodable },
        'undecodable stream',
      );
    if (summary.unaudited > 0) logger.warn({ session, events: summary.unaudited, limit: limits.auditEventBytes }, 'unaudited event');
    // Never into a stream still in the server's coding: the client would decode it as garbage.
    const canAnswer = !h.gone.aborted && !h.res.destroyed && (coding.kind === 'identity' || decode);
    ctx.judging.flush();
    const end = engine.streamEnd(
      h.x,
      {
        clientGone: h.gone.aborted,
        canAnswer,
        sawEventId: summary.sawEventId,
        unaudited: summary.unaudited,
        withheld: summary.withheld,
        unreadCoding: coding.kind === 'unknown',
        error: summary.error,
        undecodable,
        decoded: decode,
      },
      http,
      frameHttp,
    );
    // A legacy session lives as long as its stream: what is still waiting in it gets its answer now.
    const gone = legacy
      ? engine.sessionGone(
          h.x,
          summary.error ?? new ProxyError('WARDEN_UPSTREAM_RESET', "Upstream MCP server ended the session's SSE stream before responding"),
          frameHttp,
          canAnswer,
        )
      : undefined;
    if (legacy) ctx.legacy.end(legacy);
    const answers = [...end.answers, ...(gone?.answers ?? [])];
    if (answers.length > 0) h.res.write(answerEvents(summary, answers));
    if (!h.res.writableEnded) h.res.end();
    record(h, end.judged());
    if (gone) record(h, gone.judged());
    if (transport === 'get-sse') {
      logger.info(
        { session, status: up.status, events: summary.events, bytes: summary.bytes, durationMs: Math.round(ctx.now() - started) },
        'stream',
      );
    }
  };
}
