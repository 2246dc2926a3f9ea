// The process's own metrics are made once per process: every proxy's registry shows them, measured
// once (one event-loop-delay histogram, one GC observer), while each proxy counts its own traffic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from '../../src/sinks/metrics.ts';

const gauges = { sessions: () => 0, openRequests: () => 0 };

test('two proxies in one process: the same process metrics in both registries, their own counts apart', async () => {
  const a = new Metrics(gauges);
  const b = new Metrics(gauges);
  for (const name of ['process_cpu_seconds_total', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds']) {
    const inA = a.registry.getSingleMetric(name);
    assert.ok(inA, `${name} in the first registry`);
    assert.equal(b.registry.getSingleMetric(name), inA, `${name}: one metric, not a second measurement`);
  }
  a.reloaded(true);
  assert.match(await a.registry.metrics(), /^mcp_warden_policy_reloads_total\{result="success"\} 1$/m);
  assert.doesNotMatch(await b.registry.metrics(), /^mcp_warden_policy_reloads_total\{result="success"\}/m);
  assert.match(await b.registry.metrics(), /^process_cpu_seconds_total \d/m);
});
