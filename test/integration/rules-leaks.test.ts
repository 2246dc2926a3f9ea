// Leak rules through the real proxy: each fires on a leak in error.message, error.data and an
// isError result's text (legacy and modern sessions), and stays silent on a clean error and on a
// normal result that mentions the same paths and hosts (results are not error text).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { policyFile } from '../helpers/engine-driver.ts';
import { assertFires, assertSilent, runScenario, type Reply } from '../helpers/rule-scenario.ts';

const LEGACY = '2025-06-18';
const MODERN = '2026-07-28';
const RULES = ['leaked-stack-trace', 'leaked-path', 'leaked-private-address', 'leaked-internal-host'];
const call = { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };

type Req = { id?: unknown } | undefined;
const withType = (version: string, result: Record<string, unknown>) =>
  version === MODERN ? { resultType: 'complete', ...result } : result;
const place = {
  message:
    (text: string) =>
    (req: Req): Reply => ({ json: { jsonrpc: '2.0', id: req?.id, error: { code: -32603, message: text } } }),
  data:
    (text: string) =>
    (req: Req): Reply => ({
      json: { jsonrpc: '2.0', id: req?.id, error: { code: -32603, message: 'Internal error', data: { cause: { detail: text } } } },
    }),
  isError:
    (text: string, version: string) =>
    (req: Req): Reply => ({
      json: { jsonrpc: '2.0', id: req?.id, result: withType(version, { content: [{ type: 'text', text }], isError: true }) },
    }),
};
const POINTER = {
  message: '/response/error/message',
  data: '/response/error/data/cause/detail',
  isError: '/response/result/content/0/text',
};

/** [rule, where, version, text, the part the evidence must show] */
const cases: Array<[string, keyof typeof place, string, string, string]> = [
  [
    'leaked-stack-trace',
    'message',
    LEGACY,
    'Error: boom\n    at handler (/srv/app/dist/tools.js:42:17)',
    'at handler (/srv/app/dist/tools.js:42:17)',
  ],
  [
    'leaked-stack-trace',
    'data',
    MODERN,
    'Traceback (most recent call last):\n  File "/app/main.py", line 3, in run',
    'Traceback (most recent call last):',
  ],
  [
    'leaked-stack-trace',
    'isError',
    LEGACY,
    'java.lang.NullPointerException\n\tat com.example.Tools.echo(Tools.java:42)',
    'at com.example.Tools.echo(Tools.java:42)',
  ],
  [
    'leaked-path',
    'message',
    MODERN,
    "ENOENT: no such file or directory, open '/home/deploy/app/config.json'",
    '/home/deploy/app/config.json',
  ],
  ['leaked-path', 'data', LEGACY, 'cannot open C:\\Users\\svc\\app\\data.db', 'C:\\Users\\svc\\app\\data.db'],
  ['leaked-path', 'isError', MODERN, 'Failed to read /var/lib/tool/cache.json', '/var/lib/tool/cache.json'],
  ['leaked-private-address', 'message', LEGACY, 'connect ECONNREFUSED 10.0.3.7:5432', '10.0.3.7:5432'],
  ['leaked-private-address', 'data', MODERN, 'upstream 192.168.10.20 timed out', '192.168.10.20'],
  ['leaked-private-address', 'isError', LEGACY, 'could not reach [fd12:3456:789a::1]:8080', 'fd12:3456:789a::1'],
  ['leaked-internal-host', 'message', MODERN, 'getaddrinfo ENOTFOUND db-primary.internal', 'db-primary.internal'],
  [
    'leaked-internal-host',
    'data',
    LEGACY,
    'pool error: postgres://app:hunter2@db-primary:5432/prod',
    'postgres://app:[REDACTED]@db-primary:5432/prod',
  ],
  [
    'leaked-internal-host',
    'isError',
    MODERN,
    'Redis at redis://cache.svc.cluster.local:6379 refused the connection',
    'redis://cache.svc.cluster.local:6379',
  ],
];

describe('leak rules through the proxy', () => {
  for (const [rule, where, version, text, part] of cases) {
    test(`${rule} fires on ${where} (${version})`, async () => {
      const respond = where === 'isError' ? place.isError(text, version) : place[where](text);
      const result = await runScenario({ version, request: call, respond });
      const v = assertFires(result, rule);
      assert.equal(v.severity, rule === 'leaked-stack-trace' ? 'error' : 'warning');
      assert.equal(v.pointer, POINTER[where]);
      assert.ok(String(v.evidence).includes(part.replace(/\s+/g, ' ')), String(v.evidence));
      assert.equal(v.method, 'tools/call');
      assert.equal(v.id, 'test-1');
      assert.equal(v.protocolVersion, version);
      assert.ok(!JSON.stringify(result.violations).includes('hunter2'), 'a password reached a violation record');
      for (const other of RULES.filter((r) => r !== rule && !(rule === 'leaked-stack-trace' && r === 'leaked-path')))
        assertSilent(result, other);
      // The client still gets the server's answer: the rules judge, they do not edit.
      assert.ok(result.body.includes(JSON.stringify(text).slice(1, 20)), result.body);
    });
  }

  for (const version of [LEGACY, MODERN]) {
    test(`all stay silent on a clean error (${version})`, async () => {
      const result = await runScenario({
        version,
        request: call,
        respond: (req) => ({
          json: { jsonrpc: '2.0', id: req?.id, error: { code: -32602, message: 'Unknown tool: nope', data: { tool: 'nope' } } },
        }),
      });
      for (const rule of RULES) assertSilent(result, rule);
      assert.equal(result.exchange?.outcome, 'error:-32602');
    });

    test(`all stay silent on a clean isError result (${version})`, async () => {
      const result = await runScenario({ version, request: call, respond: place.isError('The text must not be empty', version) });
      for (const rule of RULES) assertSilent(result, rule);
    });

    test(`all stay silent on a normal result that mentions paths, addresses and hosts (${version})`, async () => {
      const text = 'Saved to /home/u/notes/today.md; synced with nas.local (192.168.1.5); log: at f (/app/x.js:1:2)';
      const result = await runScenario({
        version,
        request: call,
        respond: (req) => ({ json: { jsonrpc: '2.0', id: req?.id, result: withType(version, { content: [{ type: 'text', text }] }) } }),
      });
      for (const rule of RULES) assertSilent(result, rule);
      assert.equal(result.exchange?.outcome, 'result');
    });
  }

  test('a path the client sent, echoed in the error, is not a leak', async () => {
    const result = await runScenario({
      version: LEGACY,
      request: { method: 'tools/call', params: { name: 'echo', arguments: { text: '/home/u/missing.txt' } } },
      respond: place.message("ENOENT: no such file or directory, open '/home/u/missing.txt'"),
    });
    assertSilent(result, 'leaked-path');
  });

  test("enforce: a loopback backend in an error (a Go server's kubeconfig on 127.0.0.1) reaches the client unchanged, no leak found", async () => {
    const enforce = await policyFile('enforce');
    const text =
      'failed to list pods: Get "https://127.0.0.1:6443/api/v1/pods": dial tcp 127.0.0.1:6443: connect: connection refused; also [::1]:6443, localhost:6443';
    for (const where of ['message', 'isError'] as const) {
      const result = await runScenario({
        version: LEGACY,
        request: call,
        respond: place[where](text, LEGACY),
        proxy: { policy: () => enforce },
      });
      for (const rule of RULES) assertSilent(result, rule);
      assert.ok(result.body.includes('dial tcp 127.0.0.1:6443'), `${where}: ${result.body}`);
      assert.ok(result.body.includes('localhost:6443'), `${where}: ${result.body}`);
    }
  });
});
