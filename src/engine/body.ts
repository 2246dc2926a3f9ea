// A server's answer as one body (JSON, or anything not a stream): judged whole, rewritten or
// replaced where the policy says so; and the proxy's own failure to get one.
import type { ProxyError } from '../errors.ts';
import { nullIdError, repeatsOfChanged, rewriteBody, type BodyChange } from '../rewrite/apply.ts';
import { encodeBody } from '../rewrite/encode.ts';
import type { Message } from '../codec/jsonrpc.ts';
import type { ResponseHttp } from '../rules/subjects.ts';
import { ORDERING } from './order.ts';
import type { BodyDelivery, FailureDelivery, Judged, JudgedExchange, Plan } from './plans.ts';
import { postDecision, postFindings } from './post.ts';
import type { Frame } from './stages.ts';
import { abandon, exchanges, pipe, planned, type EngineCore, type ExchangeState } from './state.ts';

/** What a decided exchange puts in place of the server's message, if anything. */
export const changeOf = (j: JudgedExchange, target: Message | undefined): BodyChange | undefined =>
  j.decision.kind !== 'pass' ? { target, message: j.decision.message } : undefined;

/** What the decided exchanges of `list` put in place of the messages `targetOf` names (undefined: added). */
export const changesOf = (
  list: readonly JudgedExchange[],
  targetOf: (j: JudgedExchange) => Message | undefined = () => undefined,
): BodyChange[] => list.map((j) => changeOf(j, targetOf(j))).filter((c) => c !== undefined);

const statusOf = (j: JudgedExchange): number | undefined => (j.decision.kind !== 'pass' ? j.decision.status : undefined);

/** A body the upstream sent, as the transport collected it: its bytes (decoded from any Content-Encoding), or why they do not decode. */
export type CollectedBody = { kind: 'complete'; bytes: Buffer } | { kind: 'undecodable'; detail: string };

/** Judges a whole body and decides what goes out (`http`: the status and type the server sent). */
function judgeBody(
  core: EngineCore,
  x: ExchangeState,
  body: CollectedBody,
  http: ResponseHttp,
  wireBytes: number,
  issuedSessionId: string | undefined,
): { deliver: BodyDelivery; judged: Judged[]; frame: Frame | undefined } {
  const judged: Judged[] = [];
  let frame: Frame | undefined;
  if (body.kind === 'undecodable') {
    // Not in the coding it names: the client cannot read it either. Judged as the unreadable body it is.
    x.bodyProblem ??= { problem: 'not-utf8', excerpt: body.detail };
  } else if (body.bytes.length > 0) {
    frame = pipe(core, x, { from: 'server', body: body.bytes, size: wireBytes, http, issuedSessionId }, judged);
  } else if (x.requestIds.length > 0) {
    x.bodyProblem ??= { problem: 'empty', excerpt: '' };
  }
  const empty = body.kind === 'complete' && body.bytes.length === 0;
  const completed = frame?.completed ?? [];
  const target = nullIdError(frame?.unmatched ?? []);
  const idless = target && !x.bodyProblem ? { error: target, bytes: wireBytes } : undefined;
  const abandoned = abandon(core, x, empty ? 'no-response' : 'invalid-response', http, undefined, idless);
  const changes = [...changesOf(completed, (j) => j.exchange.response), ...changesOf(abandoned, () => target)];
  // A body that answered nothing usable is replaced whole; a usable one keeps its other messages.
  const rewritten = rewriteBody(x.bodyProblem ? undefined : frame?.decoded, changes, repeatsOfChanged(changes, frame?.unmatched ?? []));
  const decided = [...completed, ...abandoned].find((j) => statusOf(j) !== undefined);
  const usable = frame?.decoded.ok === true && !x.bodyProblem;
  const upstreamStatus = http.status!;
  const status = rewritten ? ((decided && statusOf(decided)) ?? (usable ? upstreamStatus : 200)) : upstreamStatus;
  // A client body that did not parse opened no request: its answer is the POST's own (post.ts).
  const post =
    !rewritten && !ORDERING[x.order].writeBeforeJudging && x.inbound?.decoded.ok === false
      ? postDecision(core, x, frame, judged)
      : undefined;
  const deliver: BodyDelivery = post
    ? { kind: 'reply', status: post.status ?? 400, body: encodeBody([post.message], false) }
    : rewritten
      ? { kind: 'reply', status, body: rewritten }
      : { kind: 'as-is' };
  judged.push(...exchanges(completed, { status, transport: 'json' }), ...exchanges(abandoned, { status, transport: 'json' }));
  return { deliver, judged, frame };
}

/** The plan for a body read whole. Under audit the client gets it as it came whatever the rules find: it goes out first. */
export function serverBody(
  core: EngineCore,
  x: ExchangeState,
  body: CollectedBody,
  http: ResponseHttp,
  wireBytes: number,
  issuedSessionId: string | undefined,
): Plan<BodyDelivery> {
  let frame: Frame | undefined;
  const first = ORDERING[x.order].writeBeforeJudging;
  // Judged when the transport gets to it (after the poll phase, under audit): as of now, the time the body came.
  const at = core.now();
  const then: EngineCore = first
    ? { correlator: core.correlator, limits: core.limits, runtime: core.runtime, now: () => at, malformed: core.malformed }
    : core;
  const { value: plan, releases } = core.correlator.collectReleases(() =>
    planned(first, { kind: 'as-is' }, () => {
      const judged = judgeBody(then, x, body, http, wireBytes, issuedSessionId);
      frame = judged.frame;
      return judged;
    }),
  );
  // The POST as a whole is judged once its answer went out (unless a decision on it had to come first).
  return {
    deliver: plan.deliver,
    judged: () => [...plan.judged(), ...postFindings(then, x, frame)],
    settled: releases.length > 0 ? Promise.all(releases).then(() => {}) : undefined,
  };
}

/**
 * A body too large to read, or in a coding the proxy cannot undo: relayed as it came, unless the
 * policy decides on what it cannot read before it goes out (enforce, unaudited-response at block:
 * the client gets an error with its id).
 */
export function unreadBody(core: EngineCore, x: ExchangeState, http: ResponseHttp): Plan<BodyDelivery> {
  if (!ORDERING[x.order].decidesUnread) return { deliver: { kind: 'as-is' }, judged: () => [] };
  const early = abandon(core, x, 'unaudited', http, true);
  const blocked = early.find((j) => j.decision.kind === 'reject');
  if (!blocked) {
    x.decidedUnread = early;
    return { deliver: { kind: 'as-is' }, judged: () => [] };
  }
  const status = statusOf(blocked) ?? 200;
  const body = rewriteBody(undefined, changesOf(early))!;
  return {
    deliver: { kind: 'reply', status, body },
    judged: () => [...exchanges(early, { status, transport: 'json', unread: http.unread }), ...postFindings(core, x, undefined)],
  };
}

/** An unread body went out (`bytes` of it): its requests were answered with what the proxy could not read. */
export function unreadDelivered(core: EngineCore, x: ExchangeState, http: ResponseHttp, bytes: number): Judged[] {
  const unaudited = (x.decidedUnread ?? abandon(core, x, 'unaudited', http)).map((j) => ({
    ...j,
    exchange: { ...j.exchange, responseBytes: bytes },
  }));
  return [...exchanges(unaudited, { status: http.status, transport: 'json', unread: http.unread }), ...postFindings(core, x, undefined)];
}

/** The proxy could not get an answer: the client gets a JSON-RPC error (or the policy's rewrite). `sent`: the status already sent, if the response began. */
export function failure(
  core: EngineCore,
  x: ExchangeState,
  err: ProxyError,
  clientGone: boolean,
  sent: number | undefined,
): { deliver: FailureDelivery; judged: Judged[] } {
  if (clientGone) {
    const none = { status: undefined, transport: 'none' } as const;
    return { deliver: { kind: 'none' }, judged: exchanges(abandon(core, x, 'client-closed', { ...none, contentType: undefined }), none) };
  }
  const abandoned = abandon(core, x, 'no-response', {
    status: err.status,
    contentType: undefined,
    transport: 'none',
    proxyError: err.code,
  });
  const changes = changesOf(abandoned);
  let status = sent ?? err.status;
  let deliver: FailureDelivery = { kind: 'proxy-error', error: err, ids: x.requestIds, batch: x.batch };
  if (sent === undefined && changes.length > 0) {
    status = statusOf(abandoned[0]!) ?? 200;
    deliver = { kind: 'reply', status, body: rewriteBody(undefined, changes)! };
  }
  return { deliver, judged: exchanges(abandoned, { status, transport: 'none', proxyError: err.code }) };
}
