// More than one host: two proxies behind nginx (the README's Kubernetes ingress), balanced by
// Mcp-Session-Id or by the client's address, judge a session as one proxy does, and what the first
// loses is stated. Debian's nginx-light (.ci/run installs it); without it
// this test skips outside CI.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { findNginx, startNginx } from '../helpers/nginx.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { driveSession, findingsOf } from '../helpers/session-drive.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const nginx = findNginx();
if (!nginx && process.env.CI) throw new Error('nginx is not installed: .ci/run installs it (apt-get install nginx-light)');

const skip = nginx ? false : 'nginx is not installed (apt-get install nginx-light)';

/**
 * A lone proxy's findings for the session, then `sessions` sessions through nginx in front of two
 * proxies, balanced by `hashBy`; with `byAddress`, session i comes from 127.0.0.(i + 2): another client.
 */
async function run(sessions: number, hashBy?: string, byAddress = false) {
  const server = await startBrokenServer();
  closers.push(server.close);
  const alone = await startProxy(server.url);
  closers.push(() => alone.close());
  const requests = await driveSession(alone.url);
  await alone.log.waitFor(() => alone.exchanges().length >= requests);

  const proxies: TestProxy[] = [await startProxy(server.url), await startProxy(server.url)];
  for (const p of proxies) closers.push(() => p.close());
  const balancer = await startNginx(
    nginx!,
    proxies.map((p) => p.url),
    hashBy,
  );
  closers.push(() => balancer.stop());
  for (let i = 0; i < sessions; i++)
    await driveSession(new URL(server.url.pathname, `http://127.0.0.1:${balancer.port}`), byAddress ? `127.0.0.${i + 2}` : undefined);
  assert.equal(proxies.flatMap((p) => p.exchanges()).length, sessions * requests);
  // Which proxy served each session's initialize, and which the requests that name the session.
  const initializedAt = new Map<string, number>();
  const servedAt = new Map<string, Set<number>>();
  proxies.forEach((p, i) => {
    for (const r of p.exchanges()) {
      if (typeof r.session !== 'string') continue;
      if (r.method === 'initialize') initializedAt.set(r.session, i);
      else servedAt.set(r.session, (servedAt.get(r.session) ?? new Set()).add(i));
    }
  });
  const findings = (session: string) => findingsOf(proxies.flatMap((p) => p.log.records).filter((r) => r.session === session));
  return { expected: findingsOf(alone.log.records), initializedAt, servedAt, findings, proxies };
}

test('two proxies behind nginx hashing on Mcp-Session-Id: each session on one proxy, judged as one proxy judges it', { skip }, async () => {
  const { expected, initializedAt, servedAt, findings, proxies } = await run(12);
  assert.equal(servedAt.size, 12);
  assert.ok(
    [...servedAt.values()].every((where) => where.size === 1),
    'every request that names its session goes to one proxy',
  );
  assert.ok(
    proxies.every((p) => p.exchanges().length > 0),
    'both proxies served sessions',
  );
  const whole = [...servedAt].filter(([session, where]) => where.has(initializedAt.get(session)!));
  assert.ok(whole.length > 0);
  for (const [session] of whole) assert.deepEqual(findings(session), expected, `session ${session}`);
});

// What a hash on Mcp-Session-Id loses (README, Kubernetes): initialize names no session, so it is
// balanced by an empty key and may reach the other proxy. The proxy serving the rest of the
// session then never saw the server's capabilities: a method the server did not declare, answered
// with the wrong code, is missed there. Everything else is judged as one proxy judges it. The
// client-address hash below keeps it all.
test('hashing on Mcp-Session-Id: a session whose initialize went to the other proxy misses only what initialize teaches', {
  skip,
}, async () => {
  const { expected, initializedAt, servedAt, findings } = await run(12);
  const split = [...servedAt].filter(([session, where]) => !where.has(initializedAt.get(session)!));
  assert.ok(split.length > 0);
  const needsInitialize = (line: string) => line.endsWith(' unknown-method-wrong-code');
  assert.ok(expected.some(needsInitialize), 'a lone proxy finds what needs initialize');
  for (const [session] of split)
    assert.deepEqual(
      findings(session),
      expected.filter((line) => !needsInitialize(line)),
      `session ${session}`,
    );
});

test('two proxies behind nginx hashing on the client address: initialize and the whole session on one proxy, judged as one', {
  skip,
}, async () => {
  const { expected, initializedAt, servedAt, findings, proxies } = await run(12, '$remote_addr', true);
  assert.equal(servedAt.size, 12);
  assert.ok(
    proxies.every((p) => p.exchanges().length > 0),
    'both proxies served sessions',
  );
  for (const [session, where] of servedAt) {
    assert.deepEqual([...where], [initializedAt.get(session)], `session ${session}: its initialize and its requests on one proxy`);
    assert.deepEqual(findings(session), expected, `session ${session}`);
  }
  assert.ok(
    expected.some((line) => line.endsWith(' unknown-method-wrong-code')),
    'the finding that needs initialize is among them',
  );
});
