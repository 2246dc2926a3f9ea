// Legacy POSTs forwarded between replicas (--peer-address) when the store lies or the peer port is
// attacked: two replicas on a fake Redis that relays their publications (test/fixtures/fake-redis.ts),
// in front of the legacy fixture server or the demo's Streamable HTTP server. A holder the store
// names is believed only for a legacy message path (never the MCP endpoint's own path or an OAuth
// path), never at this replica's own listener, and a request that already made a hop is never
// sent on; the peer port closes silent sockets, keeps room for the peers' forwarded POSTs, and
// says when a token is wrong.
import assert from 'node:assert/strict';
import { createServer, connect, type Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import type { Limits } from '../../src/config/defaults.ts';
import { LegacyPeers, MAX_PEER_CONNECTIONS } from '../../src/proxy/peers.ts';
import { createProxy } from '../../src/proxy/server.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { shareLegacyStreamsThroughRedis } from '../../src/state/redis-streams.ts';
import { type FakeRedis, startFakeRedis } from '../fixtures/fake-redis.ts';
import { startLegacyServer } from '../fixtures/legacy-sse-server.ts';
import { driveLegacySession } from '../helpers/legacy-session.ts';
import { counted, testState } from '../helpers/redis-state.ts';
import { postRpc } from '../helpers/session-drive.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

type Rec = Record<string, unknown>;

/** A replica of a fleet on `fake` in front of `upstream`: its MCP URL, its peer address, its log and its state's errors. */
async function replica(fake: FakeRedis, upstream: URL, limits: Partial<Limits> = {}) {
  const { state, log, errors } = testState(fake.url, closers);
  const logger = createLogger({ destination: log.stream, level: 'debug' });
  const peers = new LegacyPeers(logger);
  const proxy = createProxy({ upstream, logger, state, peers, limits });
  const peer = await shareLegacyStreamsThroughRedis(proxy, peers, state, { host: '127.0.0.1', port: 0 }, () => performance.now());
  const running = await proxy.listen(0, '127.0.0.1');
  closers.push(() => proxy.close());
  await log.waitFor((r) => r.msg === 'state store connected');
  await fake.subscribed('mcp-warden:streams');
  return { url: running.url, peer, log, errors, proxy };
}

/** A TCP listener that counts the connections it gets (where a poisoned store points the replicas). */
async function trap(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as { port: number }).port, connections: () => connections };
}

/** A stream fact as a replica publishes it on mcp-warden:streams, from sender `evil`. */
const held = (key: string, address: Rec, holder = 'evil') => {
  const q = key.indexOf('?');
  const named = q < 0 ? undefined : (new URLSearchParams(key.slice(q + 1)).get('sessionId') ?? undefined);
  const path = q < 0 ? key : key.slice(0, q);
  return `evil\n${JSON.stringify({ fact: { kind: 'open', key, path, named }, holder, address: { host: '127.0.0.1', token: 't', ...address } })}`;
};

const NOTIFICATION = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
const forwarded = (r: { log: { records: Rec[] } }) =>
  r.log.records.filter((x) => x.msg === 'legacy POST forwarded to the worker holding its stream');

const fakeRedis = async () => {
  const fake = await startFakeRedis();
  closers.push(() => fake.close());
  return fake;
};

const postTo = (url: URL, body: string, headers: Record<string, string> = {}) =>
  request(url, { method: 'POST', reset: true, headers: { 'content-type': 'application/json', ...headers }, body });

describe('a store that names holders no replica could be', () => {
  test('a holder on port 70000 or -1, or with a host of 300 characters: refused where it comes in, counted; the POST is served here', async () => {
    const fake = await fakeRedis();
    const server = await startLegacyServer();
    closers.push(server.close);
    const b = await replica(fake, server.sse);
    for (const address of [{ port: 70_000 }, { port: -1 }, { port: 0 }, { port: 8788, host: 'h'.repeat(300) }, { port: '8788' }])
      fake.publish('mcp-warden:streams', held('/elsewhere?sessionId=poisoned', address));
    await counted(b.errors, 5);
    assert.deepEqual(b.errors, Array(5).fill('subscribe malformed'));
    const answer = await postTo(new URL('/elsewhere?sessionId=poisoned', b.url), NOTIFICATION);
    assert.equal(answer.statusCode, 404, 'served here: relayed to the upstream, whose 404 it is');
    await answer.body.dump();
    assert.equal(forwarded(b).length, 0);
  });

  test("a holder keyed by the MCP endpoint's own path or an OAuth path gets nothing: Streamable HTTP and token requests go upstream", async () => {
    const fake = await fakeRedis();
    const server = await startBrokenServer();
    closers.push(server.close);
    const b = await replica(fake, server.url);
    const evil = await trap();
    for (const key of ['/mcp', '/oauth/token', '/register', '/.well-known/oauth-authorization-server'])
      fake.publish('mcp-warden:streams', held(key, { port: evil.port }));
    await counted(b.errors, 4);
    assert.deepEqual(b.errors, Array(4).fill('subscribe malformed'), 'each refused and counted');
    const init = await postRpc(b.url, 1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'peers-hostile', version: '1' },
    });
    assert.ok(init.session, `initialize answered by the upstream: ${JSON.stringify(init.body)}`);
    const token = await request(new URL('/oauth/token', b.url), {
      method: 'POST',
      reset: true,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials&client_secret=s3cret',
    });
    await token.body.dump();
    // A Streamable HTTP or OAuth POST that names a session parameter is no legacy POST: it waits
    // for no holder (it waited 250 ms for one, and had the store looked up).
    await postRpc(new URL('/mcp?sessionId=not-legacy', b.url), 2, 'ping', {}, init.session);
    const form = await request(new URL('/oauth/token?session_id=not-legacy', b.url), { method: 'POST', reset: true, body: 'grant_type=x' });
    await form.body.dump();
    assert.deepEqual(
      fake.commands
        .filter((c) => c[0] === 'EVAL' || c[0] === 'EVALSHA' || c[0] === 'MGET')
        .filter((c) => c.some((w) => w.includes('legacy'))),
      [],
      'no holder looked up',
    );
    assert.equal(evil.connections(), 0, 'nothing reached the address the store named');
    assert.equal(forwarded(b).length, 0);
  });

  test("a holder at this replica's own MCP port is refused, and a POST that made a hop already is never sent on", async () => {
    const fake = await fakeRedis();
    const server = await startLegacyServer();
    closers.push(server.close);
    const b = await replica(fake, server.sse);
    fake.publish('mcp-warden:streams', held('/elsewhere?sessionId=loop', { port: Number(b.url.port) }));
    fake.publish('mcp-warden:streams', held('/elsewhere?sessionId=loop2', { port: b.peer.port, token: b.peer.token }));
    await counted(b.errors, 2);
    assert.deepEqual(b.errors, Array(2).fill('subscribe malformed'), 'refused and counted');
    for (const key of ['/elsewhere?sessionId=loop', '/elsewhere?sessionId=loop2']) {
      const answer = await postTo(new URL(key, b.url), NOTIFICATION);
      assert.equal(answer.statusCode, 404, `${key}: served here, relayed to the upstream, whose 404 it is`);
      await answer.body.dump();
    }
    assert.equal(forwarded(b).length, 0, 'never sent to itself');

    // A holder elsewhere that is really another replica (A): a POST that carries the hop's header
    // (it came through a replica already) is served where it landed, not sent on.
    const a = await replica(fake, server.sse);
    const stream = await fetch(a.url, { headers: { accept: 'text/event-stream' } });
    const reader = stream.body!.getReader();
    closers.push(() => reader.cancel());
    let text = '';
    while (!text.includes('\n\n')) text += new TextDecoder().decode((await reader.read()).value);
    const endpoint = /data: (.*)/.exec(text)![1]!;
    for (let i = 0; i < 500 && b.proxy.legacy.holderOf(endpoint, performance.now()) === undefined; i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(b.proxy.legacy.holderOf(endpoint, performance.now()), 'B heard of the stream A holds');
    const hopped = await postTo(new URL(endpoint, b.url), NOTIFICATION, { 'x-mcp-warden-peer-token': 'from-a-replica' });
    assert.equal(hopped.statusCode, 404, 'served here: no stream of the session passes through B');
    await hopped.body.dump();
    assert.equal(forwarded(b).length, 0, 'not sent on');
    // Without the header, the same POST goes to A.
    const plain = await postTo(new URL(endpoint, b.url), NOTIFICATION);
    assert.equal(plain.statusCode, 202);
    await plain.body.dump();
    assert.equal(forwarded(b).length, 1);
  });
});

describe('the peer port', () => {
  test('a wrong token: 403 WARDEN_FORBIDDEN_PEER, a `request refused` record and a metric; a forged client address is not taken', async () => {
    const fake = await fakeRedis();
    const server = await startLegacyServer();
    closers.push(server.close);
    const a = await replica(fake, server.sse);
    const peerUrl = new URL(`http://127.0.0.1:${a.peer.port}/elsewhere?sessionId=1`);
    const refused = await postTo(peerUrl, '{}', { 'x-mcp-warden-peer-token': 'wrong' });
    assert.equal(refused.statusCode, 403);
    assert.equal(((await refused.body.json()) as { error: { data: { reason: string } } }).error.data.reason, 'WARDEN_FORBIDDEN_PEER');
    const record = await a.log.waitFor((r) => r.msg === 'request refused');
    assert.equal(record.reason, 'peer-token');
    assert.doesNotMatch(JSON.stringify(record), /wrong/, 'the token sent is not logged');
    assert.match(await a.proxy.metrics.registry.metrics(), /mcp_warden_proxy_errors_total\{reason="WARDEN_FORBIDDEN_PEER"\} 1/);

    const forged = await postTo(peerUrl, NOTIFICATION, {
      'x-mcp-warden-peer-token': a.peer.token,
      'x-mcp-warden-peer-client': 'x'.repeat(12_000),
    });
    await forged.body.dump();
    const logged = JSON.stringify(a.log.records);
    assert.doesNotMatch(logged, /x{200}/, 'the forged address is in no record');
  });

  test(`${MAX_PEER_CONNECTIONS + 76} silent sockets on the peer port: POSTs forwarded to it for a live session are still served`, async () => {
    const fake = await fakeRedis();
    const server = await startLegacyServer();
    closers.push(server.close);
    const a = await replica(fake, server.sse);
    const b = await replica(fake, server.sse);
    const silent: Socket[] = [];
    closers.push(async () => {
      for (const s of silent) s.destroy();
    });
    for (let i = 0; i < MAX_PEER_CONNECTIONS + 76; i++) {
      const s = connect(a.peer.port, '127.0.0.1');
      s.on('error', () => {});
      silent.push(s);
    }
    await Promise.all(
      silent.map(
        (s) => new Promise((resolve) => (s.readyState === 'open' ? resolve(undefined) : s.once('connect', resolve).once('close', resolve))),
      ),
    );
    // The stream on A, every POST on B: each forwarded to A's peer port.
    const answers = await driveLegacySession(a.url, async () => b.url);
    assert.equal(answers.length, 5, `every request answered on the stream: ${JSON.stringify(answers)}`);
    assert.ok(answers.every((m) => m.result !== undefined || m.error !== undefined));
    await b.log.waitFor((r) => r.msg === 'legacy POST forwarded to the worker holding its stream');
  });
});
