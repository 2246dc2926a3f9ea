// The metrics table of docs/operations.md is the list dashboards and alerts are built from
// (deploy/grafana/, deploy/prometheus/alerts.yaml): it names every metric the proxy registers, with
// its type, and nothing it does not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from '../../src/sinks/metrics.ts';
import { DOCUMENTED_METRICS, NEEDS_REDIS } from '../helpers/documented-metrics.ts';

test("docs/operations.md's metrics table names every mcp_warden_* metric the proxy registers, with its type", async () => {
  const metrics = new Metrics({ sessions: () => 0, openRequests: () => 0, upstreamUp: async () => false });
  const registered = new Map(
    (await metrics.registry.getMetricsAsJSON())
      .filter((m) => m.name.startsWith('mcp_warden_') && !NEEDS_REDIS.has(m.name))
      .map((m) => [m.name, String(m.type)]),
  );
  // The state store's own may be registered only with a store: documented either way.
  const documented = new Map([...DOCUMENTED_METRICS].filter(([name]) => !NEEDS_REDIS.has(name)));
  assert.deepEqual(Object.fromEntries([...documented].sort()), Object.fromEntries([...registered].sort()));
});
