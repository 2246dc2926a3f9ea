// `mcp-warden replay`: runs a capture (src/sinks/capture.ts, one JSON line per completed exchange)
// through a policy offline. Pure: the lines come in, a report goes out; no clock, no files.
//
// The proxy's state is rebuilt from the capture, in its order, with the proxy's own code: each
// record's request enters a Correlator (flow resolved by resolveFlow from the kept headers and the
// record's session), its response completes it, and the Correlator learns what the proxy learned
// (the version and capabilities from initialize, the catalogue from every tools/list page). Each
// exchange is then judged with the proxy's judge() and decideFor() under the policy, treated as
// enforce mode: the report says what the proxy would have flagged, rewritten and blocked.
//
// What a replay cannot judge: the client's request rules (they read the request's own headers and
// arguments, which the capture masks) and every POST-level rule (they need the raw POST body, the
// server's reply headers and body bytes, which the capture does not keep). See REPLAY_COVERAGE.
import { isObject } from '../codec/json-value.ts';
import type { IncomingHttpHeaders } from 'node:http';
import { classify, type JsonRpcId, type Message } from '../codec/jsonrpc.ts';
import { DEFAULT_LIMITS, type Limits } from '../config/defaults.ts';
import { Correlator, type Completed } from '../exchange/correlate.ts';
import { resolveFlow } from '../exchange/flow.ts';
import { SessionStore } from '../exchange/sessions.ts';
import { RequestTable, type Sender } from '../exchange/table.ts';
import { H } from '../mcp/headers.ts';
import { decideFor, judge, type StageContext } from '../pipeline.ts';
import { runtimeFactory, type Runtime } from '../policy/runtime.ts';
import type { Action, Mode, Policy } from '../policy/types.ts';
import type { ResponseMessage } from '../rewrite/types.ts';
import { excerpt } from '../rules/evidence.ts';
import { exchangeSubject, type ResponseHttp } from '../rules/subjects.ts';
import type { BodyProblem, ExchangeSubject, Rule, Severity } from '../rules/types.ts';
import { CAPTURE_VERSION, type CaptureRecord } from '../sinks/capture.ts';
import { maskSecrets, redactText } from '../sinks/redact.ts';

/** One finding on a replayed exchange, through the policy. */
export interface ReplayFinding {
  rule: string;
  severity: Severity;
  /** What the policy says to do with it (in enforce mode: `rewrite` and `block` are applied). */
  action: Action;
  message: string;
  pointer: string;
  evidence: string;
}

/** What the proxy, in enforce mode, would have done with the server's answer. */
export type ReplayDecision =
  | { kind: 'pass' }
  /** The client would have received `message` (and `status`, where it could still change) instead of the server's answer. */
  | { kind: 'rewrite'; rules: string[]; status: number | undefined; before: string; after: string; message: ResponseMessage }
  /** The server's answer would have been withheld; the client would have received this error. */
  | { kind: 'block'; rules: string[]; status: number; after: string; message: ResponseMessage };

export interface ReplayedExchange {
  /** 1-based line of the capture. */
  line: number;
  time: string;
  /** Who sent the request: `client`, or `server` (elicitation, sampling, roots). */
  from: Sender;
  method: string;
  id: JsonRpcId;
  tool: string | undefined;
  session: string | null;
  /** The version the replay judged the exchange by (learned from the capture; the recorded one when the capture holds nothing to learn it from). */
  protocolVersion: string | null;
  /** The version the proxy recorded, when it differs from the replay's. */
  capturedProtocolVersion?: string | null;
  outcome: string;
  status: number | null;
  findings: ReplayFinding[];
  decision: ReplayDecision;
}

export interface BadLine {
  line: number;
  reason: string;
}

/** Counts of findings of one rule, by action. */
export interface RuleCount {
  rule: string;
  severity: Severity;
  count: number;
  actions: Partial<Record<Action, number>>;
}

export interface ReplayCoverage {
  /** Rule ids judged on every captured exchange. */
  judged: { what: string; rules: string[] };
  /** Rule families a replay cannot judge, and why. */
  notJudged: Array<{ what: string; why: string; rules: string[] }>;
}

export interface ReplayReport {
  policy: {
    source: string;
    /** The policy's own mode; the replay judges as enforce whatever it says. */
    mode: Mode;
    judgedAs: 'enforce';
    warnings: string[];
  };
  lines: {
    /** Lines read, blank ones included. */
    total: number;
    blank: number;
    exchanges: number;
    bad: number;
  };
  /** The first bad lines (at most `maxBadLines`); `lines.bad` counts them all. */
  badLines: BadLine[];
  /** Distinct sessions seen (the anonymous one counts once). */
  sessions: number;
  exchanges: ReplayedExchange[];
  summary: {
    exchanges: number;
    /** Exchanges with at least one finding. */
    flagged: number;
    findings: number;
    /** In order of first appearance. */
    byRule: RuleCount[];
    byAction: Partial<Record<Action, number>>;
    decisions: { pass: number; rewrite: number; block: number };
  };
  coverage: ReplayCoverage;
  /** Rules that threw (a bug in the rule; the proxy logs and skips them too). */
  ruleErrors: Array<{ line: number; rule: string; error: string }>;
}

export interface ReplayOptions {
  /** Bounds of the rebuilt state (the proxy's defaults unless given): sessions kept, tools per session. */
  limits?: Partial<Pick<Limits, 'maxSessions' | 'maxOpenRequests' | 'maxToolsPerSession'>>;
  /** Bad lines kept with their reason (default 100); all are counted. */
  maxBadLines?: number;
}

/** Which rules a replay judges and which it cannot, for a rule catalogue. */
export function replayCoverage(rules: readonly Rule[]): ReplayCoverage {
  const ids = (pred: (r: Rule) => boolean): string[] => rules.filter(pred).map((r) => r.id);
  return {
    judged: {
      what: 'the server\'s exchange rules: each captured request with what answered it (or did not)',
      rules: ids((r) => r.subject === 'exchange' && r.party === 'server'),
    },
    notJudged: [
      {
        what: 'POST-level rules',
        why: 'they judge a whole HTTP POST (its raw body, the reply\'s headers and bytes), which the capture does not keep',
        rules: ids((r) => r.subject === 'post'),
      },
      {
        what: 'the client\'s request rules',
        why: 'they compare a request with its own headers and arguments, which the capture masks, or with the requests in flight beside it, which a capture of completed exchanges does not show',
        rules: ids((r) => r.subject === 'exchange' && r.party === 'client'),
      },
    ],
  };
}

const isStringOrNull = (v: unknown): v is string | null => v === null || typeof v === 'string';
const TRANSPORTS: ReadonlySet<unknown> = new Set(['json', 'sse', 'get-sse', 'none']);
const BODY_PROBLEMS: ReadonlySet<unknown> = new Set(['empty', 'not-utf8', 'html', 'not-json', 'not-jsonrpc']);

/** The record a line holds, or why it holds none. */
export function parseCaptureLine(text: string): { ok: true; record: CaptureRecord } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON (${(err as Error).message})` };
  }
  if (!isObject(value)) return { ok: false, reason: 'not a capture record (not a JSON object)' };
  if (value.v !== CAPTURE_VERSION) {
    return { ok: false, reason: `capture version ${JSON.stringify(value.v) ?? 'missing'}; this mcp-warden reads version ${CAPTURE_VERSION}` };
  }
  const shape = shapeProblem(value);
  return shape ? { ok: false, reason: `not a capture record (${shape})` } : { ok: true, record: value as unknown as CaptureRecord };
}

function shapeProblem(v: Record<string, unknown>): string | undefined {
  if (typeof v.time !== 'string') return 'time is not a string';
  if (!isStringOrNull(v.session)) return 'session is not a string or null';
  if (!isStringOrNull(v.protocolVersion)) return 'protocolVersion is not a string or null';
  const req = v.request;
  if (!isObject(req)) return 'request is not an object';
  if (req.from !== 'client' && req.from !== 'server') return 'request.from is not "client" or "server"';
  if (!isObject(req.headers) || !Object.values(req.headers).every((h) => typeof h === 'string')) return 'request.headers is not an object of strings';
  const res = v.response;
  if (!isObject(res)) return 'response is not an object';
  if (typeof res.outcome !== 'string') return 'response.outcome is not a string';
  if (res.status !== null && typeof res.status !== 'number') return 'response.status is not a number or null';
  if (!isStringOrNull(res.contentType)) return 'response.contentType is not a string or null';
  if (!TRANSPORTS.has(res.transport)) return 'response.transport is not json, sse, get-sse or none';
  if (!('message' in res)) return 'response.message is missing';
  if (res.bodyProblem !== null && !(isObject(res.bodyProblem) && BODY_PROBLEMS.has(res.bodyProblem.problem) && typeof res.bodyProblem.excerpt === 'string')) {
    return 'response.bodyProblem is not a body problem or null';
  }
  if (!Array.isArray(res.unmatched)) return 'response.unmatched is not an array';
  if (!isStringOrNull(res.proxyError)) return 'response.proxyError is not a string or null';
  return undefined;
}

const bump = <K extends string>(counts: Partial<Record<K, number>>, key: K): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/**
 * Replays capture lines one at a time. `replayCapture` and `replayCaptureSync` drive it; a caller
 * with lines from elsewhere can feed `line()` itself and call `report()` at the end.
 */
export class Replayer {
  private readonly table: RequestTable;
  private readonly sessions: SessionStore;
  private readonly correlator: Correlator;
  private readonly runtime: Runtime;
  private readonly policy: Policy;
  private readonly maxBadLines: number;
  private readonly sessionKeys = new Set<string>();
  private readonly exchanges: ReplayedExchange[] = [];
  private readonly badLines: BadLine[] = [];
  private readonly ruleErrors: ReplayReport['ruleErrors'] = [];
  private total = 0;
  private blank = 0;
  private bad = 0;
  private seq = 0;
  private current = 0;

  constructor(
    private readonly original: Policy,
    options: ReplayOptions = {},
  ) {
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.maxBadLines = options.maxBadLines ?? 100;
    // A request and its response are replayed together, so nothing stays open: the table never evicts.
    this.table = new RequestTable(limits.maxOpenRequests, Number.MAX_SAFE_INTEGER, () => {});
    // Sessions are not forgotten when idle (a replay has no idle time); the count bound is the proxy's.
    this.sessions = new SessionStore({ maxSessions: limits.maxSessions, sessionIdleMs: Number.MAX_SAFE_INTEGER, maxToolsPerSession: limits.maxToolsPerSession });
    this.correlator = new Correlator(this.table, this.sessions);
    // What would have been rewritten: the policy's actions, applied as in enforce mode.
    this.policy = { ...original, mode: 'enforce' };
    this.runtime = runtimeFactory((rule, err) => {
      this.ruleErrors.push({ line: this.current, rule, error: redactText(err instanceof Error ? err.message : String(err)) });
    })(this.policy);
  }

  /** Replays one line (its text without the line end). Never throws: a line that cannot be replayed is counted as bad. */
  line(text: string): void {
    const line = ++this.total;
    this.current = line;
    if (text.trim() === '') {
      this.blank++;
      return;
    }
    const parsed = parseCaptureLine(text);
    if (!parsed.ok) return this.badLine(line, parsed.reason);
    try {
      const problem = this.replay(line, parsed.record);
      if (problem) this.badLine(line, problem);
    } catch (err) {
      this.badLine(line, `could not be replayed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private badLine(line: number, reason: string): void {
    this.bad++;
    // A reason may quote the line (JSON.parse does): masked like everything the report echoes.
    if (this.badLines.length < this.maxBadLines) this.badLines.push({ line, reason: redactText(reason) });
  }

  /** Replays one record through the proxy's correlation, rules and decisions; returns why it could not, if it could not. */
  private replay(line: number, record: CaptureRecord): string | undefined {
    const request = classify(record.request.message);
    if (request.kind !== 'request') return `request.message is not a JSON-RPC request (${request.kind === 'invalid' ? request.reason : request.kind})`;
    const { from } = record.request;
    const now = line;

    // The flow as the proxy resolved it. The capture keeps the protocol's headers; a session's
    // requests carry its Mcp-Session-Id, except the initialize that was issued one (the record's
    // session is then the id the server issued with the response) and the server's own requests
    // (they came on a stream of the session: the record's session says which).
    const headers: IncomingHttpHeaders = { ...record.request.headers };
    const issued = from === 'client' && record.session !== null && headers[H.sessionId] === undefined ? record.session : undefined;
    if (from === 'server' && record.session !== null) headers[H.sessionId] = record.session;
    const flow = resolveFlow(headers, [request], this.sessions, ++this.seq, now);
    // A session the capture joined midway (no initialize to learn from): the version the proxy recorded.
    flow.protocolVersion ??= record.protocolVersion ?? undefined;

    this.correlator.request(request, from, flow, 0, now);
    const responder: Sender = from === 'client' ? 'server' : 'client';
    const response = record.response.message === null ? undefined : classify(record.response.message);
    let completed: Completed | undefined;
    if (response) {
      completed = this.correlator.response(response, responder, flow, 0, now, issued);
      if (!completed) {
        this.correlator.abandon(flow.scope, from, request.id, now, record.response.outcome);
        return `response.message does not answer request id ${JSON.stringify(request.id)}`;
      }
    } else {
      completed = this.correlator.abandon(flow.scope, from, request.id, now, record.response.outcome);
      if (!completed) return 'the request could not be replayed';
    }
    const c = completed;
    this.sessionKeys.add(issued ? `sid:${issued}` : flow.session.key);

    const subject = this.subjectOf(c, record, flow);
    const ctx: StageContext = { correlator: this.correlator, ...this.runtime, policy: this.policy, now };
    judge(c, subject, ctx);
    decideFor(c, subject, ctx);

    // The capture was masked when it was written, but a capture from elsewhere (an older
    // mcp-warden, a hand-made file) may not be: what the report echoes is masked again.
    const protocolVersion = c.request.protocolVersion ?? null;
    this.exchanges.push({
      line,
      time: record.time,
      from,
      method: redactText(c.request.method),
      id: typeof c.request.id === 'string' ? redactText(c.request.id) : c.request.id,
      tool: c.request.tool === undefined ? undefined : redactText(c.request.tool),
      session: record.session,
      protocolVersion,
      ...(protocolVersion !== record.protocolVersion ? { capturedProtocolVersion: record.protocolVersion } : {}),
      outcome: c.outcome,
      status: record.response.status,
      findings: c.findings.map((f) => ({ rule: f.rule, severity: f.severity, action: f.action, message: redactText(f.message), pointer: f.pointer, evidence: redactText(f.evidence) })),
      decision: decisionOf(c),
    });
    return undefined;
  }

  /**
   * The subject as the proxy judged it. An answered exchange was judged on the frame that carried
   * the answer (no body problem, no unmatched responses); an unanswered one with what the HTTP
   * exchange got instead. A client's answer to a server request came in a POST: no status yet.
   */
  private subjectOf(c: Completed, record: CaptureRecord, flow: Parameters<typeof exchangeSubject>[1]): ExchangeSubject {
    const r = record.response;
    if (c.request.from === 'server') return exchangeSubject(c, flow, { status: undefined, contentType: undefined, transport: 'none' });
    const http: ResponseHttp = {
      status: r.status ?? undefined,
      contentType: r.contentType ?? undefined,
      transport: r.transport,
      ...(r.proxyError !== null ? { proxyError: r.proxyError } : {}),
    };
    if (c.response) return exchangeSubject(c, flow, http);
    const unmatched: Message[] = r.unmatched.map(classify);
    return exchangeSubject(c, flow, http, (r.bodyProblem ?? undefined) as BodyProblem | undefined, unmatched);
  }

  report(): ReplayReport {
    const byRule = new Map<string, RuleCount>();
    const byAction: Partial<Record<Action, number>> = {};
    const decisions = { pass: 0, rewrite: 0, block: 0 };
    let findings = 0;
    let flagged = 0;
    for (const x of this.exchanges) {
      decisions[x.decision.kind]++;
      if (x.findings.length > 0) flagged++;
      for (const f of x.findings) {
        findings++;
        bump(byAction, f.action);
        let entry = byRule.get(f.rule);
        if (!entry) byRule.set(f.rule, (entry = { rule: f.rule, severity: f.severity, count: 0, actions: {} }));
        entry.count++;
        bump(entry.actions, f.action);
      }
    }
    return {
      policy: { source: this.original.source, mode: this.original.mode, judgedAs: 'enforce', warnings: [...this.original.warnings] },
      lines: { total: this.total, blank: this.blank, exchanges: this.exchanges.length, bad: this.bad },
      badLines: [...this.badLines],
      sessions: this.sessionKeys.size,
      exchanges: [...this.exchanges],
      summary: { exchanges: this.exchanges.length, flagged, findings, byRule: [...byRule.values()], byAction, decisions },
      coverage: replayCoverage(this.runtime.engine.rules),
      ruleErrors: [...this.ruleErrors],
    };
  }
}

function decisionOf(c: Completed): ReplayDecision {
  const d = c.decision;
  if (!d || d.kind === 'pass') return { kind: 'pass' };
  const after = excerpt(d.message, 2000);
  const message = maskSecrets(d.message);
  if (d.kind === 'mutate') return { kind: 'rewrite', rules: d.rules, status: d.status, before: redactText(d.before), after, message };
  return { kind: 'block', rules: d.rules, status: d.status, after, message };
}

/** Replays capture lines (a file's lines, in order) under `policy`, judged as enforce mode. Never rejects on bad input. */
export async function replayCapture(lines: AsyncIterable<string> | Iterable<string>, policy: Policy, options: ReplayOptions = {}): Promise<ReplayReport> {
  const replayer = new Replayer(policy, options);
  for await (const text of lines) replayer.line(text);
  return replayer.report();
}

/** replayCapture for lines already in memory. */
export function replayCaptureSync(lines: Iterable<string>, policy: Policy, options: ReplayOptions = {}): ReplayReport {
  const replayer = new Replayer(policy, options);
  for (const text of lines) replayer.line(text);
  return replayer.report();
}
