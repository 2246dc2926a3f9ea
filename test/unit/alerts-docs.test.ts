// The alert rules that ship (deploy/prometheus/alerts.yaml): docs/operations.md's "What to alert
// on" is generated from them, each fires in a unit test of its own (alerts.test.yaml, run by
// promtool in test/slow/prometheus.test.ts), and each metric they read is one the proxy documents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from '../../src/sinks/metrics.ts';
import { alertRules, alertsTable, alertsTestedFiring, metricsIn } from '../helpers/alert-rules.ts';
import { docBlock } from '../helpers/doc-blocks.ts';
import { DOCUMENTED_METRICS } from '../helpers/documented-metrics.ts';

test('docs/operations.md, "What to alert on", is the table of deploy/prometheus/alerts.yaml', () => {
  assert.equal(
    docBlock('alerts'),
    alertsTable(alertRules()),
    'regenerate: node --import tsx -e "import(\'./test/helpers/alert-rules.ts\').then((m) => console.log(m.alertsTable(m.alertRules())))"',
  );
});

test('every alert fires in a unit test of alerts.test.yaml', () => {
  const firing = alertsTestedFiring();
  assert.deepEqual(
    alertRules()
      .map((r) => r.alert)
      .filter((a) => !firing.has(a)),
    [],
  );
});

test('every metric an alert reads is documented, or one of the process metrics the proxy registers', async () => {
  const registered = new Set(
    (await new Metrics({ sessions: () => 0, openRequests: () => 0, upstreamUp: async () => true }).registry.getMetricsAsJSON()).map(
      (m) => m.name,
    ),
  );
  const unknown = alertRules().flatMap((r) => metricsIn(r.expr).filter((m) => !DOCUMENTED_METRICS.has(m) && !registered.has(m)));
  assert.deepEqual(unknown, []);
});
