// The report of the running proxy (the admin port's /report and /report.json): the exchanges and
// loose findings of the last hour, at most the newest `max` of each, in fixed rings; the tables
// are built from them on request. Fed by sinks/judged.ts only when the admin port is on.
import type { JudgedExchange, FindingContext } from '../engine/plans.ts';
import type { Policy } from '../config/types.ts';
import type { PolicedFinding } from '../verdicts.ts';
import { shadowAction } from '../sinks/shadow.ts';
import { userAgentOf } from '../sinks/exchange-log.ts';
import { clientLabel, maskReport } from './reader.ts';
import type { LooseFinding, ReportData, ReportExchange, ReportFinding } from './model.ts';
import { ReportTables } from './tables.ts';
import { whatIfOf, WhatIfTally } from './what-if.ts';

const LIVE_WINDOW_MS = 60 * 60 * 1000;
const LIVE_MAX = 10_000;

/** The newest `size` items, oldest first; a full ring overwrites its oldest. */
class Ring<T> {
  private readonly items: Array<T | undefined>;
  private next = 0;
  private count = 0;

  constructor(private readonly size: number) {
    this.items = new Array<T | undefined>(size);
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.size;
    this.count = Math.min(this.count + 1, this.size);
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.count; i++) yield this.items[(this.next - this.count + i + this.size) % this.size]!;
  }
}

interface LiveExchange {
  exchange: ReportExchange;
  /** Under audit with a shadow policy: what it would do with each finding. */
  shadow: Policy | undefined;
}

export class LiveReport {
  private readonly exchanges: Ring<LiveExchange>;
  private readonly loose: Ring<LooseFinding>;
  private readonly passed: Ring<{ time: number; reason: string }>;

  constructor(
    private readonly windowMs = LIVE_WINDOW_MS,
    private readonly max = LIVE_MAX,
    private readonly now: () => number = Date.now,
  ) {
    this.exchanges = new Ring(max);
    this.loose = new Ring(max);
    this.passed = new Ring(max);
  }

  /** A judged exchange, under `policy` (its mode says whether `shadow` applies). */
  exchange(judged: JudgedExchange, status: number | undefined, policy: Policy, shadow: Policy | undefined, unjudged?: string): void {
    const { request } = judged.exchange;
    const where: FindingContext = {
      method: request.method,
      id: request.id,
      tool: request.tool,
      session: request.sessionId,
      protocolVersion: request.protocolVersion,
    };
    const underShadow = policy.mode === 'audit' ? shadow : undefined;
    const d = judged.decision;
    this.exchanges.push({
      exchange: {
        time: this.now(),
        method: request.method,
        tool: request.tool,
        session: request.sessionId ?? null,
        protocolVersion: request.protocolVersion ?? null,
        client: clientLabel(request.client?.name, request.client?.version, userAgentOf(request.headers)),
        outcome: judged.exchange.outcome,
        status,
        durationMs: judged.exchange.durationMs,
        verdict: d.kind === 'mutate' ? 'rewrite' : d.kind === 'reject' ? 'block' : undefined,
        // As its record counts them (`violations`): the request's findings, then the answer's.
        findings: [...request.verdict.findings, ...judged.findings].map((f) => finding(f, where, underShadow)),
        unjudged,
      },
      shadow: underShadow,
    });
  }

  /** MCP traffic the pass-through relayed unjudged (`scope.passthrough`, a JSON POST too large to sniff). */
  passthrough(reason: string): void {
    this.passed.push({ time: this.now(), reason });
  }

  /** Findings on no exchange (a whole POST, a stdio line). */
  findings(findings: readonly PolicedFinding[], where: FindingContext): void {
    const time = this.now();
    for (const f of findings)
      this.loose.push({ ...finding(f, where, undefined), time, method: where.method, tool: where.tool, session: where.session ?? null });
  }

  data(): ReportData {
    const to = this.now();
    const from = to - this.windowMs;
    const tables = new ReportTables();
    const whatIf = new WhatIfTally();
    let shadowSource: string | undefined;
    let enforced = false;
    for (const { exchange: x, shadow } of this.exchanges) {
      if ((x.time ?? 0) < from) continue;
      tables.exchange(x);
      if (shadow) shadowSource = shadow.source;
      if (x.verdict) enforced = true;
      whatIf.add(whatIfOf(x, shadow !== undefined));
    }
    for (const f of this.loose) if ((f.time ?? 0) >= from) tables.loose(f);
    for (const p of this.passed) if (p.time >= from) tables.passthrough(p.reason, p.time);
    return maskReport({
      v: 1,
      generatedAt: new Date(to).toISOString(),
      input: {
        sources: [],
        lines: 0,
        records: { exchange: tables.exchanges, violation: 0, decision: 0, capture: 0, other: 0 },
        bad: 0,
        tablesFrom: 'live',
        window: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), maxExchanges: this.max },
      },
      ...tables.data(),
      whatIf: shadowSource ? whatIf.data('shadow', shadowSource) : enforced ? whatIf.data('enforced', null) : whatIf.data('none', null),
    });
  }
}

function finding(f: PolicedFinding, where: FindingContext, shadow: Policy | undefined): ReportFinding {
  return {
    rule: f.rule,
    severity: f.severity,
    message: f.message,
    evidence: f.evidence,
    action: f.action,
    shadow: shadow ? shadowAction(shadow, f, where) : undefined,
  };
}
