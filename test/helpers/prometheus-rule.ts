// The PrometheusRule deploy/kubernetes ships: the Prometheus rules file deploy/prometheus/alerts.yaml
// as the prometheus-operator's resource, generated from it so the two never drift.
// test/slow/deploy-kubernetes.test.ts keeps the committed file equal to what this prints, once the
// rules file exists. Regenerate (then list the file in base/kustomization.yaml's resources):
//   node --import tsx test/helpers/prometheus-rule.ts > deploy/kubernetes/base/prometheusrule.yaml
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

export const ALERTS = new URL('../../deploy/prometheus/alerts.yaml', import.meta.url);
export const PROMETHEUS_RULE = new URL('../../deploy/kubernetes/base/prometheusrule.yaml', import.meta.url);

/** The text of base/prometheusrule.yaml for a Prometheus rules file's text. */
export function prometheusRule(rulesFile: string): string {
  const { groups } = parse(rulesFile) as { groups: unknown[] };
  const resource = { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name: 'mcp-warden' }, spec: { groups } };
  return `# Generated from deploy/prometheus/alerts.yaml by test/helpers/prometheus-rule.ts: do not edit.\n${stringify(resource)}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(prometheusRule(readFileSync(ALERTS, 'utf8')));
