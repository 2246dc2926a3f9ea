// What a replay reports (the shape `mcp-warden replay --format json` prints and the library
// returns), and which rules a replay can judge at all.
import type { JsonRpcId } from '../codec/jsonrpc.ts';
import type { Limits } from '../config/defaults.ts';
import type { Sender } from '../exchange/table.ts';
import type { Action, Mode } from '../config/types.ts';
import type { ResponseMessage } from '../rewrite/types.ts';
import type { Rule, Severity } from '../rules/types.ts';

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
    /** Bad lines that are the proxy's log records (an exchange log given where a capture belongs). */
    logRecords: number;
  };
  /** The first bad lines (at most `maxBadLines`); `lines.bad` counts them all. */
  badLines: BadLine[];
  /** Distinct sessions seen (the anonymous one counts once; counted up to 100,000, then a lower bound). */
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
  /** Rules that threw (a bug in the rule; the proxy logs and skips them too): the first `maxBadLines`. */
  ruleErrors: Array<{ line: number; rule: string; error: string }>;
}

export interface ReplayOptions {
  /** Bounds of the rebuilt state (the proxy's defaults unless given): sessions kept, tools per session. */
  limits?: Partial<Pick<Limits, 'maxSessions' | 'maxOpenRequests' | 'maxToolsPerSession'>>;
  /** Bad lines kept with their reason (default 100); all are counted. */
  maxBadLines?: number;
  /** Called with each replayed exchange as it is judged (a report over a large capture reads them as they come). */
  onExchange?: (exchange: ReplayedExchange) => void;
  /** Whether the report lists every exchange (default true); false keeps memory bounded: only the counts grow. */
  keepExchanges?: boolean;
}

/** Which rules a replay judges and which it cannot, for a rule catalogue. */
export function replayCoverage(rules: readonly Rule[]): ReplayCoverage {
  const ids = (pred: (r: Rule) => boolean): string[] => rules.filter(pred).map((r) => r.id);
  return {
    judged: {
      what: "the server's exchange rules: each captured request with what answered it (or did not)",
      rules: ids((r) => r.subject === 'exchange' && r.party === 'server'),
    },
    notJudged: [
      {
        what: 'POST-level rules',
        why: "they judge a whole HTTP POST (its raw body, the reply's headers and bytes), which the capture does not keep",
        rules: ids((r) => r.subject === 'post'),
      },
      {
        what: "the client's request rules",
        why: 'they compare a request with its own headers and arguments, which the capture masks, or with the requests in flight beside it, which a capture of completed exchanges does not show',
        rules: ids((r) => r.subject === 'exchange' && r.party === 'client'),
      },
      {
        what: "stdio's framing rules",
        why: 'they judge the lines a child wrote to its stdout, and a capture keeps messages, not lines',
        rules: ids((r) => r.subject === 'line'),
      },
    ],
  };
}
