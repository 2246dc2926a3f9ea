// Judges what a probe saw the way the proxy judges traffic: the request and each answer run
// through the proxy's own pipeline stages (decode, correlate through the real Correlator, the
// rules of the server's party), requests left unanswered are abandoned and judged, and the POST as
// a whole is judged by the POST rules. The session learns the version, capabilities and tool
// catalogue exactly as it does in the proxy. No I/O.
import type { IncomingHttpHeaders } from 'node:http';
import { decodeJson, type Decoded } from '../codec/json-body.ts';
import type { Message } from '../codec/jsonrpc.ts';
import { DEFAULT_LIMITS } from '../config/defaults.ts';
import { Correlator, type Completed, type Flow } from '../exchange/correlate.ts';
import { resolveFlow, viaKey, type Via } from '../exchange/flow.ts';
import { sessionKey, SessionStore, type Session } from '../exchange/sessions.ts';
import { RequestTable } from '../exchange/table.ts';
import { judge } from '../engine/judge.ts';
import { runFrame, type Frame, type FrameInput, type StageContext } from '../engine/stages.ts';
import { defaultPolicy } from '../config/compile.ts';
import { runtimeFactory } from '../config/runtime.ts';
import { exchangeSubject, type ResponseHttp } from '../rules/subjects.ts';
import type { BodyProblem, ExchangeSubject, Finding } from '../rules/types.ts';
import type { HttpAnswer } from './http.ts';

/** One judged exchange: the completed request, the subject it was judged on, what the rules found. */
export interface Judged {
  completed: Completed;
  subject: ExchangeSubject;
  findings: Finding[];
}

/** What one probe's HTTP exchange amounts to, once correlated and judged. */
export interface Observed {
  flow: Flow;
  /** The client body, decoded. */
  request: Decoded;
  /** The server's JSON body, decoded (undefined for SSE, or no body). */
  response: Decoded | undefined;
  /** Every message the server sent (JSON body or SSE events). */
  messages: Message[];
  exchanges: Judged[];
  unmatched: Message[];
  bodyProblem: BodyProblem | undefined;
  /** Findings of the rules about the POST as a whole. */
  postFindings: Finding[];
  answer: HttpAnswer;
}

const PROXY_ERROR: Readonly<Record<string, string>> = {
  timeout: 'WARDEN_UPSTREAM_TIMEOUT',
  unreachable: 'WARDEN_UPSTREAM_UNREACHABLE',
  reset: 'WARDEN_UPSTREAM_RESET',
  error: 'WARDEN_UPSTREAM_RESET',
};

export class CheckJudge {
  readonly sessions = new SessionStore(DEFAULT_LIMITS);
  private readonly correlator: Correlator;
  private readonly ctx: Omit<StageContext, 'now'>;
  private seq = 0;

  constructor(onRuleError: (rule: string, err: unknown) => void = () => undefined) {
    const table = new RequestTable(DEFAULT_LIMITS.maxOpenRequests, DEFAULT_LIMITS.requestIdleMs, () => undefined);
    this.correlator = new Correlator(table, this.sessions);
    const policy = defaultPolicy();
    this.ctx = { correlator: this.correlator, ...runtimeFactory(onRuleError)(policy), policy };
  }

  private stage(): StageContext {
    return { ...this.ctx, now: performance.now() };
  }

  /**
   * Correlates and judges one probe: `body` and `headers` as sent, `answer` as received.
   * `judgeAs` replaces the version the proxy would read off the request (a probe that asks for a
   * version the server does not speak is still a client of the version it runs under).
   */
  observe(headers: IncomingHttpHeaders, body: string, answer: HttpAnswer, judgeAs?: string, via?: Via): Observed {
    const bytes = Buffer.from(body, 'utf8');
    const request = decodeJson(bytes);
    const messages = request.ok ? request.payload.messages : [];
    const flow = resolveFlow(headers, messages, this.sessions, ++this.seq, performance.now(), false, via);
    if (judgeAs !== undefined) flow.protocolVersion = judgeAs;
    const frame = (f: Omit<FrameInput, 'flow'>): Frame => runFrame({ ...f, flow }, this.stage());

    const opened = frame({
      from: 'client',
      body: bytes,
      size: bytes.length,
      http: { status: undefined, contentType: undefined, transport: 'none' },
      issuedSessionId: undefined,
      decoded: request,
    }).opened;
    const sse = answer.events !== undefined;
    const http: ResponseHttp = {
      status: answer.status,
      contentType: answer.contentType,
      transport: answer.wire === 'sse' ? 'get-sse' : (answer.wire ?? (answer.status === undefined ? 'none' : sse ? 'sse' : 'json')),
      ...(answer.failure ? { proxyError: PROXY_ERROR[answer.failure.reason] } : {}),
    };
    const issued = answer.headers['mcp-session-id'];
    const issuedSessionId = typeof issued === 'string' ? issued : undefined;

    const out: Observed = {
      flow,
      request,
      response: undefined,
      messages: [],
      exchanges: [],
      unmatched: [],
      bodyProblem: undefined,
      postFindings: [],
      answer,
    };
    const take = (f: Frame): void => {
      if (f.decoded?.ok) out.messages.push(...f.decoded.payload.messages);
      out.unmatched.push(...f.unmatched);
      out.bodyProblem ??= f.problem;
      // A stdio line that is not a message breaks the transport's framing.
      if (via?.wire === 'stdio' && f.problem) out.postFindings.push(...this.lineFindings(flow, f.problem));
      // The pipeline judged these on the frame's subject; keep that subject for re-judging.
      for (const j of f.completed) out.exchanges.push({ completed: j.exchange, subject: j.subject!, findings: j.findings });
    };
    if (sse) {
      for (const data of answer.events ?? [])
        take(frame({ from: 'server', body: data, size: Buffer.byteLength(data), http, issuedSessionId }));
    } else if (answer.body.length > 0 && !answer.truncated) {
      const f = frame({ from: 'server', body: answer.body, size: answer.body.length, http, issuedSessionId });
      out.response = f.decoded;
      take(f);
    } else if (answer.status !== undefined && opened.length > 0 && !answer.truncated && !(answer.status >= 300 && answer.status < 500)) {
      // A 3xx or 4xx says what it means by its status; the spec leaves its body optional
      // (https://modelcontextprotocol.io/specification/2025-06-18/basic/transports, and
      // basic/transports/streamable-http in 2026-07-28). (The proxy's endpoint flags these too.)
      out.bodyProblem = { problem: 'empty', excerpt: '' };
    }

    // Requests the exchange did not answer, judged as the proxy judges them when a body ends.
    const outcome = answer.body.length > 0 && !sse ? 'invalid-response' : 'no-response';
    for (const o of opened) {
      const c = this.correlator.abandon(
        flow.scope,
        'client',
        o.id,
        performance.now(),
        answer.truncated ? 'unaudited' : outcome,
        undefined,
        o.idToken,
      );
      if (!c) continue;
      const subject = exchangeSubject(c, flow, http, out.bodyProblem, out.unmatched);
      out.exchanges.push({ completed: c, subject, findings: judge(c, subject, this.stage()) });
    }

    if (answer.status !== undefined) {
      out.postFindings = this.ctx.engine.evaluate(
        {
          kind: 'post',
          wire: flow.wire,
          version: flow.protocolVersion,
          requestHeaders: headers,
          request,
          status: answer.status,
          contentType: answer.contentType,
          responseHeaders: answer.headers,
          response: out.response,
          responseBytes: answer.body.length,
          session: flow.session,
        },
        'server',
      );
    }
    return out;
  }

  private lineFindings(flow: Flow, problem: BodyProblem): Finding[] {
    return this.ctx.engine.evaluate(
      { kind: 'line', wire: 'stdio', version: flow.protocolVersion, lines: 1, problem, session: flow.session },
      'server',
    );
  }

  /** Judges an exchange again on another session (a dual-era client's probe of a server found to be legacy). */
  rejudge(j: Judged, session: Session): Finding[] {
    return judge(j.completed, { ...j.subject, session }, this.stage());
  }

  /** The session traffic with this session id and credential belongs to; on a stream transport, the session it names. */
  session(sessionId: string | undefined, authorization: string | undefined, via?: Via): Session {
    const key = via ? viaKey(via) : sessionKey(sessionId, authorization);
    return this.sessions.open(key, via ? via.sessionId : sessionId, performance.now());
  }
}
