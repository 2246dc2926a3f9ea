// More than one host: two proxies behind nginx hashing on Mcp-Session-Id (the README's Kubernetes
// ingress) judge a session as one proxy does. Debian's nginx-light (.ci/run installs it); without it
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

/** A lone proxy's findings for the session, then `sessions` sessions through nginx in front of two proxies. */
async function run(sessions: number) {
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
  );
  closers.push(() => balancer.stop());
  for (let i = 0; i < sessions; i++) await driveSession(new URL(server.url.pathname, `http://127.0.0.1:${balancer.port}`));
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

test('a session whose initialize nginx sent to the other proxy is judged as one proxy judges it', {
  skip,
  todo: "initialize names no session, so nginx's hash sends it by an empty key: the proxy serving the session's later requests never saw its initialize, and judges without the server's capabilities (unknown-method-wrong-code is missed). README, Kubernetes, says so",
}, async () => {
  const { expected, initializedAt, servedAt, findings } = await run(12);
  const split = [...servedAt].filter(([session, where]) => !where.has(initializedAt.get(session)!));
  assert.ok(split.length > 0);
  for (const [session] of split) assert.deepEqual(findings(session), expected, `session ${session}`);
});
