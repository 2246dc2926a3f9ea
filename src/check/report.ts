// What `mcp-warden check` found: one result per probe, the versions the server speaks, whether it
// could be reached at all, and the exit code. Reporters (report-*.ts) turn it into text; they are
// pure: a report in, a string out, credentials masked (redactedReport).
import { FRAMEWORKS } from '../frameworks/frameworks.ts';
import type { Recognition } from '../frameworks/recognize.ts';
import type { Finding } from '../rules/types.ts';
import { maskShapes, redactText } from '../sinks/redact.ts';

/** A probe's verdict: `timeout` is a failure without an answer; `skip` a probe that did not apply or was not allowed. */
export type Verdict = 'pass' | 'warn' | 'fail' | 'timeout' | 'skip';

/**
 * A finding of a probe: what a rule finding says, without the rule's version list. `place`: where
 * it is, named to outlast a reordered list (a tool by its name, not its index), when that differs
 * from `pointer`; a baseline knows findings by it. `accepted`: listed in the --baseline given (it
 * fails nothing). `frameworkFix`: the fix in the server's framework, where its rule's explanation
 * has one (`<framework>: <fix>`).
 */
export type CheckFinding = Omit<Finding, 'versions'> & { place?: string; accepted?: true; frameworkFix?: string };

/** The request a probe sent, as a user can replay it (the user's own `--header` values left out). */
export interface SentRequest {
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

export interface ProbeResult {
  probe: string;
  title: string;
  /** The protocol version the probe ran under. */
  version: string | undefined;
  /** The catalogue rules the probe is aimed at (every rule judges every answer). */
  rules: readonly string[];
  verdict: Verdict;
  expected: string;
  got: string;
  /** The fix, in one line, when the verdict is not pass. */
  fix: string | undefined;
  findings: CheckFinding[];
  request: SentRequest | undefined;
  status: number | undefined;
  durationMs: number;
}

/** `no-mcp-endpoint`: the URL answers, but as nothing MCP answers (a web page, a 404 or 405 without JSON): a wrong path. */
export type Reach = 'ok' | 'unreachable' | 'needs-credentials' | 'no-mcp-endpoint';

export interface CheckReport {
  tool: { name: string; version: string };
  target: string;
  startedAt: string;
  durationMs: number;
  protocol: {
    /** `auto`, or the version given with --protocol. */
    requested: string;
    /** Versions the server showed it speaks (server/discover's supportedVersions, the version initialize negotiated). */
    spoken: string[];
    /** The version the probes ran under. */
    used: string | undefined;
    note: string | undefined;
  };
  server: { name: string | undefined; version: string | undefined } | undefined;
  /** What built the server, told by its serverInfo and its answers to the probes; undefined when nothing told. */
  framework?: Recognition;
  reach: { status: Reach; detail: string | undefined; challenge: string | undefined };
  probes: ProbeResult[];
  summary: Summary;
  exitCode: 0 | 1 | 2;
  /** With --baseline: the file, how many findings it accepted, and its entries no finding matched any more (fixed). */
  baseline?: { file: string; accepted: number; fixed: Array<{ probe: string; rule: string; pointer: string }> };
}

export interface Summary {
  probes: number;
  pass: number;
  warn: number;
  fail: number;
  timeout: number;
  skip: number;
  /** Findings of severity error, and of severity warning (with a baseline: those it does not list). */
  errors: number;
  warnings: number;
  /** With a baseline: the findings it accepted. */
  accepted?: number;
}

/** The verdict of an answered probe: the worst severity among its findings. */
export function verdictOf(findings: readonly CheckFinding[]): Verdict {
  if (findings.some((f) => f.severity === 'error')) return 'fail';
  if (findings.some((f) => f.severity === 'warning')) return 'warn';
  return 'pass';
}

export function summarize(probes: readonly ProbeResult[]): Summary {
  const count = (v: Verdict): number => probes.filter((p) => p.verdict === v).length;
  const findings = probes.flatMap((p) => p.findings);
  return {
    probes: probes.length,
    pass: count('pass'),
    warn: count('warn'),
    fail: count('fail'),
    timeout: count('timeout'),
    skip: count('skip'),
    errors: findings.filter((f) => f.severity === 'error').length,
    warnings: findings.filter((f) => f.severity === 'warning').length,
  };
}

/** 2: the server could not be reached, wants credentials, or the URL is no MCP endpoint; 1: an error-severity finding (or a timeout); 0 otherwise. */
export function exitCodeOf(reach: Reach, summary: Summary): 0 | 1 | 2 {
  if (reach !== 'ok') return 2;
  // A failed or timed-out probe always has an error-severity finding (a timeout is the probe's own).
  return summary.errors > 0 ? 1 : 0;
}

/**
 * The report as every reporter prints it: credential-shaped text masked in every string (a
 * server's error text in got and evidence, a challenge, a URL). By shape only: the report's own
 * keys are no credentials (`pass` counts probes).
 */
export const redactedReport = (r: CheckReport): CheckReport => maskShapes(r);

/** What built the server, for people: its name, how sure, and the sign that told it. */
export const frameworkLine = (f: Recognition): string => `${FRAMEWORKS[f.framework].label} (${f.confidence}: ${f.because})`;

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The one summary line every format ends with. */
export function summaryLine(r: CheckReport): string {
  // The server's words are masked here; the hint after them is the line's own.
  if (r.reach.status === 'needs-credentials') {
    return `needs credentials: ${redactText(r.reach.detail ?? 'HTTP 401')}${r.reach.challenge ? ` (WWW-Authenticate: ${redactText(r.reach.challenge)})` : ''}; pass them with --header 'Authorization: Bearer ...' (exit 2)`;
  }
  if (r.reach.status === 'no-mcp-endpoint')
    return `no MCP endpoint at ${redactText(r.target)}: ${redactText(r.reach.detail ?? 'not an MCP answer')}; check the path (for example /mcp) (exit 2)`;
  if (r.reach.status === 'unreachable')
    return `could not reach ${redactText(r.target)}: ${redactText(r.reach.detail ?? 'no answer')} (exit 2)`;
  const s = r.summary;
  const parts = [`${s.pass} pass`, `${s.warn} warn`, `${s.fail} fail`];
  if (s.timeout > 0) parts.push(`${s.timeout} timeout`);
  parts.push(`${s.skip} skip`);
  const under = r.protocol.used ? ` under ${r.protocol.used}` : '';
  const accepted = s.accepted === undefined ? '' : `, ${s.accepted} accepted by the baseline`;
  return `${plural(s.probes, 'probe')}${under}: ${parts.join(', ')}; ${plural(s.errors, 'error')}, ${plural(s.warnings, 'warning')}${accepted} (exit ${r.exitCode})`;
}
