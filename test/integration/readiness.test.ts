// Issue #44, item 2: /readyz says whether this process can serve, as Kubernetes expects. On SIGTERM
// it turns 503 at once while new connections are still served for --drain-delay; the upstream's
// health is /upstreamz and mcp_warden_upstream_up, and a replica whose upstream is down stays ready
// (clients get its JSON-RPC errors with their ids, not a balancer's page) unless --ready-needs-upstream.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { startRawServer } from '../fixtures/raw-server.ts';
import { startWorkersCli, type WorkersCli } from '../helpers/workers-cli.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const TOOLS = (_req: unknown, res: import('node:http').ServerResponse, body: Buffer) => {
  const { id } = JSON.parse(body.toString()) as { id: number };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [] } }));
};

/** The proxy CLI with an admin port (`workers` processes); resolves with both URLs. */
async function startCli(upstream: URL, extra: string[] = [], workers = 1): Promise<{ cli: WorkersCli; admin: URL }> {
  const cli = await startWorkersCli(upstream, workers, ['--admin', '127.0.0.1:0', ...extra], closers);
  const [listening] = await cli.waitFor((r) => r.msg === 'admin listening');
  return { cli, admin: new URL(String(listening!.admin)) };
}

/** A POST of tools/list on a connection of its own (a client arriving now). */
async function newClientCall(url: URL, id: number) {
  const dispatcher = new Agent();
  try {
    const res = await request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' }),
    });
    return {
      status: res.statusCode,
      body: (await res.body.json()) as { id: number; result?: unknown; error?: { data: { reason: string } } },
    };
  } finally {
    await dispatcher.close();
  }
}

async function get(url: URL): Promise<{ status: number; body: string }> {
  const res = await request(url);
  return { status: res.statusCode, body: await res.body.text() };
}

describe('readiness as Kubernetes expects', () => {
  // One process, the delay from the variable the manifests set; two workers, from the flag: the
  // primary's /readyz turns 503 and each worker keeps serving through the delay.
  for (const [workers, how] of [
    [1, 'MCP_WARDEN_DRAIN_DELAY'],
    [2, '--drain-delay'],
  ] as const)
    test(`SIGTERM (--workers ${workers}): /readyz turns 503 at once, new connections are served for the drain delay (${how}), then exit 0`, async () => {
      const upstream = await startRawServer(TOOLS);
      closers.push(() => upstream.close());
      if (how === 'MCP_WARDEN_DRAIN_DELAY') process.env.MCP_WARDEN_DRAIN_DELAY = '5s';
      const { cli, admin } = await startCli(
        new URL('/mcp', upstream.url),
        how === '--drain-delay' ? ['--drain-delay', '5s'] : [],
        workers,
      ).finally(() => delete process.env.MCP_WARDEN_DRAIN_DELAY);
      assert.equal((await get(new URL('/readyz', admin))).status, 200);

      const exited = cli.stop();
      let readyz = await get(new URL('/readyz', admin));
      for (let i = 0; i < 200 && readyz.status === 200; i++) readyz = await get(new URL('/readyz', admin));
      assert.equal(readyz.status, 503);
      assert.deepEqual(JSON.parse(readyz.body), { status: 'draining' });
      // A client the balancer still sends meanwhile is served.
      const late = await newClientCall(cli.url, 7);
      assert.equal(late.status, 200);
      assert.deepEqual(late.body, { jsonrpc: '2.0', id: 7, result: { tools: [] } });
      const [draining] = await cli.waitFor((r) => r.msg === 'not ready: serving new connections for the drain delay');
      assert.equal(draining!.drainDelayMs, 5000);
      assert.equal(await exited, 0);
      assert.ok(cli.records.some((r) => r.msg === 'stopped'));
    });

  test('the upstream stopped while /readyz is polled: still ready, /upstreamz and mcp_warden_upstream_up say down; --ready-needs-upstream keeps the old readiness', async () => {
    const upstream = await startRawServer(TOOLS);
    closers.push(() => upstream.close());
    const target = new URL('/mcp', upstream.url);
    const plain = await startCli(target);
    const strict = await startCli(target, ['--ready-needs-upstream']);
    for (const { admin } of [plain, strict]) assert.equal((await get(new URL('/readyz', admin))).status, 200);
    assert.match((await get(new URL('/metrics', plain.admin))).body, /^mcp_warden_upstream_up 1$/m);

    await upstream.close();
    const readyz = await get(new URL('/readyz', plain.admin));
    assert.equal(readyz.status, 200, 'this process can serve: its own answers');
    const upstreamz = await get(new URL('/upstreamz', plain.admin));
    assert.equal(upstreamz.status, 503);
    assert.deepEqual(JSON.parse(upstreamz.body), { status: 'down', upstream: upstream.url.origin });
    assert.match((await get(new URL('/metrics', plain.admin))).body, /^# TYPE mcp_warden_upstream_up gauge\nmcp_warden_upstream_up 0$/m);
    const answer = await newClientCall(plain.cli.url, 9);
    assert.equal(answer.status, 502);
    assert.equal(answer.body.id, 9, "the proxy's JSON-RPC error carries the request's id");
    assert.equal(answer.body.error?.data.reason, 'WARDEN_UPSTREAM_UNREACHABLE');

    const strictReadyz = await get(new URL('/readyz', strict.admin));
    assert.equal(strictReadyz.status, 503);
    assert.deepEqual(JSON.parse(strictReadyz.body), { status: 'upstream unreachable' });
  });
});
