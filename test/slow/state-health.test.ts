// The state store's health as an operator sees it (#44, item 1), with Debian's redis-server: a
// Redis that wants a password the URL does not give is named as such in the log (the URL form
// that carries one, the password never shown), mcp_warden_state_connected says 0, every claim
// skipped while it is away is counted, and with --state-required /readyz is 503 until the store
// is there; a Redis killed and started again turns the gauge and /readyz back and forth.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { findRedis, startRedis } from '../helpers/redis.ts';
import { startWorkersCli } from '../helpers/workers-cli.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const redis = findRedis();
if (!redis && process.env.CI) throw new Error('redis-server is not installed: .ci/run installs it');

/** Polls `check` every 25 ms, for 15 s at most. */
async function eventually(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never: ${what}`);
}

/** The proxy CLI on `location`, with its admin port: its records, its /metrics and /readyz, and where it listens. */
async function proxyOn(location: string, upstream: URL, ...flags: string[]) {
  const cli = await startWorkersCli(upstream, 1, ['--admin', '127.0.0.1:0', '--state', location, ...flags], closers);
  const [listening] = await cli.waitFor((r) => r.msg === 'admin listening');
  const admin = new URL(String(listening!.admin));
  const out = (): string => cli.records.map((r) => JSON.stringify(r)).join('\n');
  const metric = async (name: string): Promise<number | undefined> => {
    const text = await (await request(new URL('/metrics', admin))).body.text();
    const line = text.split('\n').find((l) => l.startsWith(name));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  };
  const ready = async (): Promise<{ status: number; body: string }> => {
    const res = await request(new URL('/readyz', admin));
    return { status: res.statusCode, body: await res.body.text() };
  };
  return { out, metric, ready, listen: cli.url };
}

const call = (id: number) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'lookup_user', arguments: { id: 'u1' } } });

describe('state store health', { skip: redis ? false : 'redis-server is not installed (apt-get install redis-server)' }, () => {
  test('a Redis that wants a password the URL does not give: the cause named, the gauge 0, skipped claims counted, /readyz 503 under --state-required', async () => {
    const store = await startRedis(redis!, 's3cret-pw');
    closers.push(() => store.stop());
    const server = await startBrokenServer();
    closers.push(server.close);
    const p = await proxyOn(`redis://127.0.0.1:${store.port}/0`, server.url, '--state-required');
    await eventually('the store is said unavailable', () => p.out().includes('state store unavailable'));
    const line = JSON.parse(
      p
        .out()
        .split('\n')
        .find((l) => l.includes('state store unavailable'))!,
    ) as Record<string, string>;
    assert.equal(line.cause ?? '', 'the store wants a password');
    assert.match(line.hint ?? '', /redis:\/\/:PASSWORD@host:port/);
    assert.equal(await p.metric('mcp_warden_state_connected'), 0);
    assert.deepEqual(await p.ready(), { status: 503, body: '{"status":"state store not connected"}' });
    // Traffic flows all the same, each exchange's claim not tried and counted.
    const before = (await p.metric('mcp_warden_state_errors_total{op="claim",reason="unavailable"}')) ?? 0;
    for (let id = 1; id <= 3; id++) {
      const res = await request(p.listen, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': 'sid-1' },
        body: call(id),
      });
      await res.body.text();
    }
    assert.equal(await p.metric('mcp_warden_state_errors_total{op="claim",reason="unavailable"}'), before + 3);
    assert.doesNotMatch(p.out(), /s3cret-pw/);
  });

  test('the right password: connected; Redis killed, then started again: the gauge and /readyz follow', async () => {
    const store = await startRedis(redis!, 's3cret-pw');
    closers.push(() => store.stop());
    const server = await startBrokenServer();
    closers.push(server.close);
    const p = await proxyOn(`redis://:s3cret-pw@127.0.0.1:${store.port}/0`, server.url, '--state-required');
    await eventually('connected', async () => (await p.metric('mcp_warden_state_connected')) === 1);
    assert.equal((await p.ready()).status, 200);
    await store.kill();
    await eventually('away', async () => (await p.metric('mcp_warden_state_connected')) === 0);
    assert.deepEqual(await p.ready(), { status: 503, body: '{"status":"state store not connected"}' });
    await eventually('the cause said', () => p.out().includes('state store unavailable'));
    const line = JSON.parse(
      p
        .out()
        .split('\n')
        .find((l) => l.includes('state store unavailable'))!,
    ) as Record<string, string>;
    assert.match(line.cause ?? '', /nothing accepts connections at 127\.0\.0\.1:\d+|no answer from/);
    await store.restart();
    await eventually('back', async () => (await p.metric('mcp_warden_state_connected')) === 1);
    assert.equal((await p.ready()).status, 200);
  });

  test('without --state-required /readyz stays 200 while the store is away (the replica serves, judging with what it knows)', async () => {
    const store = await startRedis(redis!, 's3cret-pw');
    closers.push(() => store.stop());
    const server = await startBrokenServer();
    closers.push(server.close);
    const p = await proxyOn(`redis://127.0.0.1:${store.port}/0`, server.url);
    await eventually('the store is said unavailable', () => p.out().includes('state store unavailable'));
    assert.equal(await p.metric('mcp_warden_state_connected'), 0);
    assert.equal((await p.ready()).status, 200);
  });
});
