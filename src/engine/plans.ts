// What the engine returns: plans as values. A transport carries a plan out (writes what it says,
// in the order it says) and hands `judged` to the sinks; it decides nothing itself.
import type { Completed } from '../exchange/correlate.ts';
import type { OpenRequest, Unanswered } from '../exchange/table.ts';
import type { JsonRpcId } from '../codec/jsonrpc.ts';
import type { ProxyError } from '../errors.ts';
import type { ExchangeSubject } from '../rules/types.ts';
import type { Decision, PolicedFinding } from '../verdicts.ts';

/** A completed exchange with what the rules found and what the policy decided about it. */
export interface JudgedExchange {
  exchange: Completed;
  /** What the rules judged: the exchange as the proxy saw it before any rewrite (a capture keeps it); undefined when nothing judged it (it expired). */
  subject: ExchangeSubject | undefined;
  findings: PolicedFinding[];
  decision: Decision;
}

/** How an exchange's response travelled, for its log record. */
export interface ExchangeHttp {
  /** HTTP status the client received. */
  status: number | undefined;
  /** How the response travelled: a JSON body, the POST's SSE stream, a GET stream (a legacy SSE session's too), or a line on a stdio child's stdout. */
  transport: ExchangeSubject['transport'];
  /** The proxy's own failure code, when the proxy answered instead of the server. */
  proxyError?: string;
  /** Why the proxy stopped waiting for a response: table full, idle too long, its id reused by a new request, a resumable stream not resumed in time, or shutdown. */
  expired?: Exclude<Unanswered, 'client-closed'>;
  /** Why an answer went out unread (outcome `unaudited`): past the audit limit, or in a coding the proxy cannot undo. */
  unread?: 'too-large' | 'unknown-coding';
}

/** Where a finding was seen, for its log record. */
export interface FindingContext {
  method: string | undefined;
  id: unknown;
  tool: string | undefined;
  session: string | undefined;
  protocolVersion: string | undefined;
}

/** Where an open request's findings belong. */
export const whereOf = (request: OpenRequest): FindingContext => ({
  method: request.method,
  id: request.id,
  tool: request.tool,
  session: request.sessionId,
  protocolVersion: request.protocolVersion,
});

/** One thing the engine judged, for the sinks (log, metrics, capture). `counted`: the metrics count it now (else with its exchange). */
/** What a findings record judges (the `on` field of its violation records). */
export type FindingsOn = 'request' | 'post' | 'line';

export type Judged =
  /** `detached`: a request the proxy gave up on (evicted, expired), recorded by whichever plan or tick comes next, not by its own exchange. */
  | { kind: 'exchange'; judged: JudgedExchange; http: ExchangeHttp; detached?: true }
  /** `on`: what they judge: a request as it came (its exchange's record comes later), a POST as a whole, a stdio line. */
  | {
      kind: 'findings';
      findings: readonly PolicedFinding[];
      where: FindingContext;
      applied: ReadonlySet<string>;
      counted: boolean;
      on: FindingsOn;
    }
  | { kind: 'decision'; decision: Decision; where: FindingContext; counted: boolean }
  /** 2026-07-28 headers the policy re-derived from the body before forwarding (header-mismatch). */
  | { kind: 'headers-rewritten'; where: FindingContext; before: Record<string, string | undefined>; after: Record<string, string> }
  /** A session's tool catalogue was dropped: the catalogues held in total reached their limit. */
  | { kind: 'catalogue-dropped'; tools: number; bytes: number; sessions: number; limit: number }
  /** A message that did not decode. */
  | {
      kind: 'undecodable';
      from: 'client' | 'server';
      problem: string;
      detail: string | undefined;
      session: string | null;
      transport: string;
      bytes: number;
    };

/** A body the engine built (a rewrite, a block, its own answer): sent as JSON, unencoded. */
export interface Reply {
  kind: 'reply';
  status: number;
  body: Buffer;
}

/** What to do with a client's POST body. */
export type ClientDelivery =
  /** Forward it; `headers`: values that replace the client's (re-derived from the body). */
  { kind: 'forward'; headers: Record<string, string> | undefined } | Reply;

/** What to do with a server's body: send it as it came, or send the engine's. */
export type BodyDelivery = { kind: 'as-is' } | Reply;

/** A plan: what to deliver, and what was judged. Under audit `judged` runs the judging, after the delivery; call it once. */
export interface Plan<D> {
  deliver: D;
  judged: () => readonly Judged[];
  /** Deliver once this settles: the claims on request ids this answer released (a fleet, judging first), bounded by --state-timeout. */
  settled?: Promise<void>;
}

/** An answer the proxy writes on a stream for a request still waiting: a message the policy built, or the proxy's own error with the request's id. */
export type StreamAnswer = { message: unknown } | { error: ProxyError; id: JsonRpcId };

/** How to relay an SSE stream. */
export interface StreamPlan {
  /** Each event is written before it is read (nothing can be rewritten). */
  readAfterWrite: boolean;
  /** A compressed stream goes to the client decoded, without its Content-Encoding (an event can only be replaced in the clear); else as it came, read from a decoded copy. */
  decode: boolean;
  /** An event over the size limit is not relayed at all (the policy blocks what it cannot read). */
  withholdOversize: boolean;
}

/** What ends a stream: the answers to write for requests still waiting, and what was judged (call it once the stream has ended). */
export interface StreamEndPlan {
  answers: StreamAnswer[];
  judged: () => readonly Judged[];
}

/** What the client gets when the proxy could not get an answer. */
export type FailureDelivery =
  | Reply
  | { kind: 'proxy-error'; error: ProxyError; ids: readonly JsonRpcId[]; batch: boolean }
  | { kind: 'none' };
