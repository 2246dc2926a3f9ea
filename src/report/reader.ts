// Reads the lines of exchange logs and captures into a report, one line at a time, in bounded
// memory. Log records (`exchange`, `violation`, `rewrite`, `block`) fill the tables; capture
// records are replayed through the policy (src/replay/) for the what-if, and fill the tables only
// when no exchange log record was read (a log and a capture of the same traffic count once).
import { isObject } from '../codec/json-value.ts';
import type { Policy } from '../config/types.ts';
import { clientOf, type ClientInfo } from '../exchange/identity.ts';
import { Replayer, type ReplayedExchange } from '../replay/replay.ts';
import { mapDeep, shapeVisit } from '../redact/values.ts';
import type { Action, LooseFinding, ReportData, ReportExchange, ReportFinding, Severity } from './model.ts';
import { ReportTables } from './tables.ts';
import { whatIfOf, WhatIfTally } from './what-if.ts';

const PENDING_MAX = 10_000;
/** Findings held for one exchange record at most (past it, they count as findings on no exchange). */
const PENDING_PER_KEY = 256;
/** The widest time a Date holds (ms from the epoch, either way). */
const MAX_TIME = 8.64e15;
const SESSIONS_REMEMBERED = 10_000;
const SEVERITY: ReadonlySet<unknown> = new Set(['error', 'warning', 'info']);
const ACTIONS: ReadonlySet<unknown> = new Set(['off', 'log', 'rewrite', 'block']);

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const action = (v: unknown): Action | undefined => (ACTIONS.has(v) ? (v as Action) : undefined);

/** A record's time (pino's ISO string, or epoch milliseconds). */
function timeOf(v: unknown): number | undefined {
  const t = typeof v === 'number' ? v : typeof v === 'string' ? Date.parse(v) : Number.NaN;
  return Math.abs(t) <= MAX_TIME ? t : undefined;
}

/** `name version`, else the User-Agent. */
export const clientLabel = (name: string | undefined, version: string | undefined, userAgent?: string): string | undefined =>
  name !== undefined ? (version !== undefined ? `${name} ${version}` : name) : userAgent;

/** Which exchange a violation record is about: the fields it shares with its exchange record. */
const exchangeKey = (r: Record<string, unknown>): string =>
  `${String(r.session ?? '')}\u0000${JSON.stringify(r.id ?? null)}\u0000${String(r.method ?? '')}`;

/** Whatever a report shows is masked again: a log from elsewhere may not have been. */
export const maskReport = (data: ReportData): ReportData =>
  mapDeep(data, shapeVisit, { depth: 32, nodes: Number.MAX_SAFE_INTEGER }) as ReportData;

export class ReportReader {
  lines = 0;
  bad = 0;
  readonly records = { exchange: 0, violation: 0, decision: 0, capture: 0, other: 0 };
  private readonly fromLog = new ReportTables();
  private readonly fromCapture = new ReportTables();
  private readonly shadow = new WhatIfTally();
  private shadowSeen = false;
  private readonly enforced = new WhatIfTally();
  private enforcedSeen = false;
  private readonly replayed = new WhatIfTally();
  private readonly replayer: Replayer;
  /** Violations waiting for their exchange record (the proxy writes them just before it). */
  private readonly pending = new Map<string, LooseFinding[]>();
  /** A capture session's client, from its initialize. */
  private readonly clients = new Map<string, ClientInfo>();
  private captureClient: string | undefined;

  constructor(private readonly policy: Policy) {
    this.replayer = new Replayer(policy, { keepExchanges: false, maxBadLines: 0, onExchange: (x) => this.replay(x) });
  }

  /** `n` empty lines. */
  blanks(n: number): void {
    this.lines += n;
  }

  /** One line, without its line end. Never throws. */
  line(text: string): void {
    this.lines++;
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.bad++;
      return;
    }
    if (!isObject(value)) return void this.bad++;
    if ('v' in value && isObject(value.request) && isObject(value.response)) return void this.capture(value);
    switch (value.msg) {
      case 'exchange':
        return void this.exchange(value);
      case 'violation':
        return void this.violation(value);
      case 'passthrough':
        // MCP traffic the pass-through relayed unread counts against coverage; other paths do not.
        if (typeof value.unjudged === 'string') this.fromLog.passthrough(value.unjudged, timeOf(value.time));
        this.records.other++;
        return;
      case 'rewrite':
      case 'block':
        this.records.decision++;
        return;
      default:
        this.records.other++;
    }
  }

  /** A line too long to read (skipped whole). */
  oversize(): void {
    this.lines++;
    this.bad++;
  }

  private exchange(r: Record<string, unknown>): void {
    const method = str(r.method);
    const outcome = str(r.outcome);
    if (method === undefined || outcome === undefined) return void this.bad++;
    this.records.exchange++;
    const key = exchangeKey(r);
    const findings: ReportFinding[] = this.pending.get(key) ?? [];
    this.pending.delete(key);
    const verdict = r.verdict === 'rewrite' || r.verdict === 'block' ? r.verdict : undefined;
    const x: ReportExchange = {
      time: timeOf(r.time),
      method,
      tool: str(r.tool),
      session: str(r.session) ?? null,
      protocolVersion: str(r.protocolVersion) ?? null,
      client: clientLabel(str(r.clientName), str(r.clientVersion), str(r.userAgent)),
      outcome,
      status: num(r.status),
      durationMs: num(r.durationMs),
      verdict,
      findings,
      unjudged: str(r.unjudged),
    };
    this.fromLog.exchange(x);
    // Under audit each violation says what the shadow policy would do; under enforce, the verdict says what was done.
    this.shadow.add(whatIfOf(x, true));
    this.enforced.add(whatIfOf(x, false));
    if (verdict) this.enforcedSeen = true;
  }

  private violation(r: Record<string, unknown>): void {
    const rule = str(r.rule);
    if (rule === undefined || !SEVERITY.has(r.severity)) return void this.bad++;
    this.records.violation++;
    const shadow = action(r.shadow);
    if (shadow) this.shadowSeen = true;
    const f: LooseFinding = {
      rule,
      severity: r.severity as Severity,
      message: str(r.message) ?? '',
      evidence: str(r.evidence) ?? '',
      action: action(r.action),
      shadow,
      time: timeOf(r.time),
      method: str(r.method),
      tool: str(r.tool),
      session: str(r.session) ?? null,
      frameworkFix: str(r.frameworkFix),
    };
    // A POST as a whole or a stdio line has no exchange record; older logs say nothing (held, as the rest).
    if (r.on === 'post' || r.on === 'line') return void this.fromLog.loose(f);
    const key = exchangeKey(r);
    const list = this.pending.get(key);
    if (list) return void (list.length < PENDING_PER_KEY ? list.push(f) : this.fromLog.loose(f));
    if (this.pending.size >= PENDING_MAX) this.flushOldest();
    this.pending.set(key, [f]);
  }

  private flushOldest(): void {
    const [key, findings] = this.pending.entries().next().value as [string, LooseFinding[]];
    this.pending.delete(key);
    for (const f of findings) this.fromLog.loose(f);
  }

  private capture(r: Record<string, unknown>): void {
    this.records.capture++;
    const message = isObject(r.request) && isObject(r.request.message) ? r.request.message : {};
    const session = str(r.session) ?? '';
    const info = clientOf(str(message.method) ?? '', message.params, this.clients.get(session));
    if (info && str(message.method) === 'initialize') {
      if (this.clients.size >= SESSIONS_REMEMBERED) this.clients.delete(this.clients.keys().next().value as string);
      this.clients.set(session, info);
    }
    this.captureClient = clientLabel(info?.name, info?.version);
    const before = this.replayed.exchanges;
    this.replayer.value(r);
    if (this.replayed.exchanges === before) this.bad++;
  }

  /** A capture record as the replay judged it: the what-if, and the tables' source when no log was read. */
  private replay(x: ReplayedExchange): void {
    const time = timeOf(x.time);
    const d = x.decision;
    this.replayed.add({
      time,
      method: x.method,
      tool: x.tool,
      would: d.kind === 'pass' ? d : { kind: d.kind, rules: d.rules, before: d.kind === 'rewrite' ? d.before : undefined, after: d.after },
      actions: x.findings.map((f) => ({ rule: f.rule, action: f.action })),
    });
    this.fromCapture.exchange({
      time,
      method: x.method,
      tool: x.tool,
      session: x.session,
      protocolVersion: x.protocolVersion,
      client: this.captureClient,
      outcome: x.outcome,
      status: x.status ?? undefined,
      durationMs: undefined,
      verdict: undefined,
      findings: x.findings,
    });
  }

  /** The report: masked, with the what-if from the replay when a capture was read, else from the logged shadow decisions. */
  data(sources: string[], generatedAt = new Date()): ReportData {
    for (const findings of this.pending.values()) for (const f of findings) this.fromLog.loose(f);
    this.pending.clear();
    const fromLog = this.records.exchange > 0 || this.records.violation > 0;
    const tables = fromLog ? this.fromLog : this.fromCapture;
    const whatIf =
      this.replayed.exchanges > 0
        ? this.replayed.data('replay', this.policy.source)
        : this.shadowSeen
          ? this.shadow.data('shadow', null)
          : this.enforcedSeen
            ? this.enforced.data('enforced', null)
            : new WhatIfTally().data('none', null);
    return maskReport({
      v: 1,
      generatedAt: generatedAt.toISOString(),
      input: {
        sources,
        lines: this.lines,
        records: { ...this.records },
        bad: this.bad,
        tablesFrom: fromLog ? 'log' : this.records.capture > 0 ? 'capture' : 'none',
      },
      ...tables.data(),
      whatIf,
    });
  }
}
