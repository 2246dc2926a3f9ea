// deploy/prometheus/alerts.yaml and its unit tests, read for the tests that keep docs/operations.md's
// "What to alert on" table equal to them and every metric they name documented.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const PROMETHEUS = new URL('../../deploy/prometheus/', import.meta.url);

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string };
}

export const ALERTS_FILE = new URL('alerts.yaml', PROMETHEUS);
export const ALERTS_TEST_FILE = new URL('alerts.test.yaml', PROMETHEUS);

/** Every alert of alerts.yaml, in its order. */
export function alertRules(): AlertRule[] {
  const doc = parse(readFileSync(ALERTS_FILE, 'utf8')) as { groups: Array<{ rules: AlertRule[] }> };
  return doc.groups.flatMap((g) => g.rules);
}

/** The alerts alerts.test.yaml expects to fire somewhere. */
export function alertsTestedFiring(): Set<string> {
  const doc = parse(readFileSync(ALERTS_TEST_FILE, 'utf8')) as {
    tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts?: unknown[] }> }>;
  };
  return new Set(
    doc.tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => (a.exp_alerts ?? []).length > 0).map((a) => a.alertname)),
  );
}

/** The metric names an expression reads. */
export const metricsIn = (expr: string): string[] => [...new Set(expr.match(/\b(?:mcp_warden|nodejs|process)_[a-z0-9_]+\b/g) ?? [])];

const cell = (text: string) => text.replace(/\s+/g, ' ').trim().replace(/\|/g, '\\|');

/** docs/operations.md's `alerts` block: one row per alert. */
export function alertsTable(rules: readonly AlertRule[]): string {
  return [
    '| alert | severity | fires when | for | what it means |',
    '|---|---|---|---|---|',
    ...rules.map(
      (r) => `| \`${r.alert}\` | ${r.labels.severity} | \`${cell(r.expr)}\` | ${r.for ?? 'at once'} | ${cell(r.annotations.description)} |`,
    ),
  ].join('\n');
}
