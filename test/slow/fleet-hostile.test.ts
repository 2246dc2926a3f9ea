// A fleet's state store written by someone else: Debian's redis-server, and a second client that
// plants what mcp-warden never writes (a fact of the wrong shape, a key of another type, a value
// past --state-max-read) or publishes it. Each replica answers every request, judged with what it
// knows, counts each bad read (op, reason) and does not read a refused key again. The same faults
// from a fake Redis speaking the wrong types: test/integration/state-hostile.test.ts.
// .ci/run installs redis-server.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { startProxy } from '../helpers/proxy.ts';
import { fleetParts, redisCommand, startRedis } from '../helpers/redis.ts';
import { counted, testState } from '../helpers/redis-state.ts';
import { postRpc } from '../helpers/session-drive.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const { redis, skip } = fleetParts();

/** The bound on a read in these tests: what is planted is past it. */
const MAX_READ = 64 * 1024;

/** Redis, a second client writing to it, and a replica on it in front of the demo's server. */
async function plantedStore() {
  const store = await startRedis(redis!);
  closers.push(() => store.stop());
  const writer = new Redis(store.url.href);
  closers.push(async () => void writer.disconnect());
  const server = await startBrokenServer();
  closers.push(server.close);
  const { state, log, errors } = testState(store.url, closers, { maxReadBytes: MAX_READ });
  const proxy = await startProxy(server.url, { state });
  closers.push(() => proxy.close());
  await log.waitFor((r) => r.msg === 'state store connected');
  return { store, writer, errors, proxy, log };
}

const call = (url: URL, session: string) => postRpc(url, 7, 'tools/call', { name: 'lookup', arguments: {} }, session);
const answerCode = (answer: { body: Record<string, unknown> }) => (answer.body.error as { code?: number } | undefined)?.code;
const proxyErrors = (proxy: { exchanges(): Array<Record<string, unknown>> }) => proxy.exchanges().filter((r) => r.proxyError !== undefined);

describe('a Redis written by another client', { skip }, () => {
  test('a session planted past --state-max-read is never sent: counted too-large, the call answered, not read again', async () => {
    const { writer, errors, proxy } = await plantedStore();
    const big = JSON.stringify({
      kind: 'initialized',
      key: 'sid:planted',
      version: '2025-11-25',
      clientInfo: { name: 'x'.repeat(4 * MAX_READ) },
    });
    await writer.hset('mcp-warden:session:sid:planted', 'init', big);
    await writer.rpush('mcp-warden:tools:sid:paged', 'p'.repeat(2 * MAX_READ));
    for (const session of ['planted', 'planted', 'paged']) {
      const answer = await call(proxy.url, session);
      assert.notEqual(answerCode(answer), -32603, `the server's answer, not the proxy's: ${JSON.stringify(answer.body).slice(0, 200)}`);
    }
    assert.deepEqual(errors, ['read too-large', 'read too-large'], 'each refused once, then not read again');
    assert.deepEqual(proxyErrors(proxy), []);
  });

  test('a catalogue page, a session of another type, a published fact of the wrong shape: counted malformed, every call answered', async () => {
    const { store, writer, errors, proxy, log } = await plantedStore();
    await writer.rpush('mcp-warden:tools:sid:bad-page', JSON.stringify({ kind: 'known', key: 'sid:bad-page', values: 5 }));
    await writer.set('mcp-warden:session:sid:a-string', 'not a hash');
    await writer.rpush('mcp-warden:known:sid:numbers', '1', '2');
    await writer.hset('mcp-warden:session:sid:numbers', 'init', '{"kind":"initialized","key":"sid:numbers","version":7}');
    for (const session of ['bad-page', 'a-string', 'numbers']) {
      const answer = await call(proxy.url, session);
      assert.notEqual(answerCode(answer), -32603, `${session}: the server's answer, not the proxy's`);
    }
    const publisher = new Redis(store.url.href);
    closers.push(async () => void publisher.disconnect());
    await publisher.publish('mcp-warden:facts', `other\n${JSON.stringify({ kind: 'known', key: 'sid:bad-page', values: 5 })}`);
    await counted(errors, 4);
    assert.deepEqual(errors, ['read malformed', 'read malformed', 'read malformed', 'subscribe malformed']);
    assert.equal(
      log.records.filter((r) => r.msg === 'state store sent what this proxy does not write: ignored, judged with what this replica knows')
        .length,
      1,
    );
    assert.deepEqual(proxyErrors(proxy), []);
  });
});

describe('a database the Redis does not have', { skip }, () => {
  test('redis://.../99: said and counted, and nothing is written to database 0', async () => {
    const store = await startRedis(redis!);
    closers.push(() => store.stop());
    const server = await startBrokenServer();
    closers.push(server.close);
    const { state, log, errors } = testState(new URL('/99', store.url), closers, { timeoutMs: 500 });
    const proxy = await startProxy(server.url, { state });
    closers.push(() => proxy.close());
    const said = await log.waitFor((r) => r.level === 50 && String(r.msg).startsWith('state store unavailable') && r.hint !== undefined);
    assert.match(String(said.cause), /no database 99/);
    const init = await postRpc(proxy.url, 1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'db', version: '1' },
    });
    assert.ok(init.session);
    await postRpc(proxy.url, 2, 'tools/list', {}, init.session);
    assert.equal(await redisCommand(store.port, 'DBSIZE'), ':0', 'nothing written to database 0');
    assert.ok(errors.includes('connect failed'), `counted: ${errors}`);
    assert.equal(log.records.filter((r) => r.msg === 'state store available again' || r.msg === 'state store connected').length, 0);
  });
});

describe('Redis that loses what it was given', { skip }, () => {
  test('FLUSHALL (or a restart, an eviction): a replica using the session writes its facts again at its next refresh; one started later judges it as before', async () => {
    const { store, writer, proxy } = await plantedStore();
    const init = await postRpc(proxy.url, 1, 'initialize', {
      protocolVersion: '2025-11-25',
      capabilities: { roots: {} },
      clientInfo: { name: 'heal', version: '1' },
    });
    const key = `mcp-warden:session:sid:${init.session}`;
    for (let i = 0; i < 200 && (await writer.exists(key)) === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await writer.flushall();
    // The session in use: its keys are refreshed (every 10 s), and found missing.
    await postRpc(proxy.url, 2, 'tools/list', {}, init.session);
    for (let i = 0; i < 1500 && (await writer.exists(key)) === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const written = JSON.parse((await writer.hget(key, 'init')) ?? '{}') as Record<string, unknown>;
    assert.equal(written.version, '2025-11-25', 'written again');
    assert.deepEqual(written.clientCapabilities, { roots: {} });

    const { state: later } = testState(store.url, closers);
    const facts = await later.recall(`sid:${init.session}`);
    assert.equal(facts?.find((f) => f.kind === 'initialized')?.kind, 'initialized', 'a replica started later reads it');
  });
});
