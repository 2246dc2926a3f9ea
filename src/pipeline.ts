// The ordered list of stages every frame (a request body, a JSON response body, one SSE event's
// data) runs through. The order is data, here and nowhere else; the README draws it.
//
//   client -> decode -> correlate -> rules -> rewrite -> upstream -> server
//   server -> decode -> correlate -> rules -> rewrite -> client
//
// Stages are synchronous and do no I/O: the transport hands a frame in and acts on what comes
// back (completed exchanges with their findings and decisions, to log and to apply).
import { decodeJson, decodeJsonText, type Decoded } from './codec/json-body.ts';
import type { Message } from './codec/jsonrpc.ts';
import type { Completed, Correlator, Flow } from './exchange/correlate.ts';
import type { OpenRequest, Sender } from './exchange/table.ts';
import type { Policy } from './policy/types.ts';
import { eraOf } from './mcp/versions.ts';
import { decide, police, type PolicedFinding } from './rewrite/decide.ts';
import type { Rewriter } from './rewrite/types.ts';
import type { RuleEngine } from './rules/engine.ts';
import { exchangeSubject, pendingSubject, type ResponseHttp } from './rules/subjects.ts';
import type { ExchangeSubject } from './rules/types.ts';

export interface Frame {
  from: Sender;
  /** The message(s): a body's bytes, or one SSE event's data. */
  body: Uint8Array | string;
  /** Bytes on the wire (the body, or the whole SSE event block). */
  size: number;
  flow: Flow;
  /** The HTTP response this frame travels in (for a client frame: not known yet). */
  http: ResponseHttp;
  /** Mcp-Session-Id issued on this response, if any. */
  issuedSessionId: string | undefined;
  decoded?: Decoded;
  /** Exchanges this frame completed. */
  completed: Completed[];
  /** Responses in this frame that answered no open request. */
  unmatched: Message[];
  /** Requests this frame opened. */
  opened: OpenRequest[];
  /** Findings of the client's rules on the POST as a whole (a client frame only). */
  postFindings: PolicedFinding[];
}

export interface StageContext {
  correlator: Correlator;
  engine: RuleEngine;
  rewriters: ReadonlyMap<string, Rewriter>;
  /** The policy the HTTP exchange started under. */
  policy: Policy;
  now: number;
}

export interface Stage {
  name: string;
  run(frame: Frame, ctx: StageContext): void;
}

const decode: Stage = {
  name: 'codec.decode',
  run(frame) {
    // The transport may have decoded already (it needs a client body's messages to find the flow).
    frame.decoded ??= typeof frame.body === 'string' ? decodeJsonText(frame.body) : decodeJson(frame.body);
  },
};

const correlate: Stage = {
  name: 'exchange.correlate',
  run(frame, { correlator, now }) {
    if (!frame.decoded?.ok) return;
    const { messages } = frame.decoded.payload;
    const share = Math.round(frame.size / messages.length);
    for (const msg of messages) {
      if (msg.kind === 'request') frame.opened.push(correlator.request(msg, frame.from, frame.flow, share, now));
      else if (msg.kind === 'notification') correlator.notification(msg, frame.from, frame.flow);
      else {
        const done = correlator.response(msg, frame.from, frame.flow, share, now, frame.issuedSessionId);
        if (done) frame.completed.push(done);
        else frame.unmatched.push(msg);
      }
    }
  },
};

/** Judges a completed exchange: the rules of the party that answered, through the policy. */
export function judge(c: Completed, subject: ExchangeSubject, ctx: StageContext): void {
  // The answer to a client's request is the server's to get right; the client's own rules
  // judged the request before it was forwarded.
  const party = c.request.from === 'client' ? 'server' : undefined;
  const raw = ctx.engine.evaluate(subject, party);
  c.subject = subject;
  c.findings = police(raw, ctx.policy, { method: c.request.method, tool: c.request.tool }, (r) => ctx.engine.groupOf(r));
}

/** Decides what the policy does about a judged exchange. */
export function decideFor(c: Completed, subject: ExchangeSubject, ctx: StageContext): void {
  if (c.request.from !== 'client') return;
  c.decision = decide({
    findings: c.findings,
    subject,
    policy: ctx.policy,
    rewriters: ctx.rewriters,
    party: 'server',
    modern: eraOf(subject.version ?? '') === 'modern',
  });
}

const policed = (ctx: StageContext, findings: Parameters<typeof police>[0], method: string | undefined, tool: string | undefined) =>
  police(findings, ctx.policy, { method, tool }, (r) => ctx.engine.groupOf(r));

const rules: Stage = {
  name: 'rules.evaluate',
  run(frame, ctx) {
    for (const c of frame.completed) judge(c, exchangeSubject(c, frame.flow, frame.http), ctx);
    if (frame.from !== 'client' || !frame.decoded) return;
    // A client's request is judged by the client's rules before it is forwarded.
    for (const open of frame.opened) {
      open.findings = policed(ctx, ctx.engine.evaluate(pendingSubject(open, frame.flow), 'client'), open.method, open.tool);
    }
    const post = ctx.engine.evaluate(
      {
        kind: 'post',
        version: frame.flow.protocolVersion,
        requestHeaders: frame.flow.requestHeaders,
        request: frame.decoded,
        status: undefined,
        contentType: undefined,
        responseHeaders: undefined,
        response: undefined,
        responseBytes: 0,
        session: frame.flow.session,
      },
      'client',
    );
    const first = frame.decoded.ok ? frame.decoded.payload.messages[0] : undefined;
    frame.postFindings = policed(ctx, post, first && 'method' in first ? first.method : undefined, undefined);
  },
};

const rewrite: Stage = {
  name: 'rewrite.decide',
  run(frame, ctx) {
    for (const c of frame.completed) decideFor(c, exchangeSubject(c, frame.flow, frame.http), ctx);
    if (frame.from !== 'client') return;
    for (const open of frame.opened) {
      const findings = [...open.findings, ...frame.postFindings];
      open.decision = decide({
        findings,
        subject: pendingSubject(open, frame.flow),
        policy: ctx.policy,
        rewriters: ctx.rewriters,
        party: 'client',
        modern: eraOf(open.protocolVersion ?? '') === 'modern',
      });
    }
  },
};

export const PIPELINE: readonly Stage[] = [decode, correlate, rules, rewrite];

export function runPipeline(frame: Frame, ctx: StageContext): Frame {
  for (const stage of PIPELINE) stage.run(frame, ctx);
  return frame;
}
