// The report's tables, filled one exchange at a time in bounded memory: totals, methods, rules
// with a few examples, tools, sessions, clients, versions, the timeline and the worst exchanges.
import { BoundedTally } from './tally.ts';
import { UNJUDGED_REASONS } from '../engine/coverage.ts';
import { ruleDocs, ruleFix } from '../rules/explain.ts';
import { Timeline } from './timeline.ts';
import {
  isErrorOutcome,
  isoOrNull as iso,
  SEVERITIES,
  type Action,
  type CountRow,
  type LooseFinding,
  type ReportData,
  type ReportExchange,
  type ReportFinding,
  type Severity,
} from './model.ts';

/** How many rows a table shows, and how many keys it tracks (a peer chooses the keys). */
const TABLE_ROWS = 50;
const TRACKED_KEYS = 5000;
const EXAMPLES_PER_RULE = 3;
/** Rules tracked at most (a log from elsewhere may name any): the catalogue has ~60. */
const TRACKED_RULES = 1000;
const WORST = 20;

const countRow = (key: string): CountRow => ({ key, exchanges: 0, errors: 0, findings: 0, example: null });
const byFindings = (r: CountRow): number => r.findings * 1e6 + r.exchanges;

interface RuleRow {
  rule: string;
  severity: Severity;
  count: number;
  actions: Partial<Record<Action, number>>;
  examples: ReportData['rules'][number]['examples'];
  frameworkFixes: string[];
}

interface SessionRow extends CountRow {
  client: string | null;
  protocolVersion: string | null;
  first: number | undefined;
  last: number | undefined;
}

/** The highest severity among an exchange's findings, as a rank (0: none, 3: error). */
const rank = (x: ReportExchange): number => x.findings.reduce((r, f) => Math.max(r, 3 - SEVERITIES.indexOf(f.severity)), 0);

/** Severity first, then how many findings, then a failed outcome, then duration. */
function worseThan(a: ReportExchange, b: ReportExchange): boolean {
  return (
    (rank(a) - rank(b) ||
      a.findings.length - b.findings.length ||
      Number(isErrorOutcome(a.outcome)) - Number(isErrorOutcome(b.outcome)) ||
      (a.durationMs ?? 0) - (b.durationMs ?? 0)) > 0
  );
}

export class ReportTables {
  exchanges = 0;
  private flagged = 0;
  private errors = 0;
  private readonly findings: Record<Severity, number> = { error: 0, warning: 0, info: 0 };
  private readonly verdicts = { rewrite: 0, block: 0 };
  /** Exchanges not judged in full, by reason (a closed list: UNJUDGED_REASONS). */
  private readonly unjudged: Record<string, number> = {};
  private passedUnjudged = 0;
  private first: number | undefined;
  private last: number | undefined;
  private readonly timeline = new Timeline();
  private readonly rules = new BoundedTally<RuleRow>(
    TRACKED_RULES,
    (rule) => ({ rule, severity: 'info', count: 0, actions: {}, examples: [], frameworkFixes: [] }),
    (r) => r.count,
  );
  private readonly methods = new BoundedTally(TRACKED_KEYS, countRow, (r) => r.exchanges);
  private readonly tools = new BoundedTally(TRACKED_KEYS, (key) => ({ ...countRow(key), rewritten: 0, blocked: 0 }), byFindings);
  private readonly clients = new BoundedTally(TRACKED_KEYS, countRow, byFindings);
  private readonly versions = new BoundedTally(TRACKED_KEYS, countRow, (r) => r.exchanges);
  private readonly sessions = new BoundedTally<SessionRow>(
    TRACKED_KEYS,
    (key) => ({ ...countRow(key), client: null, protocolVersion: null, first: undefined, last: undefined }),
    byFindings,
  );
  private readonly worst: ReportExchange[] = [];

  exchange(x: ReportExchange): void {
    this.exchanges++;
    if (x.unjudged !== undefined) this.countUnjudged(x.unjudged);
    const failed = isErrorOutcome(x.outcome);
    if (failed) this.errors++;
    if (x.findings.length > 0) this.flagged++;
    if (x.verdict) this.verdicts[x.verdict]++;
    this.seen(x.time);
    if (x.time !== undefined) this.timeline.exchange(x.time);
    const count = (row: CountRow) => {
      row.exchanges++;
      if (failed) row.errors++;
      row.findings += x.findings.length;
      if (row.example === null && x.findings[0]) row.example = `${x.findings[0].rule}: ${x.findings[0].message}`;
    };
    count(this.methods.row(x.method));
    if (x.tool !== undefined) {
      const tool = this.tools.row(x.tool);
      count(tool);
      if (x.verdict === 'rewrite') tool.rewritten++;
      if (x.verdict === 'block') tool.blocked++;
    }
    count(this.clients.row(x.client ?? '(unknown)'));
    count(this.versions.row(x.protocolVersion ?? '(unknown)'));
    if (x.session !== null) {
      const session = this.sessions.row(x.session);
      count(session);
      session.client = x.client ?? session.client;
      session.protocolVersion = x.protocolVersion ?? session.protocolVersion;
      if (x.time !== undefined) {
        session.first = Math.min(session.first ?? x.time, x.time);
        session.last = Math.max(session.last ?? x.time, x.time);
      }
    }
    for (const f of x.findings) this.finding(f, x.time, x.method, x.tool);
    this.keepIfWorst(x);
  }

  /** A finding on no exchange (a whole POST, a stream): counted by rule, severity and time. */
  loose(f: LooseFinding): void {
    this.seen(f.time);
    this.finding(f, f.time, f.method, f.tool);
  }

  private seen(time: number | undefined): void {
    if (time === undefined) return;
    this.first = Math.min(this.first ?? time, time);
    this.last = Math.max(this.last ?? time, time);
  }

  private finding(f: ReportFinding, time: number | undefined, method: string | undefined, tool: string | undefined): void {
    this.findings[f.severity]++;
    if (time !== undefined) this.timeline.finding(time, f.severity);
    const row = this.rules.row(f.rule);
    if (row.count++ === 0) row.severity = f.severity;
    if (f.action) row.actions[f.action] = (row.actions[f.action] ?? 0) + 1;
    if (f.frameworkFix && row.frameworkFixes.length < EXAMPLES_PER_RULE && !row.frameworkFixes.includes(f.frameworkFix))
      row.frameworkFixes.push(f.frameworkFix);
    if (row.examples.length < EXAMPLES_PER_RULE && !row.examples.some((e) => e.message === f.message))
      row.examples.push({ time: iso(time), method: method ?? null, tool: tool ?? null, message: f.message, evidence: f.evidence });
  }

  private keepIfWorst(x: ReportExchange): void {
    if (x.findings.length === 0 && !isErrorOutcome(x.outcome)) return;
    if (this.worst.length === WORST && !worseThan(x, this.worst[WORST - 1]!)) return;
    let at = this.worst.findIndex((w) => worseThan(x, w));
    if (at === -1) at = this.worst.length;
    this.worst.splice(at, 0, x);
    if (this.worst.length > WORST) this.worst.pop();
  }

  /** MCP traffic the pass-through relayed unjudged (it has no exchange record). */
  passthrough(reason: string, time: number | undefined): void {
    this.passedUnjudged++;
    this.countUnjudged(reason);
    this.seen(time);
  }

  private countUnjudged(reason: string): void {
    // Reasons are the proxy's closed list; a forged record's own word folds into "other".
    const key = (UNJUDGED_REASONS as readonly string[]).includes(reason) ? reason : 'other';
    this.unjudged[key] = (this.unjudged[key] ?? 0) + 1;
  }

  data(): Pick<
    ReportData,
    'summary' | 'methods' | 'timeline' | 'rules' | 'tools' | 'sessions' | 'clients' | 'versions' | 'worst' | 'dropped'
  > {
    const plain = <T extends CountRow>({ key, exchanges, errors, findings, example }: T): CountRow => ({
      key,
      exchanges,
      errors,
      findings,
      example,
    });
    return {
      summary: {
        exchanges: this.exchanges,
        flagged: this.flagged,
        findings: { ...this.findings },
        errors: this.errors,
        verdicts: { ...this.verdicts },
        coverage: {
          judged: this.exchanges - Object.values(this.unjudged).reduce((a, b) => a + b, 0) + this.passedUnjudged,
          of: this.exchanges + this.passedUnjudged,
          unjudged: { ...this.unjudged },
        },
        first: iso(this.first),
        last: iso(this.last),
      },
      methods: this.methods.top(TABLE_ROWS).map((r) => ({ ...plain(r), errorShare: r.exchanges === 0 ? 0 : r.errors / r.exchanges })),
      timeline: this.timeline.data(),
      rules: this.rules
        .top(TRACKED_RULES)
        .sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity) || b.count - a.count)
        .map((r) => ({ ...r, fix: ruleFix(r.rule) ?? null, docs: ruleDocs(r.rule) ?? null })),
      tools: this.tools.top(TABLE_ROWS).map((r) => ({ ...plain(r), rewritten: r.rewritten, blocked: r.blocked })),
      sessions: this.sessions.top(TABLE_ROWS).map((r) => ({
        ...plain(r),
        client: r.client,
        protocolVersion: r.protocolVersion,
        first: iso(r.first),
        last: iso(r.last),
      })),
      clients: this.clients.top(TABLE_ROWS).map(plain),
      versions: this.versions.top(TABLE_ROWS).map((r) => ({ version: r.key, exchanges: r.exchanges })),
      worst: this.worst.map((x) => ({
        time: iso(x.time),
        method: x.method,
        tool: x.tool ?? null,
        session: x.session,
        client: x.client ?? null,
        outcome: x.outcome,
        status: x.status ?? null,
        findings: x.findings.map(({ rule, severity, message }) => ({ rule, severity, message, docs: ruleDocs(rule) ?? null })),
      })),
      dropped: {
        sessions: this.sessions.dropped,
        tools: this.tools.dropped,
        clients: this.clients.dropped,
        methods: this.methods.dropped,
        versions: this.versions.dropped,
        rules: this.rules.dropped,
      },
    };
  }
}
