// What the live proxy judged (its log records) and what a replay of its capture judged, in one
// comparable form: per exchange (method and id), each finding's rule, pointer and action, and each
// rewrite or block with the rules that made it. Only the rules a replay judges are compared (its
// coverage: not the POST-level rules, nor the client's request rules).
import type { ReplayReport } from '../../src/replay/replay.ts';
import type { LogRecord } from './log-capture.ts';

export interface Judgements {
  findings: string[];
  decisions: string[];
}

const where = (method: unknown, id: unknown): string => `${String(method)} ${JSON.stringify(id)}`;
const decision = (at: string, kind: string, rules: readonly unknown[]): string =>
  `${at} ${kind} by ${[...rules].map(String).sort().join(',')}`;

/** What the proxy logged about the exchanges it judged (violations on an exchange's answer, rewrites and blocks). */
export function liveJudgements(records: readonly LogRecord[], judged: ReadonlySet<string>): Judgements {
  const findings = records
    .filter((r) => r.msg === 'violation' && r.on === 'exchange' && judged.has(String(r.rule)))
    .map((r) => `${where(r.method, r.id)} ${String(r.rule)} at ${String(r.pointer)}: ${String(r.action)}`);
  const decisions = records
    .filter((r) => (r.msg === 'rewrite' || r.msg === 'block') && Array.isArray(r.rules) && r.rules.every((x) => judged.has(String(x))))
    .map((r) => decision(where(r.method, r.id), String(r.msg), r.rules as unknown[]));
  return { findings: findings.sort(), decisions: decisions.sort() };
}

/** What a replay (with its exchanges kept) judged, in the same form. */
export function replayedJudgements(report: ReplayReport): Judgements {
  const judged = new Set(report.coverage.judged.rules);
  const findings = report.exchanges.flatMap((x) =>
    x.findings.filter((f) => judged.has(f.rule)).map((f) => `${where(x.method, x.id)} ${f.rule} at ${f.pointer}: ${f.action}`),
  );
  const decisions = report.exchanges
    .filter((x) => x.decision.kind !== 'pass' && x.decision.rules.every((r) => judged.has(r)))
    .map((x) => (x.decision.kind === 'pass' ? '' : decision(where(x.method, x.id), x.decision.kind, x.decision.rules)));
  return { findings: findings.sort(), decisions: decisions.sort() };
}
