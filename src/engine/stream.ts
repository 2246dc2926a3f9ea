// A server's answer as an SSE stream: each event judged as it passes (rewritten in place under
// enforce), and what the requests still waiting get when the stream ends.
import { ProxyError } from '../errors.ts';
import { eraOf } from '../mcp/versions.ts';
import { nullIdError, repeatsOfChanged, rewriteBody } from '../rewrite/apply.ts';
import { exchangeSubject, type ResponseHttp } from '../rules/subjects.ts';
import type { BodyProblem } from '../rules/types.ts';
import { changeOf, changesOf } from './body.ts';
import { judgeExchange } from './judge.ts';
import { malformedAnswered, unansweredInSession } from './malformed-answers.ts';
import { ORDERING } from './order.ts';
import type { ExchangeHttp, Judged, JudgedExchange, StreamAnswer, StreamEndPlan, StreamPlan } from './plans.ts';
import { postFindings } from './post.ts';
import type { Frame } from './stages.ts';
import { abandon, answeredWithoutId, exchanges, pipe, stagesFor, type EngineCore, type ExchangeState } from './state.ts';

/** Whether the policy blocks what it cannot read (unaudited-response) for this exchange's first request. */
function blocksUnread(core: EngineCore, x: ExchangeState): boolean {
  const first = x.requestIds[0];
  const open = first === undefined ? undefined : core.correlator.pending(x.flow.scope, 'client', first, x.requestTokens[0]);
  return (
    x.policy.setting({ rule: 'unaudited-response', group: 'bodies', severity: 'info', method: open?.method, tool: open?.tool }).action ===
    'block'
  );
}

/** How to relay the stream (`coding`: its Content-Encoding, as far as the proxy can undo it). */
export function streamPlan(core: EngineCore, x: ExchangeState, coding: 'identity' | 'known' | 'unknown'): StreamPlan {
  const readAfterWrite = ORDERING[x.order].writeBeforeJudging;
  return { readAfterWrite, decode: coding === 'known' && !readAfterWrite, withholdOversize: !readAfterWrite && blocksUnread(core, x) };
}

/**
 * An SSE event that is the POST's answer, broken (an error without an id, an HTML page, JSON that
 * is not JSON-RPC): with one request waiting on the stream, it is that request's answer, judged and
 * decided here so a rewrite can take the event's place.
 */
function brokenAnswer(core: EngineCore, x: ExchangeState, frame: Frame, http: ResponseHttp): JudgedExchange[] {
  if (x.requestIds.length !== 1 || frame.completed.length > 0) return [];
  const { problem } = frame;
  // Only what is clearly a failed answer counts: an error without an id, an HTML page, a JSON
  // object that is not JSON-RPC. Unreadable data may be a broken notification, not the answer.
  const answerLike = problem?.problem === 'html' || problem?.problem === 'not-jsonrpc';
  const idless = nullIdError(frame.unmatched);
  if (!answerLike && !idless) return [];
  const taken = core.correlator.abandon(
    x.flow.scope,
    'client',
    x.requestIds[0]!,
    core.now(),
    'invalid-response',
    x.flow.exchange,
    x.requestTokens[0],
  );
  if (!taken) return [];
  const c = idless && !problem ? answeredWithoutId(taken, { error: idless, bytes: frame.size }) : taken;
  return [judgeExchange(c, exchangeSubject(c, x.flow, http, problem, frame.unmatched), stagesFor(core, x))];
}

/** One server message (an SSE event's data): judged; `rewritten` is the message text that goes out instead, when the policy rewrote it (the transport frames it). */
export function serverEvent(
  core: EngineCore,
  x: ExchangeState,
  event: { data: string; size: number; raw: Buffer },
  http: ExchangeHttp,
  frameHttp: ResponseHttp,
  issuedSessionId: string | undefined,
): { rewritten: string | undefined; judged: Judged[]; problem: BodyProblem | undefined } {
  const judged: Judged[] = [];
  const frame = pipe(core, x, { from: 'server', body: event.data, size: event.size, http: frameHttp, issuedSessionId }, judged);
  judged.push(...malformedAnswered(core, x, frame));
  const { problem } = frame;
  // Most events are notifications: nothing completed, nothing broken, nothing to rewrite.
  if (frame.completed.length === 0 && frame.unmatched.length === 0 && !problem) return { rewritten: undefined, judged, problem };
  const broken = brokenAnswer(core, x, frame, frameHttp);
  judged.push(...exchanges(frame.completed, http), ...exchanges(broken, http));
  const target = nullIdError(frame.unmatched);
  const changes = [...changesOf(frame.completed, (j) => j.exchange.response), ...changesOf(broken, () => target)];
  const rewritten = rewriteBody(problem ? undefined : frame.decoded, changes, repeatsOfChanged(changes, frame.unmatched));
  return { rewritten: rewritten?.toString('utf8'), judged, problem };
}

/**
 * A session's transport ended (a legacy SSE session's stream closed, a stdio child exited): no
 * request still open in it can be answered any more. Each client request gets the policy's answer,
 * else (when `err` says why the proxy gave up) the proxy's error with its id; `canAnswer`: the
 * client can still read what the proxy writes.
 */
export function sessionGone(
  core: EngineCore,
  x: ExchangeState,
  err: ProxyError | undefined,
  frameHttp: ResponseHttp,
  canAnswer: boolean,
  outcome: 'no-response' | 'client-closed',
): StreamEndPlan {
  const ctx = stagesFor(core, x);
  const http: ResponseHttp = { ...frameHttp, proxyError: err?.code };
  const ended = core.correlator
    .abandonSession(x.flow.session, ctx.now, outcome)
    .map((c) =>
      judgeExchange(c, exchangeSubject(c, x.flow, http, x.bodyProblem, x.unmatched), ctx, c.request.from === 'client' && canAnswer),
    );
  const answers: StreamAnswer[] = [];
  for (const j of ended) {
    if (!canAnswer || j.exchange.request.from !== 'client') continue;
    const change = changeOf(j, undefined);
    if (change) answers.push({ message: change.message });
    else if (err) answers.push({ error: err, id: j.exchange.request.id });
  }
  // What still waited for an answer on the session's stream got none (the Go and Rust SDKs' servers exit on such a line).
  const unansweredLines = unansweredInSession(core, x);
  return {
    answers,
    judged: () => [
      ...unansweredLines,
      ...exchanges(ended, { status: frameHttp.status, transport: frameHttp.transport, proxyError: err?.code }),
    ],
  };
}

/** How a stream ended, as the transport saw it. */
export interface StreamEnd {
  /** The client went away first. */
  clientGone: boolean;
  /** The proxy can still write events the client reads (it is there, and its copy of the stream is in the clear). */
  canAnswer: boolean;
  /** Any event carried an id (a legacy stream can be resumed). */
  sawEventId: boolean;
  /** Events over the size limit relayed unread, and of those the ones withheld. */
  unaudited: number;
  withheld: number;
  /** The stream's coding is one the proxy cannot undo: nothing of it was read. */
  unreadCoding: boolean;
  /** Why the upstream broke the stream, if it did. */
  error: ProxyError | undefined;
  /** Why its bytes stopped decoding, if they did (and whether the client got them decoded). */
  undecodable: string | undefined;
  decoded: boolean;
}

/** The stream ended: what the requests still waiting on it get, and what was judged. */
export function streamEnd(core: EngineCore, x: ExchangeState, end: StreamEnd, http: ExchangeHttp, frameHttp: ResponseHttp): StreamEndPlan {
  // The stream stopped decoding: what is still unanswered was answered with bytes no client can read.
  if (end.undecodable !== undefined) x.bodyProblem ??= { problem: 'not-utf8', excerpt: end.undecodable };
  // A session (2025-03-26 to 2025-11-25) whose stream carried event ids may resume it on a GET
  // with Last-Event-ID, whoever ended it (a server may close a stream on purpose, 2025-11-25):
  // no error goes into it, and the answer may still come on the resumed stream. Only for a while:
  // past the resumption window, a request still waiting is logged (client-closed when the client
  // dropped the stream, else no-response with expired: not-resumed).
  const resumable = x.flow.sessionId !== undefined && end.sawEventId && eraOf(x.flow.protocolVersion ?? '') === 'legacy';
  if (resumable) {
    const at = core.now() + core.limits.resumeWindowMs;
    const why = end.clientGone ? 'client-closed' : 'not-resumed';
    for (const [i, id] of x.requestIds.entries())
      core.correlator.expire(x.flow.scope, 'client', id, at, why, x.flow.exchange, x.requestTokens[i]);
    return { answers: [], judged: () => postFindings(core, x, undefined) };
  }
  // An event too large to read may have been the answer: it was delivered, unread, not missed.
  const unread = end.unaudited > 0 || end.unreadCoding;
  const outcome = end.clientGone
    ? 'client-closed'
    : unread
      ? 'unaudited'
      : end.undecodable !== undefined
        ? 'invalid-response'
        : 'no-response';
  const broken = end.error && !end.clientGone ? end.error.code : undefined;
  // The proxy gave up on the stream: the upstream broke it, or its bytes, decoded for the client, stopped decoding.
  const gaveUp = end.clientGone
    ? undefined
    : (end.error ??
      (end.decoded && end.undecodable !== undefined
        ? new ProxyError('WARDEN_UPSTREAM_PROTOCOL', 'Upstream MCP server sent a stream that does not decode as its Content-Encoding')
        : undefined));
  const ended: ExchangeHttp = {
    ...http,
    ...(gaveUp && { proxyError: gaveUp.code }),
    ...(outcome === 'unaudited' && { unread: end.unreadCoding ? 'unknown-coding' : 'too-large' }),
  };
  // A withheld event has not gone out: the policy's block answers for it.
  const abandoned = abandon(core, x, outcome, { ...frameHttp, proxyError: broken }, outcome !== 'unaudited' || end.withheld > 0);
  // Each request still waiting gets one answer before the stream ends: the response the policy
  // built, else, when the proxy gave up, its own error with the request's id. No error after an
  // event too large to read: that may have been the answer.
  const answers: StreamAnswer[] = [];
  if (end.canAnswer) {
    for (const j of abandoned) {
      const change = changeOf(j, undefined);
      if (change) answers.push({ message: change.message });
      else if (gaveUp && !unread) answers.push({ error: gaveUp, id: j.exchange.request.id });
    }
  }
  return { answers, judged: () => [...exchanges(abandoned, ended), ...postFindings(core, x, undefined)] };
}
