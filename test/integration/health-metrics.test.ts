// Issue #44, item 4: metrics that follow Prometheus conventions. The policy's reloads as a gauge
// that stays 0 while a rejected file is there (an increase() alert clears itself), which policy
// runs, the capture's failures, process metrics per worker under --workers (never summed limits),
// and the upstream's own time apart from the exchange's whole time.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { loadPolicyText } from '../../src/config/load.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { eventually } from '../helpers/faults.ts';
import { startProxy } from '../helpers/proxy.ts';
import { startWorkersCli } from '../helpers/workers-cli.ts';

const closers: Array<() => Promise<unknown>> = [];
const dir = await mkdtemp(join(tmpdir(), 'warden-health-metrics-'));
after(async () => {
  for (const close of closers.reverse()) await close();
  await rm(dir, { recursive: true, force: true });
});

const TOOLS = (_req: unknown, res: import('node:http').ServerResponse, body: Buffer) => {
  const { id } = JSON.parse(body.toString()) as { id: number };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [] } }));
};

const call = (url: URL, id: number, method = 'tools/list') =>
  request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params: method === 'tools/call' ? { name: 'slow', arguments: {} } : undefined }),
  });

const scrape = async (admin: URL) => (await request(new URL('/metrics', admin))).body.text();
const sample = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};
const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

describe('metrics that follow Prometheus conventions', () => {
  test('the last reload as a gauge that stays 0 while a rejected policy is there, and the policy in force', async () => {
    const upstream = await startRawServer(TOOLS);
    closers.push(() => upstream.close());
    const file = join(dir, 'policy.yaml');
    const audit = 'mode: audit\n';
    await writeFile(file, audit);
    const cli = await startWorkersCli(new URL('/mcp', upstream.url), 1, ['--admin', '127.0.0.1:0', '--policy', file], closers);
    const [listening] = await cli.waitFor((r) => r.msg === 'admin listening');
    const admin = new URL(String(listening!.admin));

    let text = await scrape(admin);
    assert.equal(sample(text, 'mcp_warden_config_last_reload_successful'), 1, 'the policy loaded at start');
    const loadedAt = sample(text, 'mcp_warden_config_last_reload_success_timestamp_seconds')!;
    assert.ok(Math.abs(loadedAt - Date.now() / 1000) < 600, `loaded at ${loadedAt}`);
    assert.equal(sample(text, `mcp_warden_policy_info{sha256="${short(audit)}",mode="audit"}`), 1);

    await writeFile(file, 'mode: [not, a, mode]\n');
    await cli.waitFor((r) => r.msg === 'policy rejected');
    text = await scrape(admin);
    assert.equal(sample(text, 'mcp_warden_config_last_reload_successful'), 0, 'stays 0 while the bad file is there');
    assert.equal(sample(text, 'mcp_warden_config_last_reload_success_timestamp_seconds'), loadedAt);
    assert.equal(sample(text, `mcp_warden_policy_info{sha256="${short(audit)}",mode="audit"}`), 1, 'the policy in force stays');

    const enforce = 'mode: enforce\n';
    await writeFile(file, enforce);
    await cli.waitFor((r) => r.msg === 'policy reloaded');
    text = await scrape(admin);
    assert.equal(sample(text, 'mcp_warden_config_last_reload_successful'), 1);
    assert.ok(sample(text, 'mcp_warden_config_last_reload_success_timestamp_seconds')! >= loadedAt);
    assert.deepEqual(
      text.split('\n').filter((l) => l.startsWith('mcp_warden_policy_info{')),
      [`mcp_warden_policy_info{sha256="${short(enforce)}",mode="enforce"} 1`],
      'one policy in force',
    );
  });

  test("the upstream's own time (to its response headers) apart from the exchange's whole time", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const upstream = await startRawServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
      await held;
      res.end('data: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n');
    });
    closers.push(() => upstream.close());
    const proxy = await startProxy(new URL('/mcp', upstream.url));
    closers.push(() => proxy.close());
    const answer = await call(proxy.url, 1, 'tools/call');
    // The headers came: the upstream's time is known, the exchange is not over.
    await eventually(
      2000,
      () => 'the upstream time recorded',
      async () => sample(await proxy.metrics.registry.metrics(), 'mcp_warden_upstream_duration_seconds_count{method="tools/call"}') === 1,
    );
    assert.equal(
      sample(await proxy.metrics.registry.metrics(), 'mcp_warden_exchange_duration_seconds_count{method="tools/call"}'),
      undefined,
    );
    release();
    await answer.body.text();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 1);
    const text = await proxy.metrics.registry.metrics();
    assert.equal(sample(text, 'mcp_warden_exchange_duration_seconds_count{method="tools/call"}'), 1);
    assert.ok(
      sample(text, 'mcp_warden_exchange_duration_seconds_sum{method="tools/call"}')! >=
        sample(text, 'mcp_warden_upstream_duration_seconds_sum{method="tools/call"}')!,
      'the whole exchange lasts at least as long as the wait for headers',
    );
  });

  test('a capture file that cannot be written is counted, for every exchange it misses', async () => {
    const upstream = await startRawServer(TOOLS);
    closers.push(() => upstream.close());
    const loaded = loadPolicyText(`mode: audit\ncapture: { path: ${join(dir, 'missing', 'capture.jsonl')} }\n`, 'capture.yaml');
    assert.ok(loaded.ok);
    const proxy = await startProxy(new URL('/mcp', upstream.url), { policy: () => loaded.policy });
    closers.push(() => proxy.close());
    for (const id of [1, 2, 3]) await (await call(proxy.url, id)).body.text();
    await proxy.log.waitFor((r) => r.msg === 'capture failed; exchanges are no longer captured');
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 3);
    await (await call(proxy.url, 4)).body.text();
    await eventually(
      2000,
      () => 'capture errors counted',
      async () => (sample(await proxy.metrics.registry.metrics(), 'mcp_warden_capture_errors_total') ?? 0) >= 2,
    );
  });

  test('under --workers, process metrics carry a worker label: limits are not summed', async () => {
    const upstream = await startRawServer(TOOLS);
    closers.push(() => upstream.close());
    const cli = await startWorkersCli(new URL('/mcp', upstream.url), 2, ['--admin', '127.0.0.1:0'], closers);
    const [listening] = await cli.waitFor((r) => r.msg === 'admin listening');
    const text = await scrape(new URL(String(listening!.admin)));
    const fds = text.split('\n').filter((l) => l.startsWith('process_max_fds'));
    assert.equal(fds.length, 2, fds.join('\n'));
    const limits = fds.map((l) => /^process_max_fds\{worker="\d+"\} (\d+)$/.exec(l)?.[1]);
    assert.ok(limits.every((v) => v !== undefined));
    assert.equal(limits[0], limits[1], 'each worker its own limit, the same one');
    // The proxy's own counters are still one series, summed over the workers.
    assert.match(text, /^mcp_warden_config_last_reload_successful 1$/m);
  });
});
