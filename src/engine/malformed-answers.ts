// The engine's side of malformed.ts: a client message that is not JSON, or no request, forwarded
// on a transport that answers on the session's stream, waits there for its answer; the server's
// first error with id null (or the id that could be read) is judged as that message's answer by
// the POST-level rules, and time passing judges the ones left unanswered.
import type { Message } from '../codec/jsonrpc.ts';
import type { PostSubject } from '../rules/types.ts';
import { policed } from './judge.ts';
import { isMalformed, readableInvalidId, type MalformedWait } from './malformed.ts';
import type { Judged } from './plans.ts';
import type { Frame } from './stages.ts';
import { postWhere, type EngineCore, type ExchangeState } from './state.ts';

/** A forwarded client message that opened no request and is owed an answer on the session's stream: from now on it waits for one. */
export function awaitAnswer(core: EngineCore, x: ExchangeState): void {
  const inbound = x.inbound;
  if (x.kind !== 'post' || !inbound || inbound.opened.length > 0 || !isMalformed(inbound.decoded)) return;
  const subject: PostSubject = {
    kind: 'post',
    wire: x.flow.wire,
    version: x.flow.protocolVersion,
    requestHeaders: x.flow.requestHeaders,
    request: inbound.decoded,
    status: undefined,
    contentType: undefined,
    responseHeaders: undefined,
    response: undefined,
    responseBytes: 0,
    session: x.flow.session,
  };
  const wait = { subject, id: readableInvalidId(inbound.decoded), at: core.now(), policy: x.policy, where: postWhere(x) };
  core.malformed.add(x.flow.session.key, wait);
}

/** The server's rules on a waiting message's subject, as a findings record (none when nothing was found). */
function judgedWait(core: EngineCore, wait: MalformedWait, subject: PostSubject): Judged[] {
  const { engine, rewriters } = core.runtime(wait.policy);
  const ctx = { engine, rewriters, policy: wait.policy };
  const findings = policed(ctx, engine.evaluate(subject, 'server'), wait.where.method, wait.where.tool);
  return findings.length === 0 ? [] : [{ kind: 'findings', findings, where: wait.where, applied: new Set(), counted: true, on: 'post' }];
}

/** Messages of a server frame on `x`'s session that answer a waiting message, judged as its answer. */
export function malformedAnswered(core: EngineCore, x: ExchangeState, frame: Frame): Judged[] {
  const out: Judged[] = [];
  for (const m of frame.unmatched) {
    const wait = core.malformed.take(x.flow.session.key, m);
    if (wait) out.push(...judgedWait(core, wait, { ...wait.subject, response: answerOf(m), responseBytes: frame.size }));
  }
  return out;
}

const answerOf = (m: Message): PostSubject['response'] => ({ ok: true, payload: { batch: false, messages: [m] } });

/** The session's stream ended (a stdio child exited, a legacy stream closed): what waited there is judged unanswered. */
export function unansweredInSession(core: EngineCore, x: ExchangeState): Judged[] {
  const now = core.now();
  return core.malformed
    .end(x.flow.session.key)
    .flatMap((wait) => judgedWait(core, wait, { ...wait.subject, unansweredAfterMs: now - wait.at }));
}

/** The waiting messages no answer came for within the window, by `now`: judged unanswered. */
export function unanswered(core: EngineCore, now: number): Judged[] {
  const windowMs = core.limits.malformedAnswerMs;
  return core.malformed.expired(now, windowMs).flatMap((wait) => judgedWait(core, wait, { ...wait.subject, unansweredAfterMs: windowMs }));
}
