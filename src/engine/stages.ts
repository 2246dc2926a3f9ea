// The ordered list of stages every frame (a request body, a JSON response body, one SSE event's
// data) runs through. The order is data, here and nowhere else; the README draws it per mode
// (order.ts says where delivery falls in it).
//
// Stages are synchronous and do no I/O. They work on a scratch record private to runFrame; what
// comes back is a value: the exchanges the frame completed, judged and decided; the requests it
// opened, each with its verdict; the responses that answered nothing.
import { decodeJson, decodeJsonText, type Decoded } from '../codec/json-body.ts';
import { asRecord } from '../codec/json-value.ts';
import type { Message } from '../codec/jsonrpc.ts';
import type { Completed, Correlator, Flow } from '../exchange/correlate.ts';
import type { OpenRequest, Sender } from '../exchange/table.ts';
import type { Policy } from '../config/types.ts';
import { eraOf } from '../mcp/versions.ts';
import { decide, type PolicedFinding } from '../rewrite/decide.ts';
import type { Rewriter } from '../rewrite/types.ts';
import type { RuleEngine } from '../rules/engine.ts';
import { bodyProblemOf, exchangeSubject, pendingSubject, type ResponseHttp } from '../rules/subjects.ts';
import type { BodyProblem, ExchangeSubject, PostSubject } from '../rules/types.ts';
import { knownValues } from '../rules/known-values.ts';
import { LEAK_PATTERNS } from '../rules/leak-patterns.ts';
import { NO_VERDICT } from '../verdicts.ts';
import { decideFor, judge, policed } from './judge.ts';
import type { JudgedExchange } from './plans.ts';

export interface FrameInput {
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
  /** Already decoded by the transport or the engine (a client body's messages find its flow). */
  decoded?: Decoded;
}

/** A frame once through the stages. */
export interface Frame extends FrameInput {
  decoded: Decoded;
  /** Why a server frame answered nothing (it did not decode, or holds no JSON-RPC message); undefined for a client frame. */
  problem: BodyProblem | undefined;
  /** Exchanges this frame completed, judged and decided. */
  completed: JudgedExchange[];
  /** Responses in this frame that answered no open request. */
  unmatched: Message[];
  /** Requests this frame opened, each with its verdict. */
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

/** The frame as the stages build it, with their scratch fields: each stage reads what the ones before it left. */
interface Work extends Omit<Frame, 'decoded'> {
  decoded: Decoded | undefined;
  /** correlate: answers matched to their requests, requests drafted (not yet open). */
  matched: Completed[];
  drafts: OpenRequest[];
  /** rules: the subject and findings of each matched exchange, and of each draft. */
  subjects: ExchangeSubject[];
  found: PolicedFinding[][];
  draftSubjects: ExchangeSubject[];
  draftFound: PolicedFinding[][];
}

export interface Stage {
  name: string;
  run(work: Work, ctx: StageContext): void;
}

const decodeStage: Stage = {
  name: 'decode',
  run(work) {
    const { body } = work;
    work.decoded ??= typeof body === 'string' ? decodeJsonText(body) : decodeJson(body);
    // What a server's frame is, once: the body, the broken-answer test and the log all read it.
    if (work.from === 'server') work.problem = bodyProblemOf(work.decoded, body);
  },
};

const correlateStage: Stage = {
  name: 'correlate',
  run(work, { correlator, now }) {
    if (!work.decoded?.ok) return;
    const { from, flow, size, issuedSessionId } = work;
    const { messages } = work.decoded.payload;
    const share = Math.round(size / messages.length);
    // Only a batch can reuse an id within the frame.
    const drafted = messages.length > 1 ? new Set<string>() : undefined;
    for (const msg of messages) {
      if (msg.kind === 'request') work.drafts.push(correlator.draft(msg, from, flow, share, now, drafted));
      else if (msg.kind === 'notification') correlator.notification(msg, from, flow);
      else {
        const done = correlator.response(msg, from, flow, share, now, issuedSessionId);
        if (done) work.matched.push(done);
        else work.unmatched.push(msg);
      }
    }
  },
};

/** The POST as a whole, for the client's rules (the server has not answered yet). */
const clientPost = (frame: FrameInput, request: Decoded): PostSubject => ({
  kind: 'post',
  wire: frame.flow.wire,
  version: frame.flow.protocolVersion,
  requestHeaders: frame.flow.requestHeaders,
  request,
  status: undefined,
  contentType: undefined,
  responseHeaders: undefined,
  response: undefined,
  responseBytes: 0,
  session: frame.flow.session,
});

const rulesStage: Stage = {
  name: 'rules',
  run(work, ctx) {
    const { flow, http, from } = work;
    for (const c of work.matched) {
      const subject = exchangeSubject(c, flow, http);
      work.subjects.push(subject);
      work.found.push(judge(c, subject, ctx));
    }
    if (from !== 'client' || !work.decoded) return;
    // A client's request is judged by the client's rules before it is forwarded.
    for (const draft of work.drafts) {
      const subject = pendingSubject(draft, flow);
      work.draftSubjects.push(subject);
      work.draftFound.push(policed(ctx, ctx.engine.evaluate(subject, 'client'), draft.method, draft.tool));
    }
    const first = work.decoded.ok ? work.decoded.payload.messages[0] : undefined;
    work.postFindings = policed(
      ctx,
      ctx.engine.evaluate(clientPost(work, work.decoded), 'client'),
      first && 'method' in first ? first.method : undefined,
      undefined,
    );
  },
};

const decideStage: Stage = {
  name: 'decide',
  run(work, ctx) {
    for (let i = 0; i < work.matched.length; i++) {
      const c = work.matched[i]!;
      const subject = work.subjects[i]!;
      const findings = work.found[i]!;
      work.completed.push({ exchange: c, subject, findings, decision: decideFor(c, subject, findings, ctx) });
    }
    // A request enters the table once decided, with its verdict.
    for (let i = 0; i < work.drafts.length; i++) {
      const draft = work.drafts[i]!;
      if (work.from !== 'client') {
        work.opened.push(ctx.correlator.open(draft, NO_VERDICT, ctx.now));
        continue;
      }
      const findings = work.draftFound[i] ?? [];
      const decision = decide({
        findings: work.postFindings.length === 0 ? findings : [...findings, ...work.postFindings],
        subject: work.draftSubjects[i]!,
        policy: ctx.policy,
        rewriters: ctx.rewriters,
        party: 'client',
        modern: eraOf(draft.protocolVersion ?? '') === 'modern',
      });
      const clean = findings.length === 0 && decision.kind === 'pass';
      work.opened.push(ctx.correlator.open(draft, clean ? NO_VERDICT : { findings, decision }, ctx.now));
    }
  },
};

/** The leak rules: an answer they flag is no success to learn from. */
const LEAK_RULES: ReadonlySet<string> = new Set(LEAK_PATTERNS.map((p) => p.rule));

/** What a judged answer makes known to the session (roots a client answered, a server's success), or undefined. */
function madeKnown(c: Completed, findings: readonly PolicedFinding[]): unknown {
  const response = c.response;
  if (response?.kind !== 'result') return undefined;
  if (c.request.from === 'server') return c.request.method === 'roots/list' ? response.result : undefined;
  // A success no rule reads as a failure (isError, or failure text without it) or as a leak.
  const success =
    asRecord(response.result)?.isError !== true && !findings.some((f) => f.rule === 'silent-success' || LEAK_RULES.has(f.rule));
  return success ? response.result : undefined;
}

const rememberStage: Stage = {
  name: 'remember',
  run(work, { correlator }) {
    // Learnt after judging: an answer's own names never excuse themselves.
    const { flow } = work;
    if (work.from === 'client') for (const draft of work.drafts) correlator.remember(flow, knownValues(draft.params));
    for (let i = 0; i < work.matched.length; i++) {
      const known = madeKnown(work.matched[i]!, work.found[i]!);
      if (known !== undefined) correlator.remember(flow, knownValues(known));
    }
  },
};

export const STAGES: readonly Stage[] = [decodeStage, correlateStage, rulesStage, decideStage, rememberStage];

/** Runs a frame through the stages, in order. */
export function runFrame(input: FrameInput, ctx: StageContext): Frame {
  const work: Work = {
    from: input.from,
    body: input.body,
    size: input.size,
    flow: input.flow,
    http: input.http,
    issuedSessionId: input.issuedSessionId,
    decoded: input.decoded,
    problem: undefined,
    completed: [],
    unmatched: [],
    opened: [],
    postFindings: [],
    matched: [],
    drafts: [],
    subjects: [],
    found: [],
    draftSubjects: [],
    draftFound: [],
  };
  for (const stage of STAGES) stage.run(work, ctx);
  return work as Frame;
}
