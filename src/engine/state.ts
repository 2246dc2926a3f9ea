// What the engine keeps about one HTTP exchange while it lasts, and the helpers every step of it
// shares: running a frame through the stages, and ending the requests its response left unanswered.
import type { IncomingHttpHeaders } from 'node:http';
import type { JsonRpcId, Message } from '../codec/jsonrpc.ts';
import type { Limits } from '../config/defaults.ts';
import { type Completed, type Correlator, type Flow, outcomeOf } from '../exchange/correlate.ts';
import type { Runtime } from '../config/runtime.ts';
import type { Policy } from '../config/types.ts';
import { exchangeSubject, type ResponseHttp } from '../rules/subjects.ts';
import type { BodyProblem, PostSubject } from '../rules/types.ts';
import type { PolicedFinding } from '../verdicts.ts';
import { judgeExchange } from './judge.ts';
import type { MalformedWaits } from './malformed.ts';
import type { Order } from './order.ts';
import type { ExchangeHttp, FindingContext, Judged, JudgedExchange, Plan } from './plans.ts';
import { runFrame, type Frame, type FrameInput, type StageContext } from './stages.ts';

/** What the engine needs from the proxy around it. */
export interface EngineCore {
  correlator: Correlator;
  limits: Limits;
  /** The rule engine and rewriters of a policy (its extra patterns included). */
  runtime: (policy: Policy) => Runtime;
  /** Monotonic clock in ms. */
  now: () => number;
  /** Client messages that are not JSON, or no request, waiting for their answer on a session's stream. */
  malformed: MalformedWaits;
}

/** The POST as the server's rules judged it: its subject, and their findings through the policy. */
export interface JudgedPost {
  subject: PostSubject;
  findings: PolicedFinding[];
  /** Rules a decision on the POST applied (a body that did not parse, answered -32700). */
  applied?: ReadonlySet<string>;
}

/** One HTTP exchange on the endpoint, as the engine follows it. */
export interface ExchangeState {
  readonly kind: 'post' | 'get' | 'delete';
  readonly flow: Flow;
  /** The policy this exchange started under; a reload does not change it. */
  readonly policy: Policy;
  /** Audit delivers first, enforce judges first (order.ts). */
  readonly order: Order;
  /** Ids of the requests this POST carried (the ones the client is waiting on), and their raw JSON text (it keys an integer beyond 2^53). */
  readonly requestIds: readonly JsonRpcId[];
  readonly requestTokens: ReadonlyArray<string | undefined>;
  readonly batch: boolean;
  /** The client's POST through the stages (a POST only). */
  inbound?: Frame;
  /** The upstream's status and headers, once they came. */
  upstream?: { status: number; headers: IncomingHttpHeaders };
  /** What the server sent that answered nothing (the first such body or event). */
  bodyProblem?: BodyProblem;
  /** Responses the server sent on this exchange that matched no open request (bounded). */
  unmatched: Message[];
  /** The POST as the server's rules judged it, when a decision on it had to come before the body went out. */
  judgedPost?: JudgedPost;
  /** Unanswered requests decided before an unread body went out (enforce), logged once it has. */
  decidedUnread?: JudgedExchange[];
}

const MAX_UNMATCHED = 8;

/** The stage context for a frame of `x`, now. */
export function stagesFor(core: EngineCore, x: ExchangeState): StageContext {
  // Fields named one by one (no spread): one object shape for every frame.
  const { engine, rewriters } = core.runtime(x.policy);
  return { correlator: core.correlator, engine, rewriters, policy: x.policy, now: core.now() };
}

/** Runs a frame of `x` through the stages; remembers what answered nothing; reports an undecodable one. */
export function pipe(core: EngineCore, x: ExchangeState, input: Omit<FrameInput, 'flow'>, judged: Judged[]): Frame {
  const { from, body, size, http, issuedSessionId, decoded } = input;
  const frame = runFrame({ from, body, size, flow: x.flow, http, issuedSessionId, decoded }, stagesFor(core, x));
  if (frame.from === 'server') {
    x.bodyProblem ??= frame.problem;
    for (const m of frame.unmatched) if (x.unmatched.length < MAX_UNMATCHED) x.unmatched.push(m);
  }
  if (!frame.decoded.ok) {
    const { problem, detail } = frame.decoded;
    judged.push({
      kind: 'undecodable',
      from: frame.from,
      problem,
      detail,
      session: x.flow.sessionId ?? null,
      transport: frame.http.transport,
      bytes: frame.size,
    });
  }
  return frame;
}

/**
 * Requests of this exchange that got no response on it: taken out of the table, judged and, when
 * `decidable`, decided. An unaudited answer is decided only while it has not gone out (enforce may
 * block what it cannot read); once relayed there is nothing left to rewrite or block.
 */
export function abandon(
  core: EngineCore,
  x: ExchangeState,
  outcome: string,
  http: ResponseHttp,
  decidable = outcome !== 'unaudited',
  idless?: IdlessAnswer,
): JudgedExchange[] {
  const ctx = stagesFor(core, x);
  const out: JudgedExchange[] = [];
  for (const [i, id] of x.requestIds.entries()) {
    const taken = core.correlator.abandon(x.flow.scope, 'client', id, ctx.now, outcome, x.flow.exchange, x.requestTokens[i]);
    if (!taken) continue;
    const c = idless && x.requestIds.length === 1 ? answeredWithoutId(taken, idless) : taken;
    out.push(judgeExchange(c, exchangeSubject(c, x.flow, http, x.bodyProblem, x.unmatched), ctx, decidable));
  }
  return out;
}

/** An error without an id (or with id null) that came as the whole answer to a POST's one request, and the bytes it came in. */
export interface IdlessAnswer {
  error: Message;
  bytes: number;
}

/**
 * The record of the one request whose answer is an error without an id: its outcome is that
 * error's code and its size the bytes that came (the rules still judge the id; a record saying
 * `invalid-response` with 0 bytes would read as a server that sent nothing).
 */
export const answeredWithoutId = (c: Completed, idless: IdlessAnswer): Completed => ({
  ...c,
  outcome: outcomeOf(idless.error),
  responseBytes: idless.bytes,
});

/** Where the POST's own findings belong: its first message. */
export function postWhere(x: ExchangeState): FindingContext {
  const decoded = x.inbound?.decoded;
  const first = decoded?.ok ? decoded.payload.messages[0] : undefined;
  return {
    method: first && (first.kind === 'request' || first.kind === 'notification') ? first.method : undefined,
    id: x.requestIds[0],
    tool: x.inbound?.opened[0]?.tool,
    session: x.flow.sessionId,
    protocolVersion: x.flow.protocolVersion,
  };
}

/** The judged exchanges as records for the sinks, with how their response travelled. */
export const exchanges = (list: readonly JudgedExchange[], http: ExchangeHttp): Judged[] =>
  list.map((judged) => ({ kind: 'exchange', judged, http }));

/**
 * A plan in `x`'s order: delivering first, `asIs` goes out and `run` judges when `judged` is
 * called (after the delivery); judging first, `run` decides what goes out.
 */
export function planned<D>(deliverFirst: boolean, asIs: D, run: () => { deliver: D; judged: Judged[] }): Plan<D> {
  if (deliverFirst) return { deliver: asIs, judged: () => run().judged };
  const done = run();
  return { deliver: done.deliver, judged: () => done.judged };
}
