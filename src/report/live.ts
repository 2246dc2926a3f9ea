// The report of the running proxy (the admin port's /report and /report.json): the exchanges and
// loose findings of the last hour, at most the newest `max` of each, in fixed rings; the tables
// are built from them on request. Fed by sinks/judged.ts only when the admin port is on. What a
// peer sends is bounded before it is kept (LIVE_REPORT_BOUNDS): each string cut to `stringChars`,
// the rings together under `ringBytes`, so no traffic can grow the report without end.
import { LIVE_REPORT_BOUNDS } from '../config/defaults.ts';
import { clip, clipOptional } from '../util/clip.ts';
import { peerText, peerValue } from '../redact/peer.ts';
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

/** The newest `size` items, oldest first, with the bytes each holds; a full ring overwrites its oldest. */
class Ring<T> {
  private readonly items: Array<{ item: T; bytes: number } | undefined>;
  private next = 0;
  private count = 0;
  /** What the items hold together (the estimate each was pushed with). */
  bytes = 0;

  constructor(private readonly size: number) {
    this.items = new Array<{ item: T; bytes: number } | undefined>(size);
  }

  push(item: T, bytes: number): void {
    if (this.count === this.size) this.dropOldest();
    this.items[this.next] = { item, bytes };
    this.bytes += bytes;
    this.next = (this.next + 1) % this.size;
    this.count++;
  }

  dropOldest(): void {
    const i = (this.next - this.count + this.size) % this.size;
    this.bytes -= this.items[i]?.bytes ?? 0;
    this.items[i] = undefined;
    this.count--;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.count; i++) yield this.items[(this.next - this.count + i + this.size) % this.size]!.item;
  }
}

/** Bytes a kept string holds (UTF-16), and a fixed cost per object for its fields and header. */
const textBytes = (...values: Array<string | null | undefined>) => values.reduce((n, v) => n + 2 * (v?.length ?? 0), 0);
const OBJECT_BYTES = 160;
const findingBytes = (f: ReportFinding) => OBJECT_BYTES + textBytes(f.rule, f.message, f.evidence, f.action, f.shadow);

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
    private readonly bounds: { stringChars: number; ringBytes: number } = LIVE_REPORT_BOUNDS,
  ) {
    this.exchanges = new Ring(max);
    this.loose = new Ring(max);
    this.passed = new Ring(max);
  }

  /** A judged exchange, under `policy` (its mode says whether `shadow` applies). */
  exchange(judged: JudgedExchange, status: number | undefined, policy: Policy, shadow: Policy | undefined, unjudged?: string): void {
    const { request } = judged.exchange;
    const n = this.bounds.stringChars;
    const where: FindingContext = {
      method: request.method,
      id: request.id,
      tool: request.tool,
      session: request.sessionId,
      protocolVersion: request.protocolVersion,
    };
    const underShadow = policy.mode === 'audit' ? shadow : undefined;
    const d = judged.decision;
    const exchange: ReportExchange = {
      time: this.now(),
      method: peerText(request.method, n),
      tool: peerValue(request.tool, n),
      session: clipOptional(request.sessionId ?? null, n),
      protocolVersion: peerValue(request.protocolVersion ?? null, n),
      client: peerValue(clientLabel(request.client?.name, request.client?.version, userAgentOf(request.headers)), n),
      outcome: judged.exchange.outcome,
      status,
      durationMs: judged.exchange.durationMs,
      verdict: d.kind === 'mutate' ? 'rewrite' : d.kind === 'reject' ? 'block' : undefined,
      // As its record counts them (`violations`): the request's findings, then the answer's.
      findings: [...request.verdict.findings, ...judged.findings].map((f) => finding(f, where, underShadow, n)),
      unjudged,
    };
    const bytes =
      OBJECT_BYTES +
      textBytes(exchange.method, exchange.tool, exchange.session, exchange.protocolVersion, exchange.client, exchange.outcome, unjudged) +
      exchange.findings.reduce((sum, f) => sum + findingBytes(f), 0);
    this.exchanges.push({ exchange, shadow: underShadow }, bytes);
    this.trim();
  }

  /** Past the byte budget, the ring holding the most drops its oldest until the rings fit. */
  private trim(): void {
    const rings = [this.exchanges, this.loose, this.passed];
    while (rings.reduce((sum, r) => sum + r.bytes, 0) > this.bounds.ringBytes) {
      const largest = rings.reduce((a, b) => (b.bytes > a.bytes ? b : a));
      largest.dropOldest();
    }
  }

  /** MCP traffic the pass-through relayed unjudged (`scope.passthrough`, a JSON POST too large to sniff). */
  passthrough(reason: string): void {
    this.passed.push({ time: this.now(), reason }, OBJECT_BYTES + textBytes(reason));
    this.trim();
  }

  /** Findings on no exchange (a whole POST, a stdio line). */
  findings(findings: readonly PolicedFinding[], where: FindingContext): void {
    const time = this.now();
    const n = this.bounds.stringChars;
    const [method, tool, session] = [peerValue(where.method, n), peerValue(where.tool, n), clipOptional(where.session ?? null, n)];
    for (const f of findings) {
      const kept = finding(f, where, undefined, n);
      this.loose.push({ ...kept, time, method, tool, session }, findingBytes(kept) + textBytes(method, tool, session));
    }
    this.trim();
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

function finding(f: PolicedFinding, where: FindingContext, shadow: Policy | undefined, n: number): ReportFinding {
  return {
    rule: f.rule,
    severity: f.severity,
    message: clip(f.message, n),
    evidence: clip(f.evidence, n),
    action: f.action,
    shadow: shadow ? shadowAction(shadow, f, where) : undefined,
  };
}
