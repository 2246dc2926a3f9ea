// A hostile or broken state store (--state redis://): a fake Redis (test/fixtures/fake-redis.ts)
// publishes facts of the wrong shape and answers reads with the wrong types. Nothing it sends
// throws into the process or an exchange: each request is relayed and judged with what the replica
// knows, each bad reply counted (op, reason "malformed") and said at most once a minute.
// The same faults against a real Redis written by a second client: test/slow/fleet-hostile.test.ts.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, describe, test } from 'node:test';
import { loadPolicyFile } from '../../src/config/load.ts';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { type FakeReply, resp, startFakeRedis } from '../fixtures/fake-redis.ts';
import type { LogCapture } from '../helpers/log-capture.ts';
import { counted, testState } from '../helpers/redis-state.ts';
import { startProxy } from '../helpers/proxy.ts';
import { driveSession, postRpc } from '../helpers/session-drive.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const MALFORMED = 'state store sent what this proxy does not write: ignored, judged with what this replica knows';

/** A replica on a fake Redis answering with `handle`, in front of the demo's broken server. */
async function replicaOnFake(handle: (words: string[], socket: Socket) => FakeReply = () => undefined, maxReadBytes?: number) {
  const fake = await startFakeRedis(handle);
  closers.push(() => fake.close());
  const server = await startBrokenServer();
  closers.push(server.close);
  const { state, log, errors } = testState(fake.url, closers, { maxReadBytes });
  const proxy = await startProxy(server.url, { state });
  closers.push(() => proxy.close());
  await log.waitFor((r) => r.msg === 'state store connected');
  return { fake, log, errors, proxy, state };
}

const said = (log: LogCapture) => log.records.filter((r) => r.msg === MALFORMED);

/** A session through the proxy: every request answered by the server (no proxy error). */
async function sessionAnswered(url: URL): Promise<void> {
  const init = await postRpc(url, 1, 'initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'hostile-store', version: '1' },
  });
  assert.ok(init.session, 'initialized');
  const list = await postRpc(url, 2, 'tools/list', {}, init.session);
  assert.ok(
    Array.isArray((list.body.result as { tools?: unknown[] } | undefined)?.tools),
    `tools/list answered: ${JSON.stringify(list.body)}`,
  );
}

describe('a state store that publishes facts of the wrong shape', () => {
  test('each is counted and ignored, said once: no replica exits, sessions go on', async () => {
    const { fake, log, errors, proxy } = await replicaOnFake();
    await fake.subscribed('mcp-warden:facts');
    const sid = 'sid:hostile-live';
    const bad = [
      // The issue's: values not an array (values.filter is not a function in the subscriber's handler).
      { kind: 'known', key: sid, values: 5 },
      { kind: 'known', key: sid, values: 'a string' },
      { kind: 'known', key: sid, values: [1, 2] },
      { kind: 'initialized', key: sid, version: 20251125 },
      { kind: 'initialized', key: sid, serverCapabilities: 'all of them' },
      { kind: 'initialized', key: sid, clientInfo: 'me' },
      { kind: 'tools', key: sid, tools: [], firstPage: 'yes', lastPage: true },
      { kind: 'no-such-kind', key: sid },
      { kind: 'ended', key: 7 },
      { kind: 'ended', key: 'x'.repeat(9000) },
    ];
    // A session first heard of by its initialize: the bad facts about it come next.
    fake.publish('mcp-warden:facts', `other\n${JSON.stringify({ kind: 'initialized', key: sid, version: '2025-11-25' })}`);
    for (const fact of bad) fake.publish('mcp-warden:facts', `other\n${JSON.stringify(fact)}`);
    for (const text of ['no sender line', 'other\nnot json', 'other\nnull', 'other\n[]']) fake.publish('mcp-warden:facts', text);
    const expected = bad.length + 4;
    await counted(errors, expected);
    assert.deepEqual(errors, Array(expected).fill('subscribe malformed'));
    assert.equal(said(log).length, 1, 'said once');
    assert.equal(said(log)[0]!.op, 'subscribe');
    assert.doesNotMatch(JSON.stringify(said(log)), /a string|all of them/, 'what came is not logged');
    // The good fact was applied, the bad ones were not.
    assert.equal(proxy.sessions.find(sid, performance.now())?.protocolVersion, '2025-11-25');
    assert.equal(proxy.sessions.find(sid, performance.now())?.known, undefined);
    await sessionAnswered(proxy.url);
  });
});

describe('a state store that answers reads with the wrong types', () => {
  test("a session's keys read back malformed (a reply of the wrong shape, a page of the wrong kind): answered by the server, counted, not read again", async () => {
    const page = JSON.stringify({ kind: 'known', key: 'sid:will-be-replaced', values: 5 });
    const ok = (init: string, pages: string[]) =>
      resp.array([resp.bulk('ok'), resp.array([init, resp.nil]), resp.array(pages), resp.array([])]);
    const replies = [
      resp.array([resp.int(1)]),
      resp.int(3),
      resp.array([resp.bulk('ok'), resp.bulk('not an array'), resp.array([]), resp.array([])]),
      ok(resp.nil, [resp.bulk(page)]),
      ok(resp.bulk('{"kind":"initialized","key":7}'), []),
      resp.array([resp.bulk('malformed')]),
    ];
    let reads = 0;
    const { errors, log, proxy } = await replicaOnFake((words) => {
      // The read of a session not known here (the script that counts its keys first).
      if (words[0] === 'EVAL' && words[1]!.includes("'memory', 'usage'")) return replies[reads++] ?? resp.error('ERR read again');
      return undefined;
    });
    for (let i = 0; i < replies.length; i++)
      for (let again = 0; again < 2; again++) {
        const answer = await postRpc(proxy.url, 3, 'tools/list', {}, `not-known-${i}`);
        assert.notEqual(
          (answer.body.error as { code?: number } | undefined)?.code,
          -32603,
          `answer ${i}: no proxy error: ${JSON.stringify(answer.body)}`,
        );
      }
    assert.equal(reads, replies.length, 'every session read once: one refused is not read again');
    assert.equal(errors.filter((e) => e === 'read malformed').length, replies.length);
    assert.equal(said(log).length, 1, 'said once');
    assert.deepEqual(
      proxy.exchanges().filter((r) => r.proxyError !== undefined),
      [],
    );
  });

  test('a claim answered with the wrong type: the request goes on, nothing released, counted', async () => {
    const { errors, proxy } = await replicaOnFake((words) => {
      if (words[0] === 'SET' && words.includes('NX')) return resp.array([resp.int(1)]);
      return undefined;
    });
    const requests = await driveSession(proxy.url);
    await proxy.log.waitFor(() => proxy.exchanges().length >= requests);
    assert.equal(proxy.exchanges().length, requests);
    assert.deepEqual(
      proxy.exchanges().filter((r) => r.proxyError !== undefined),
      [],
      'every request answered by the server',
    );
    assert.ok(errors.includes('claim malformed'), `counted: ${errors}`);
  });
});

/** Writes `head`, then 64 KiB chunks of a bulk string that never ends, until `bytes` are sent or the socket closes. */
function trickle(socket: Socket, head: string, bytes: number): void {
  socket.write(head);
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  const more = (): void => {
    if (socket.destroyed || sent >= bytes) return;
    sent += chunk.length;
    socket.write(chunk, () => setImmediate(more));
  };
  more();
}

describe('a state store that sends a reply without end', () => {
  test('a reply (or a publication) past --state-max-read is cut off as it comes: counted too-large, the request answered, the store used again', async () => {
    const MAX = 256 * 1024;
    let trickled = 0;
    const closed: Array<Promise<void>> = [];
    const { fake, errors, proxy, log } = await replicaOnFake((words, socket) => {
      // The first claim gets a reply of 2 GiB that trickles in: the replica must not hold it.
      if (words[0] !== 'SET' || !words.includes('NX') || trickled++ > 0) return undefined;
      closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
      trickle(socket, '$2147483648\r\n', 16 * MAX + 2 * 1024 * 1024);
      return '';
    }, MAX);
    const answer = await postRpc(proxy.url, 5, 'tools/call', { name: 'lookup', arguments: {} }, 'trickled');
    assert.notEqual((answer.body.error as { code?: number } | undefined)?.code, -32603, 'answered without the store');
    // Cut by the replica (bounded: without the cap the reply would only stall).
    await Promise.race([closed[0], new Promise((r) => setTimeout(r, 10_000))]);
    assert.ok(errors.includes('read too-large'), `counted: ${errors}`);
    // Connected again: the next request uses the store.
    for (let i = 0; i < 500 && log.records.filter((r) => r.msg === 'state store connected').length < 2; i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.equal(log.records.filter((r) => r.msg === 'state store connected').length, 2);

    // A publication without end on the subscription: cut off too, and the subscription comes back.
    await fake.subscribed('mcp-warden:facts');
    const [subscriber] = fake.subscribers('mcp-warden:facts');
    trickle(subscriber!, `*3\r\n${resp.bulk('message')}${resp.bulk('mcp-warden:facts')}$2147483648\r\n`, 16 * MAX + 2 * 1024 * 1024);
    await log.waitFor((r) => r.msg === 'state store subscription back: sessions known here are read again at their next request', 10_000);
    assert.ok(errors.includes('subscribe too-large'), `counted: ${errors}`);
  });
});

describe('a store slow to take a release (enforce)', () => {
  test('the answer goes out once its claim is released: a client reusing its id at once on another replica is not flagged', async () => {
    const enforce = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
    if (!enforce.ok) throw new Error('config/enforce.yaml does not load');
    // Claims as Redis keeps them; a release is applied (and answered) only once another claim
    // comes, or 300 ms after: a release sent and not waited for loses the race to the next claim.
    const held = new Map<string, string>();
    const releases: Array<() => void> = [];
    const flush = () => {
      for (const apply of releases.splice(0)) apply();
    };
    const fake = await startFakeRedis((words) => {
      if (words[0] === 'SET' && words.includes('NX')) {
        const taken = held.has(words[1]!);
        if (!taken) held.set(words[1]!, words[2]!);
        flush();
        return taken ? resp.nil : resp.ok;
      }
      if (words[0] === 'EVAL' && words[1]!.includes("redis.call('get', KEYS[1]) == ARGV[1]"))
        return new Promise((resolve) => {
          const apply = () => {
            clearTimeout(timer);
            if (held.get(words[3]!) === words[4]) held.delete(words[3]!);
            resolve(resp.int(1));
          };
          const timer = setTimeout(() => releases.splice(releases.indexOf(apply), 1) && apply(), 300);
          releases.push(apply);
        });
      return undefined;
    });
    closers.push(() => fake.close());
    const server = await startRawServer((_req, res, body) => {
      const msg = JSON.parse(body.toString('utf8')) as { id: number };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: 'done' }] } }));
    });
    closers.push(server.close);
    const replicas = [];
    for (let i = 0; i < 2; i++) {
      const { state, log } = testState(fake.url, closers);
      const proxy = await startProxy(server.url, { state, policy: () => enforce.policy });
      closers.push(() => proxy.close());
      await log.waitFor((r) => r.msg === 'state store connected');
      replicas.push(proxy);
    }
    // One sequential client, the same id each time, alternating replicas.
    for (let round = 0; round < 4; round++)
      await postRpc(replicas[round % 2]!.url, 7, 'tools/call', { name: 'echo', arguments: {} }, 'reused-ids');
    for (const p of replicas) await p.log.waitFor(() => p.exchanges().length >= 2);
    const flagged = replicas.flatMap((p) => p.log.records).filter((r) => r.msg === 'violation' && r.rule === 'request-id-in-flight');
    assert.deepEqual(flagged, [], 'an id answered is free again before the client has its answer');
  });
});
