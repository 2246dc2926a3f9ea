// What a report is made of: the exchanges and findings read from a log, a capture or the live
// proxy, in one shape, and the data a report holds (what `/report.json` and `report --format json`
// print, and what the HTML page draws). Field names are an interface: scripts read report.json.
import type { Action, Severity } from '../verdicts.ts';

export type { Action, Severity };

/** What a policy would do with an exchange's answer. */
export type WouldDo = 'pass' | 'rewrite' | 'block';

export interface ReportFinding {
  rule: string;
  severity: Severity;
  message: string;
  evidence: string;
  /** The action under the policy in force when it was found (a replay's: the replayed policy's). */
  action?: Action;
  /** Under audit, what the shadow policy would have done. */
  shadow?: Action;
  /** The fix in the server's framework, as the violation record carried it. */
  frameworkFix?: string;
}

/** One exchange, with what was found on it. */
export interface ReportExchange {
  /** Epoch milliseconds; undefined when the record had no readable time. */
  time: number | undefined;
  method: string;
  tool: string | undefined;
  session: string | null;
  protocolVersion: string | null;
  /** `clientName clientVersion`, else the User-Agent; undefined when unknown. */
  client: string | undefined;
  outcome: string;
  status: number | undefined;
  durationMs: number | undefined;
  /** What the policy in force did (rewrite or block), when it changed the answer. */
  verdict: 'rewrite' | 'block' | undefined;
  findings: ReportFinding[];
  /** Why it was not judged in full (the record's `unjudged`), when it was not. */
  unjudged?: string;
}

/** A finding that belongs to no exchange record (a whole POST, a stream, a line). */
export interface LooseFinding extends ReportFinding {
  time: number | undefined;
  method: string | undefined;
  tool: string | undefined;
  session: string | null;
}

/** What a policy would have changed: replayed from a capture, or the shadow decisions the proxy logged. */
export interface WhatIfExchange {
  time: number | undefined;
  method: string;
  tool: string | undefined;
  would: WhatIfDecision;
  /** Each finding's rule and its action under that policy. */
  actions: Array<{ rule: string; action: Action }>;
}

export type WhatIfDecision = { kind: 'pass' } | { kind: 'rewrite' | 'block'; rules: string[]; before?: string; after?: string };

/** A time as the report prints it (ISO 8601), or null when the record had none. */
export const isoOrNull = (time: number | undefined): string | null => (time === undefined ? null : new Date(time).toISOString());

/** An error outcome: the request failed, as a request or as a tool call, or got no answer that could be read. */
export const isErrorOutcome = (outcome: string): boolean =>
  outcome === 'isError' || outcome.startsWith('error:') || outcome === 'no-response' || outcome === 'invalid-response';

export const SEVERITIES: readonly Severity[] = ['error', 'warning', 'info'];

export interface CountRow {
  key: string;
  exchanges: number;
  errors: number;
  findings: number;
  /** The first finding seen under this key (`rule: message`, masked), or null. */
  example: string | null;
}

export interface ReportData {
  /** Version of this shape; a change to a field's meaning bumps it. */
  v: 1;
  generatedAt: string;
  /** What was read: files, lines, records of each kind, lines that could not be read. */
  input: {
    sources: string[];
    lines: number;
    records: { exchange: number; violation: number; decision: number; capture: number; other: number };
    bad: number;
    /** Where the tables come from: exchange log records, or the replay of captures when no log record was read. */
    tablesFrom: 'log' | 'capture' | 'live' | 'none';
    window?: { from: string; to: string; maxExchanges: number };
  };
  summary: {
    exchanges: number;
    /** Exchanges with at least one finding. */
    flagged: number;
    findings: Record<Severity, number>;
    errors: number;
    verdicts: { rewrite: number; block: number };
    /** Coverage: MCP exchanges judged in full, of all relayed (pass-throughs of MCP traffic included), and why the rest were not. */
    coverage: { judged: number; of: number; unjudged: Record<string, number> };
    first: string | null;
    last: string | null;
  };
  /** Exchanges and error share per method, most used first. */
  methods: Array<CountRow & { errorShare: number }>;
  timeline: { start: number; bucketMs: number; exchanges: number[]; findings: Record<Severity, number[]> };
  rules: Array<{
    rule: string;
    severity: Severity;
    count: number;
    actions: Partial<Record<Action, number>>;
    examples: Array<{ time: string | null; method: string | null; tool: string | null; message: string; evidence: string }>;
    /** What to change (the rule's explanation), null for a rule this version does not know. */
    fix: string | null;
    /** The rule's section of docs/rules.md (`docs/rules.md#<rule-id>`, as an absolute URL), null for a rule this version does not know. */
    docs: string | null;
    /** The fixes in the servers' frameworks its findings carried (the first few distinct ones). */
    frameworkFixes: string[];
  }>;
  tools: Array<CountRow & { rewritten: number; blocked: number }>;
  sessions: Array<CountRow & { client: string | null; protocolVersion: string | null; first: string | null; last: string | null }>;
  clients: CountRow[];
  versions: Array<{ version: string; exchanges: number }>;
  worst: Array<{
    time: string | null;
    method: string;
    tool: string | null;
    session: string | null;
    client: string | null;
    outcome: string;
    status: number | null;
    findings: Array<{ rule: string; severity: Severity; message: string; docs: string | null }>;
  }>;
  whatIf: {
    /** replay: captures replayed under a policy; shadow: the shadow decisions logged under audit; enforced: what the policy in force changed. */
    source: 'replay' | 'shadow' | 'enforced' | 'none';
    /** The policy it describes: the replayed one, or the shadow policy (when known). */
    policy: string | null;
    exchanges: number;
    decisions: Record<WouldDo, number>;
    byRule: Array<{ rule: string; actions: Partial<Record<Action, number>> }>;
    examples: Array<{
      time: string | null;
      method: string;
      tool: string | null;
      kind: 'rewrite' | 'block';
      rules: string[];
      before: string | null;
      after: string | null;
    }>;
  };
  /** Keys dropped from a table when it was full (its counts are then lower bounds). */
  dropped: { sessions: number; tools: number; clients: number; methods: number; versions: number; rules: number };
}
