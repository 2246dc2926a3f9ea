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
// What the server's rules read of the arguments the capture redacts comes from the record's
// request facts (rules/request-facts.ts); a record without them (an older capture) is judged on
// the redacted request. A request without a session id is kept per credential, as the proxy keeps
// it: the record's principal label stands in for the credential.
//
// What a replay cannot judge: the client's request rules (they read the request's own headers and
// arguments, which the capture masks) and every POST-level rule (they need the raw POST body, the
// server's reply headers and body bytes, which the capture does not keep). See REPLAY_COVERAGE.
import type { IncomingHttpHeaders } from 'node:http';
import { classify, type Message } from '../codec/jsonrpc.ts';
import { DEFAULT_LIMITS } from '../config/defaults.ts';
import { Correlator, type Completed } from '../exchange/correlate.ts';
import { judgeExchange } from '../engine/judge.ts';
import type { JudgedExchange } from '../engine/plans.ts';
import { resolveFlow, type Via } from '../exchange/flow.ts';
import { SessionStore } from '../exchange/sessions.ts';
import { RequestTable, type Sender } from '../exchange/table.ts';
import { H } from '../mcp/headers.ts';
import { runtimeFactory, type Runtime } from '../config/runtime.ts';
import type { Action, Policy } from '../config/types.ts';
import { excerpt } from '../redact/excerpt.ts';
import { exchangeSubject, type ResponseHttp } from '../rules/subjects.ts';
import type { BodyProblem, ExchangeSubject } from '../rules/types.ts';
import type { CaptureRecord } from '../sinks/capture.ts';
import { maskSecrets, redactText } from '../sinks/redact.ts';
import { type CaptureLine, captureRecordIn, parseCaptureLine } from './capture-line.ts';
import {
  replayCoverage,
  type BadLine,
  type ReplayDecision,
  type ReplayedExchange,
  type ReplayOptions,
  type ReplayReport,
  type RuleCount,
} from './report.ts';

export { parseCaptureLine } from './capture-line.ts';
export {
  replayCoverage,
  type BadLine,
  type ReplayCoverage,
  type ReplayDecision,
  type ReplayedExchange,
  type ReplayFinding,
  type ReplayOptions,
  type ReplayReport,
  type RuleCount,
} from './report.ts';

/** Distinct sessions counted at most. */
const MAX_COUNTED_SESSIONS = 100_000;

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
  private readonly keepExchanges: boolean;
  private readonly onExchange: ((x: ReplayedExchange) => void) | undefined;
  private readonly byRule = new Map<string, RuleCount>();
  private readonly byAction: Partial<Record<Action, number>> = {};
  private readonly decisions = { pass: 0, rewrite: 0, block: 0 };
  private replayed = 0;
  private findings = 0;
  private flagged = 0;
  private readonly badLines: BadLine[] = [];
  private readonly ruleErrors: ReplayReport['ruleErrors'] = [];
  private total = 0;
  private blank = 0;
  private bad = 0;
  private logRecords = 0;
  private seq = 0;
  private current = 0;

  constructor(
    private readonly original: Policy,
    options: ReplayOptions = {},
  ) {
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.maxBadLines = options.maxBadLines ?? 100;
    this.keepExchanges = options.keepExchanges ?? true;
    this.onExchange = options.onExchange;
    // A request and its response are replayed together, so nothing stays open: the table never evicts.
    this.table = new RequestTable(limits.maxOpenRequests, Number.MAX_SAFE_INTEGER, () => {});
    // Sessions are not forgotten when idle (a replay has no idle time); the count bound is the proxy's.
    this.sessions = new SessionStore({
      maxSessions: limits.maxSessions,
      sessionIdleMs: Number.MAX_SAFE_INTEGER,
      maxToolsPerSession: limits.maxToolsPerSession,
    });
    this.correlator = new Correlator(this.table, this.sessions);
    // What would have been rewritten: the policy's actions, applied as in enforce mode.
    this.policy = { ...original, mode: 'enforce' };
    this.runtime = runtimeFactory((rule, err) => {
      // Kept like bad lines, the first ones: a rule that throws on every line cannot grow memory.
      if (this.ruleErrors.length < this.maxBadLines)
        this.ruleErrors.push({ line: this.current, rule, error: redactText(err instanceof Error ? err.message : String(err)) });
    })(this.policy);
  }

  /** `n` empty lines: counted, as blank. */
  blanks(n: number): void {
    this.total += n;
    this.blank += n;
  }

  /** Replays one line (its text without the line end). Never throws: a line that cannot be replayed is counted as bad. */
  line(text: string): void {
    const line = ++this.total;
    this.current = line;
    if (text.trim() === '') {
      this.blank++;
      return;
    }
    this.replayParsed(line, parseCaptureLine(text));
  }

  /** One line already parsed as JSON (a reader that looked at it first): replayed as line() would. */
  value(value: unknown): void {
    const line = ++this.total;
    this.current = line;
    this.replayParsed(line, captureRecordIn(value));
  }

  private replayParsed(line: number, parsed: CaptureLine): void {
    if (!parsed.ok) {
      if (parsed.log) this.logRecords++;
      return void this.badLine(line, parsed.reason);
    }
    try {
      const problem = this.replay(line, parsed.record);
      if (problem) this.badLine(line, problem);
    } catch (err) {
      this.badLine(line, `could not be replayed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** A line that could not be read at all (over the reader's size bound): counted as bad. */
  skipped(reason: string): void {
    this.badLine(++this.total, reason);
  }

  private badLine(line: number, reason: string): void {
    this.bad++;
    // A reason may quote the line (JSON.parse does): masked like everything the report echoes.
    if (this.badLines.length < this.maxBadLines) this.badLines.push({ line, reason: redactText(reason) });
  }

  /** Replays one record through the proxy's correlation, rules and decisions; returns why it could not, if it could not. */
  private replay(line: number, record: CaptureRecord): string | undefined {
    const request = classify(record.request.message);
    if (request.kind !== 'request')
      return `request.message is not a JSON-RPC request (${request.kind === 'invalid' ? request.reason : request.kind})`;
    const { from } = record.request;
    const now = line;

    // The flow as the proxy resolved it. The capture keeps the protocol's headers; a session's
    // requests carry its Mcp-Session-Id, except the initialize that was issued one (the record's
    // session is then the id the server issued with the response) and the server's own requests
    // (they came on a stream of the session: the record's session says which).
    const headers: IncomingHttpHeaders = { ...record.request.headers };
    // A legacy SSE session or a stdio child names its session itself (one stdio session per capture).
    const via: Via | undefined = record.wire
      ? { wire: record.wire, session: record.session ?? record.wire, sessionId: record.session ?? undefined }
      : undefined;
    const issued = !via && from === 'client' && record.session !== null && headers[H.sessionId] === undefined ? record.session : undefined;
    if (!via && from === 'server' && record.session !== null) headers[H.sessionId] = record.session;
    // A request kept per credential: the capture's label stands in for the credential it does not keep.
    if (record.principal !== undefined) headers.authorization = `capture-principal ${record.principal}`;
    const flow = resolveFlow(headers, [request], this.sessions, ++this.seq, now, false, via);
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
    // Counted exactly up to a bound (a capture may hold any number): past it, a lower bound.
    if (this.sessionKeys.size < MAX_COUNTED_SESSIONS) this.sessionKeys.add(issued ? `sid:${issued}` : flow.session.key);

    const judged = judgeExchange(c, this.subjectOf(c, record, flow), { ...this.runtime, policy: this.policy });

    // The capture was masked when it was written, but a capture from elsewhere (an older
    // mcp-warden, a hand-made file) may not be: what the report echoes is masked again.
    const protocolVersion = c.request.protocolVersion ?? null;
    this.record({
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
      findings: judged.findings.map((f) => ({
        rule: f.rule,
        severity: f.severity,
        action: f.action,
        message: redactText(f.message),
        pointer: f.pointer,
        evidence: redactText(f.evidence),
      })),
      decision: decisionOf(judged),
    });
    return undefined;
  }

  /** Counts a replayed exchange, hands it on, and keeps it when the report lists exchanges. */
  private record(x: ReplayedExchange): void {
    this.replayed++;
    this.decisions[x.decision.kind]++;
    if (x.findings.length > 0) this.flagged++;
    for (const f of x.findings) {
      this.findings++;
      bump(this.byAction, f.action);
      let entry = this.byRule.get(f.rule);
      if (!entry) this.byRule.set(f.rule, (entry = { rule: f.rule, severity: f.severity, count: 0, actions: {} }));
      entry.count++;
      bump(entry.actions, f.action);
    }
    this.onExchange?.(x);
    if (this.keepExchanges) this.exchanges.push(x);
  }

  /**
   * The subject as the proxy judged it. An answered exchange was judged on the frame that carried
   * the answer (no body problem, no unmatched responses); an unanswered one with what the HTTP
   * exchange got instead. A client's answer to a server request came in a POST: no status yet.
   */
  private subjectOf(c: Completed, record: CaptureRecord, flow: Parameters<typeof exchangeSubject>[1]): ExchangeSubject {
    const subject = this.httpSubjectOf(c, record, flow);
    // What the rules read of the redacted arguments; a capture without facts is judged on the redacted request.
    if (record.request.facts) subject.facts = record.request.facts;
    return subject;
  }

  private httpSubjectOf(c: Completed, record: CaptureRecord, flow: Parameters<typeof exchangeSubject>[1]): ExchangeSubject {
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
    return {
      policy: { source: this.original.source, mode: this.original.mode, judgedAs: 'enforce', warnings: [...this.original.warnings] },
      lines: { total: this.total, blank: this.blank, exchanges: this.replayed, bad: this.bad, logRecords: this.logRecords },
      badLines: [...this.badLines],
      sessions: this.sessionKeys.size,
      exchanges: [...this.exchanges],
      summary: {
        exchanges: this.replayed,
        flagged: this.flagged,
        findings: this.findings,
        byRule: [...this.byRule.values()].map((r) => ({ ...r, actions: { ...r.actions } })),
        byAction: { ...this.byAction },
        decisions: { ...this.decisions },
      },
      coverage: replayCoverage(this.runtime.engine.rules),
      ruleErrors: [...this.ruleErrors],
    };
  }
}

function decisionOf(judged: JudgedExchange): ReplayDecision {
  const d = judged.decision;
  if (d.kind === 'pass') return { kind: 'pass' };
  const after = excerpt(d.message, 2000);
  const message = maskSecrets(d.message);
  if (d.kind === 'mutate') return { kind: 'rewrite', rules: d.rules, status: d.status, before: redactText(d.before), after, message };
  return { kind: 'block', rules: d.rules, status: d.status, after, message };
}

/** Replays capture lines (a file's lines, in order) under `policy`, judged as enforce mode. Never rejects on bad input. */
export async function replayCapture(
  lines: AsyncIterable<string> | Iterable<string>,
  policy: Policy,
  options: ReplayOptions = {},
): Promise<ReplayReport> {
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
