// A client's POST body: judged by the client's rules, then forwarded (its 2026-07-28 headers
// re-derived from the body where the policy says so), or answered by the policy (a block).
import type { Decoded } from '../codec/json-body.ts';
import type { OpenRequest } from '../exchange/table.ts';
import { modernRequestHeaders } from '../mcp/headers.ts';
import { blockReply } from '../rewrite/decide.ts';
import { encodeBody, withIdToken } from '../rewrite/encode.ts';
import { PASS, type Decision } from '../verdicts.ts';
import { awaitAnswer } from './malformed-answers.ts';
import { readableInvalidId } from './malformed.ts';
import { ORDERING } from './order.ts';
import { whereOf, type ClientDelivery, type Judged, type JudgedExchange, type Plan } from './plans.ts';
import { exchanges, pipe, planned, postWhere, type EngineCore, type ExchangeState } from './state.ts';

const appliedIn = (open: OpenRequest): Set<string> => {
  const d = open.verdict.decision;
  return new Set(d.kind !== 'pass' ? d.rules : []);
};

const headerText = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v);

/** 2026-07-28 headers re-derived from the body, for requests whose headers disagree with it (header-mismatch, rewrite). */
function rederivedHeaders(x: ExchangeState, opened: readonly OpenRequest[]): Record<string, string> | undefined {
  if (x.policy.mode !== 'enforce') return undefined;
  const open = opened.find((o) => o.verdict.findings.some((f) => f.rule === 'header-mismatch' && f.action === 'rewrite'));
  if (!open) return undefined;
  const schema = open.tool ? x.flow.session.tools.get(open.tool)?.inputSchema : undefined;
  return modernRequestHeaders(open.method, open.params, schema);
}

/** The errors a session remembers the client gave (propagated-client-error reads them). */
const MAX_CLIENT_ERRORS = 8;

/** The client's errors in answer to the server's requests, remembered by the session: the server may pass one back as its own answer. */
function rememberClientErrors(x: ExchangeState, completed: readonly JudgedExchange[], now: number): void {
  const errors = completed.flatMap(({ exchange: c }) =>
    c.response?.kind === 'error' ? [{ method: c.request.method, code: c.response.code, message: c.response.message, at: now }] : [],
  );
  if (errors.length > 0) x.flow.session.clientErrors = [...(x.flow.session.clientErrors ?? []), ...errors].slice(-MAX_CLIENT_ERRORS);
}

/** Runs the client's body through the stages and decides what becomes of it. */
function judgeBody(
  core: EngineCore,
  x: ExchangeState,
  body: Buffer,
  size: number,
  decoded: Decoded,
): { deliver: ClientDelivery; judged: Judged[] } {
  const judged: Judged[] = [];
  const inbound = pipe(
    core,
    x,
    {
      from: 'client',
      body,
      size,
      http: { status: undefined, contentType: undefined, transport: x.flow.wire === 'stdio' ? 'stdio' : 'none' },
      issuedSessionId: undefined,
      decoded,
    },
    judged,
  );
  x.inbound = inbound;
  rememberClientErrors(x, inbound.completed, core.now());
  const opened = inbound.opened.filter((o) => o.from === 'client');
  const derived = rederivedHeaders(x, opened);
  const where = postWhere(x);
  const postApplied = new Set(opened.flatMap((o) => [...appliedIn(o)]));
  if (derived) postApplied.add('header-mismatch');
  // A body that opened no request (notifications, responses, or nothing readable) has no request to
  // block, but the policy may still stop it (request-envelope: a line that would kill a stdio
  // server): the client gets the error JSON-RPC 2.0 gives it, -32700 for a body that is not JSON,
  // else -32600, with the id of an invalid request when it could be read, else null; on 400.
  const postBlock = x.policy.mode === 'enforce' && opened.length === 0 ? inbound.postFindings.find((f) => f.action === 'block') : undefined;
  if (postBlock) postApplied.add(postBlock.rule);
  judged.push({ kind: 'findings', findings: inbound.postFindings, where, applied: postApplied, counted: true, on: 'post' });
  for (const open of opened) {
    const applied = appliedIn(open);
    if (derived) applied.add('header-mismatch');
    // Counted with the exchange, when it completes.
    judged.push({ kind: 'findings', findings: open.verdict.findings, where: whereOf(open), applied, counted: false, on: 'request' });
  }

  const blocking = opened.find((o) => o.verdict.decision.kind === 'reject');
  if (blocking && blocking.verdict.decision.kind === 'reject') {
    const { message, status } = blocking.verdict.decision;
    judged.push({ kind: 'decision', decision: blocking.verdict.decision, where: whereOf(blocking), counted: false });
    // Each with its request's id as the client wrote it (1.0, 1e2, an integer beyond 2^53).
    const replies = opened.map((o) => withIdToken({ ...message, id: o.id }, o.idToken));
    for (const o of opened) {
      const c = core.correlator.abandon(x.flow.scope, 'client', o.id, core.now(), 'blocked', x.flow.exchange, o.idToken);
      if (c)
        judged.push({
          kind: 'exchange',
          judged: { exchange: c, subject: undefined, findings: [], decision: PASS },
          http: { status, transport: 'none' },
        });
    }
    return { deliver: { kind: 'reply', status, body: encodeBody(replies, x.batch) }, judged };
  }

  if (postBlock) {
    const decision: Decision = {
      kind: 'reject',
      message: blockReply(postBlock, 'client', readableInvalidId(decoded), false, !decoded.ok).message,
      status: 400,
      rules: [postBlock.rule],
    };
    judged.push({ kind: 'decision', decision, where, counted: true });
    return { deliver: { kind: 'reply', status: 400, body: Buffer.from(JSON.stringify(decision.message), 'utf8') }, judged };
  }

  if (x.flow.wire === 'stdio') {
    // A stdio line's answer comes on the child's stdout (a legacy SSE POST's once it is accepted).
    awaitAnswer(core, x);
    // The client's answers to the child's requests are complete once written (HTTP: once the server accepted them).
    judged.push(...exchanges(inbound.completed, { status: undefined, transport: 'stdio' }));
  }
  if (derived) {
    const before = Object.fromEntries(Object.keys(derived).map((k) => [k, headerText(x.flow.requestHeaders[k])]));
    judged.push({ kind: 'headers-rewritten', where, before, after: derived });
  }
  return { deliver: { kind: 'forward', headers: derived }, judged };
}

/** The plan for a client's POST body (`body`: as the server will read it, decoded from any Content-Encoding; `size`: bytes on the wire). */
export function clientBody(core: EngineCore, x: ExchangeState, body: Buffer, size: number, decoded: Decoded): Plan<ClientDelivery> {
  // Under audit the client's rules can neither block nor change the request: it goes upstream
  // first and is judged while the server works (its response cannot be read before this
  // synchronous judging has registered the request).
  return planned(ORDERING[x.order].forwardBeforeJudging, { kind: 'forward', headers: undefined }, () =>
    judgeBody(core, x, body, size, decoded),
  );
}

/** Answers the client gave to server requests are complete once the server accepted them. */
export const upstreamAccepted = (x: ExchangeState, status: number): Judged[] =>
  exchanges(x.inbound?.completed ?? [], { status, transport: 'none' });
