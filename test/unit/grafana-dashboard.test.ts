// deploy/grafana/mcp-warden.json is built from the metrics table of docs/operations.md: every
// documented metric has a panel, and every panel's query names a metric the proxy has. (The slow
// tier's test/slow/prometheus.test.ts runs each query against a live Prometheus.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Metrics } from '../../src/sinks/metrics.ts';
import { DASHBOARD_FILE, dashboardQueries, queryMetrics } from '../helpers/grafana-dashboard.ts';
import { DOCUMENTED_METRICS } from '../helpers/documented-metrics.ts';

test('every panel query names a metric that exists: documented, or one of the process metrics the proxy registers', async () => {
  const registered = new Set(
    (await new Metrics({ sessions: () => 0, openRequests: () => 0, upstreamUp: async () => true }).registry.getMetricsAsJSON()).map(
      (m) => m.name,
    ),
  );
  const queries = dashboardQueries();
  assert.ok(queries.length > 0);
  for (const { panel, expr } of queries) {
    const named = queryMetrics(expr);
    assert.ok(named.length > 0, `${panel}: its query names no metric`);
    for (const metric of named) assert.ok(DOCUMENTED_METRICS.has(metric) || registered.has(metric), `${panel}: ${metric} does not exist`);
  }
});

test('every documented metric has a panel', () => {
  const shown = new Set(dashboardQueries().flatMap(({ expr }) => queryMetrics(expr)));
  assert.deepEqual(
    [...DOCUMENTED_METRICS.keys()].filter((m) => !shown.has(m)),
    [],
  );
});

test('the dashboard is one Grafana dashboard: unique panel ids, a Prometheus data source variable', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as {
    uid: string;
    panels: Array<{ id: number; datasource?: { uid: string } }>;
    templating: { list: Array<{ name: string; type: string }> };
  };
  assert.equal(dashboard.uid, 'mcp-warden');
  const ids = dashboard.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
  assert.ok(dashboard.templating.list.some((v) => v.name === 'datasource' && v.type === 'datasource'));
  // Grafana's variable syntax, not a template literal.
  const variable = ['$', '{datasource}'].join('');
  for (const p of dashboard.panels) if (p.datasource) assert.equal(p.datasource.uid, variable);
});
