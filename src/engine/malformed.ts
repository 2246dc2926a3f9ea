// A client message that is not JSON, or JSON that is no request, sent where its answer cannot come
// back on the same HTTP response (a stdio line, a legacy HTTP+SSE POST): JSON-RPC 2.0 §5 still
// asks for one (-32700 Parse error, -32600 Invalid Request), on the session's stream. No single
// exchange shows it, so the engine keeps each such message per session (bounded), takes the first
// error the server sends there with id null, or with the id it could read, as its answer and judges
// that as the POST-level rules judge an HTTP POST's reply (parse-error-code, parse-error-id,
// invalid-request-code); one left without an answer past the window is judged unanswered
// (malformed-unanswered).
import type { Decoded } from '../codec/json-body.ts';
import type { JsonRpcId, Message } from '../codec/jsonrpc.ts';
import type { Policy } from '../config/types.ts';
import type { PostSubject } from '../rules/types.ts';
import type { FindingContext } from './plans.ts';

/** A malformed message waiting for its answer: the POST subject it becomes, without a response yet. */
export interface MalformedWait {
  subject: PostSubject;
  /** The id of an invalid request, when it could be read: its answer may carry it. */
  id: JsonRpcId | undefined;
  at: number;
  policy: Policy;
  where: FindingContext;
}

/** Sessions followed at once, and messages waiting per session: past either, the oldest is forgotten (never judged). */
const MAX_SESSIONS = 1024;
const MAX_PER_SESSION = 8;

/** The id an answer to `request` may carry: an invalid request's, when readable; undefined for none (and for a body that did not parse). */
export function readableInvalidId(request: Decoded): JsonRpcId | undefined {
  if (!request.ok || request.payload.batch) return undefined;
  const [m] = request.payload.messages;
  const meantAsRequest = m.kind === 'invalid' && typeof m.value === 'object' && m.value !== null && 'method' in m.value;
  return meantAsRequest && m.id !== null ? m.id : undefined;
}

/** Whether a client body is one whose answer JSON-RPC asks for though it opened no request: not JSON, or one invalid message meant as a request. */
export function isMalformed(request: Decoded): boolean {
  if (!request.ok) return request.problem !== 'empty';
  if (request.payload.batch) return false;
  const [m] = request.payload.messages;
  return m.kind === 'invalid' && (typeof m.value !== 'object' || m.value === null || Array.isArray(m.value) || 'method' in m.value);
}

export class MalformedWaits {
  private readonly bySession = new Map<string, MalformedWait[]>();

  add(session: string, wait: MalformedWait): void {
    const waits = this.bySession.get(session) ?? [];
    waits.push(wait);
    if (waits.length > MAX_PER_SESSION) waits.shift();
    this.bySession.delete(session);
    this.bySession.set(session, waits);
    if (this.bySession.size > MAX_SESSIONS) this.bySession.delete(this.bySession.keys().next().value!);
  }

  /** The oldest wait of `session` that `answer` (a server message that matched no request) answers: an error with id null or the wait's id. */
  take(session: string, answer: Message): MalformedWait | undefined {
    const waits = this.bySession.get(session);
    if (!waits || answer.kind !== 'error') return undefined;
    const i = waits.findIndex((w) => answer.id === null || answer.id === undefined || answer.id === w.id);
    if (i < 0) return undefined;
    const [wait] = waits.splice(i, 1);
    if (waits.length === 0) this.bySession.delete(session);
    return wait;
  }

  /** Every wait of `session`, taken out (its stream ended). */
  end(session: string): MalformedWait[] {
    const waits = this.bySession.get(session) ?? [];
    this.bySession.delete(session);
    return waits;
  }

  /** The waits older than `windowMs` at `now`, taken out. */
  expired(now: number, windowMs: number): MalformedWait[] {
    const out: MalformedWait[] = [];
    for (const [session, waits] of this.bySession) {
      while (waits.length > 0 && now - waits[0]!.at >= windowMs) out.push(waits.shift()!);
      if (waits.length === 0) this.bySession.delete(session);
    }
    return out;
  }
}
