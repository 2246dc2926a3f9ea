// The exchange engine: the life of every exchange, independent of the transport that carries it.
// A transport hands in what happens (a client body, the upstream's answer, a server body or SSE
// event, a stream's end, a failure, time passing) and carries out the plan that comes back; the
// engine does no I/O. What it remembers between messages (sessions, open requests) it owns.
import type { IncomingHttpHeaders } from 'node:http';
import type { Decoded } from '../codec/json-body.ts';
import { idTokenOf, type Message } from '../codec/jsonrpc.ts';
import type { Limits } from '../config/defaults.ts';
import type { ProxyError } from '../errors.ts';
import { Correlator } from '../exchange/correlate.ts';
import { resolveFlow, type Via } from '../exchange/flow.ts';
import { SessionStore } from '../exchange/sessions.ts';
import type { ClaimBook } from '../exchange/claims.ts';
import { RequestTable } from '../exchange/table.ts';
import type { Runtime } from '../config/runtime.ts';
import type { Policy } from '../config/types.ts';
import type { ResponseHttp } from '../rules/subjects.ts';
import { PASS } from '../verdicts.ts';
import { failure, serverBody, unreadBody, unreadDelivered, type CollectedBody } from './body.ts';
import { clientBody, upstreamAccepted } from './client.ts';
import { awaitAnswer, unanswered } from './malformed-answers.ts';
import { MalformedWaits } from './malformed.ts';
import { serverLine, type LineDelivery, type ServerLine } from './line.ts';
import { ORDERING, orderOf } from './order.ts';
import type { BodyDelivery, ClientDelivery, ExchangeHttp, FailureDelivery, Judged, Plan, StreamEndPlan, StreamPlan } from './plans.ts';
import type { EngineCore, ExchangeState } from './state.ts';
import { serverEvent, sessionGone, streamEnd, streamPlan, type StreamEnd } from './stream.ts';

export interface EngineOptions {
  limits: Limits;
  /** The rule engine and rewriters of a policy (its extra patterns included). */
  runtime: (policy: Policy) => Runtime;
  /** The policy in force now; an exchange takes it once, at its start. */
  policy: () => Policy;
  /** Monotonic clock in ms. */
  now: () => number;
}

export class Engine {
  /** What the proxy remembers of sessions (versions, capabilities, tool catalogues). */
  readonly sessions: SessionStore;
  private readonly table: RequestTable;
  private readonly core: EngineCore;
  private seq = 0;
  /** What happened between plans (requests evicted or expired, catalogues dropped): handed out with the next plan or tick. */
  private happened: Judged[] = [];

  constructor(private readonly options: EngineOptions) {
    const { limits } = options;
    this.sessions = new SessionStore(limits, (dropped) =>
      this.happened.push({ kind: 'catalogue-dropped', ...dropped, limit: limits.maxCatalogueBytes }),
    );
    this.table = new RequestTable(
      limits.maxOpenRequests,
      limits.requestIdleMs,
      (request, why) => {
        // A dropped stream not resumed in time was the client's doing; the rest the proxy gave up on.
        const closed = why === 'client-closed';
        const exchange = {
          request,
          response: undefined,
          outcome: closed ? 'client-closed' : 'no-response',
          durationMs: options.now() - request.startedAt,
          responseBytes: 0,
        };
        this.happened.push({
          kind: 'exchange',
          judged: { exchange, subject: undefined, findings: [], decision: PASS },
          http: { status: undefined, transport: 'none', expired: closed ? undefined : why },
          detached: true,
        });
      },
      limits.maxOpenRequestsPerSession,
    );
    this.core = {
      correlator: new Correlator(this.table, this.sessions),
      limits,
      runtime: options.runtime,
      now: options.now,
      malformed: new MalformedWaits(),
    };
  }

  /** In a fleet: the claims on request ids made before each POST is judged (exchange/claims.ts). */
  claimRequestIds(claims: ClaimBook): void {
    this.core.correlator.claims = claims;
  }

  /** Requests awaiting their response now. */
  get openRequests(): number {
    return this.table.size;
  }

  /** A client's POST begins: its flow (session, version) from its headers and messages, under the policy in force now. */
  openPost(headers: IncomingHttpHeaders, decoded: Decoded, via?: Via, peer?: string): ExchangeState {
    const messages: readonly Message[] = decoded.ok ? decoded.payload.messages : [];
    // The POST's response may answer only the requests this POST carried (under Streamable HTTP).
    const x = this.open('post', headers, messages, decoded.ok && decoded.payload.batch, via);
    x.flow.peer = peer;
    return x;
  }

  /** A GET (the server's stream) or DELETE (the session's end) begins; `via`: the session a legacy SSE stream or a stdio child is. */
  openBodiless(kind: 'get' | 'delete', headers: IncomingHttpHeaders, via?: Via): ExchangeState {
    return this.open(kind, headers, [], false, via);
  }

  private open(
    kind: ExchangeState['kind'],
    headers: IncomingHttpHeaders,
    messages: readonly Message[],
    batch: boolean,
    via: Via | undefined,
  ): ExchangeState {
    const policy = this.options.policy();
    const requests = messages.filter((m) => m.kind === 'request');
    return {
      kind,
      flow: resolveFlow(headers, messages, this.sessions, ++this.seq, this.options.now(), kind === 'post', via),
      policy,
      order: orderOf(policy),
      requestIds: requests.map((m) => m.id),
      requestTokens: requests.map((m) => idTokenOf(m)),
      batch,
      unmatched: [],
    };
  }

  /** The client's POST body (`body` as the server will read it, `size` on the wire): forward it, or answer it. */
  clientBody(x: ExchangeState, body: Buffer, size: number, decoded: Decoded): Plan<ClientDelivery> {
    return this.withHappened(clientBody(this.core, x, body, size, decoded));
  }

  /** The upstream answered (its status and headers): answers the client gave in its POST are complete. */
  upstreamAnswered(x: ExchangeState, status: number, headers: IncomingHttpHeaders): readonly Judged[] {
    x.upstream = { status, headers };
    return this.drain(upstreamAccepted(x, status));
  }

  /**
   * The upstream accepted a legacy SSE POST (2xx): its answers come on the session's stream, its
   * body is no answer. A refusal (any other status) is an answer: `serverBody` judges it.
   */
  legacyPostAccepted(x: ExchangeState): readonly Judged[] {
    // A body that is no request, accepted: its answer (-32700, -32600) is owed on the stream.
    awaitAnswer(this.core, x);
    return this.drain([]);
  }

  /** The upstream's body, read whole. */
  serverBody(
    x: ExchangeState,
    body: CollectedBody,
    http: ResponseHttp,
    wireBytes: number,
    issuedSessionId: string | undefined,
  ): Plan<BodyDelivery> {
    return this.withHappened(serverBody(this.core, x, body, http, wireBytes, issuedSessionId));
  }

  /** The upstream's body cannot be read (too large, or in a coding the proxy cannot undo). */
  unreadBody(x: ExchangeState, http: ResponseHttp): Plan<BodyDelivery> {
    return this.withHappened(unreadBody(this.core, x, http));
  }

  /** The unread body went out, `bytes` of it. */
  unreadDelivered(x: ExchangeState, http: ResponseHttp, bytes: number): readonly Judged[] {
    return this.drain(unreadDelivered(this.core, x, http, bytes));
  }

  /** The upstream answers with an SSE stream (`coding`: its Content-Encoding, as far as the proxy can undo it). */
  streamPlan(x: ExchangeState, coding: 'identity' | 'known' | 'unknown'): StreamPlan {
    return streamPlan(this.core, x, coding);
  }

  /** One server message on a stream (an SSE event's data); `rewritten`, when set, is the message text that goes out in its place. */
  serverEvent(
    x: ExchangeState,
    event: { data: string; size: number; raw: Buffer },
    http: ExchangeHttp,
    frameHttp: ResponseHttp,
    issuedSessionId: string | undefined,
  ): { rewritten: string | undefined; judged: readonly Judged[] } {
    const { rewritten, judged } = serverEvent(this.core, x, event, http, frameHttp, issuedSessionId);
    return { rewritten, judged: this.drain(judged) };
  }

  /** Whether what comes now is delivered before it is judged (audit), under the policy in force now. */
  deliversFirst(): boolean {
    return ORDERING[orderOf(this.options.policy())].writeBeforeJudging;
  }

  /** A line of a stdio child's stdout (`x`: a server stream opened with the child's `via`). */
  serverLine(x: ExchangeState, line: ServerLine): Plan<LineDelivery> {
    return this.withHappened(serverLine(this.core, x, line));
  }

  /** The SSE stream ended. */
  streamEnd(x: ExchangeState, end: StreamEnd, http: ExchangeHttp, frameHttp: ResponseHttp): StreamEndPlan {
    const plan = streamEnd(this.core, x, end, http, frameHttp);
    return { answers: plan.answers, judged: () => this.drain(plan.judged()) };
  }

  /**
   * A session's transport ended (a legacy SSE session's stream, a stdio child): what its requests
   * still waiting get (`canAnswer`: the client can still read it; else they end `client-closed`).
   */
  sessionGone(x: ExchangeState, err: ProxyError | undefined, frameHttp: ResponseHttp, canAnswer: boolean): StreamEndPlan {
    return this.endSession(x, err, frameHttp, canAnswer, canAnswer ? 'no-response' : 'client-closed');
  }

  /**
   * A stdio child exited (`err` says how): its requests still waiting end no-response, or
   * client-closed when the client left first. Answered only where the order says (enforce).
   */
  serverExited(x: ExchangeState, err: ProxyError, frameHttp: ResponseHttp, clientGone: boolean): StreamEndPlan {
    const answer = !clientGone && ORDERING[orderOf(this.options.policy())].answersAfterExit;
    return this.endSession(x, err, frameHttp, answer, clientGone ? 'client-closed' : 'no-response');
  }

  private endSession(
    x: ExchangeState,
    err: ProxyError | undefined,
    frameHttp: ResponseHttp,
    answer: boolean,
    outcome: 'no-response' | 'client-closed',
  ): StreamEndPlan {
    const plan = sessionGone(this.core, x, err, frameHttp, answer, outcome);
    this.sessions.end(x.flow.session.key);
    return { answers: plan.answers, judged: () => this.drain(plan.judged()) };
  }

  /** The proxy could not get an answer (`sent`: the status already sent, if the response began). */
  failure(
    x: ExchangeState,
    err: ProxyError,
    clientGone: boolean,
    sent: number | undefined,
  ): { deliver: FailureDelivery; judged: readonly Judged[] } {
    const { deliver, judged } = failure(this.core, x, err, clientGone, sent);
    return { deliver, judged: this.drain(judged) };
  }

  /** The upstream answered a DELETE with `status`: a session it accepted to end is forgotten. */
  sessionEnd(x: ExchangeState, status: number): void {
    if (status >= 200 && status < 300 && x.flow.sessionId) this.sessions.end(x.flow.session.key);
  }

  /** The proxy is shutting down: every request still waiting is given up; returns their records. */
  giveUpAll(): readonly Judged[] {
    this.table.giveUpAll();
    return this.drain([]);
  }

  /** Time passes: requests and sessions idle too long are given up; returns what that ended. */
  tick(now: number): readonly Judged[] {
    this.table.sweep(now);
    this.sessions.sweep(now);
    return this.drain(unanswered(this.core, now));
  }

  private drain(judged: readonly Judged[]): readonly Judged[] {
    if (this.happened.length === 0) return judged;
    // In the order they happened: what the plan's own work evicted or dropped came first.
    const out = [...this.happened, ...judged];
    this.happened = [];
    return out;
  }

  private withHappened<D>(plan: Plan<D>): Plan<D> {
    return { deliver: plan.deliver, judged: () => this.drain(plan.judged()), settled: plan.settled };
  }
}
