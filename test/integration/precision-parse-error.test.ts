// A client body that is not JSON, answered with no JSON-RPC error (issue 11): an empty HTTP 400
// (what a framework's body parser often sends), an HTML page, a framework's own JSON. The POST
// opened no request (nothing could be read), so the exchange rules do not see it: the POST-level
// rule parse-error-unanswered does, under every version; enforce.yaml answers -32700 Parse error
// with id null instead. Through the real proxy.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFires, assertSilent, MODERN, runScenario, type Reply, type ScenarioRequest } from '../helpers/rule-scenario.ts';
import { shippedWith } from '../helpers/shipped-policy.ts';

// enforce.yaml blocks such a body itself (request-envelope): forwarded, the server's answer is judged.
const enforce = await shippedWith('enforce', { 'request-envelope': 'log' });

const VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', MODERN];
const broken: ScenarioRequest = { method: 'tools/call', raw: '{"jsonrpc":"2.0","id":1,"method":' };

const reply =
  (status: number, body = '', contentType?: string) =>
  (): Reply => ({ status, body, headers: contentType ? { 'content-type': contentType } : {} });
const parseError =
  (status: number, id: unknown = null) =>
  (): Reply => ({ status, json: { jsonrpc: '2.0', id, error: { code: -32700, message: 'Parse error' } } });

describe('parse-error-unanswered', () => {
  for (const version of VERSIONS) {
    test(`${version}: an empty HTTP 400 fires it`, async () => {
      const res = await runScenario({ version, request: broken, respond: reply(400) });
      const v = assertFires(res, 'parse-error-unanswered');
      assert.equal(v.severity, 'error');
      assert.equal(v.pointer, '/response');
      assert.match(String(v.message), /empty body/);
      assert.match(String(v.fix), /-32700/);
    });

    test(`${version}: 400 with -32700 and id null is the right answer: silent`, async () => {
      const res = await runScenario({ version, request: broken, respond: parseError(400) });
      assertSilent(res, 'parse-error-unanswered');
      assertSilent(res, 'parse-error-code');
    });
  }

  test("an HTML 400 and a framework's JSON fire it; a wrong code is parse-error-code's", async () => {
    assertFires(
      await runScenario({
        version: '2025-06-18',
        request: broken,
        respond: reply(400, '<html><body>Bad Request</body></html>', 'text/html'),
      }),
      'parse-error-unanswered',
    );
    assertFires(
      await runScenario({ version: '2025-06-18', request: broken, respond: reply(400, '{"error":"invalid json"}', 'application/json') }),
      'parse-error-unanswered',
    );
    const wrong = await runScenario({
      version: '2025-06-18',
      request: broken,
      respond: () => ({ status: 400, json: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } } }),
    });
    assertSilent(wrong, 'parse-error-unanswered');
    assertFires(wrong, 'parse-error-code');
  });

  test('rejections before the body is read (406, 415, 413) and 5xx stay silent', async () => {
    for (const status of [406, 413, 415, 500]) {
      assertSilent(await runScenario({ version: '2025-06-18', request: broken, respond: reply(status) }), 'parse-error-unanswered');
    }
  });

  test("a well-formed request answered with an empty 400 is not this rule's", async () => {
    const res = await runScenario({
      version: '2025-06-18',
      request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
      respond: reply(400),
    });
    assertSilent(res, 'parse-error-unanswered');
  });
});

describe('enforce.yaml with request-envelope logged', () => {
  test('the right answer goes out as it came', async () => {
    const res = await runScenario({ version: '2025-06-18', request: broken, respond: parseError(400), proxy: { policy: () => enforce } });
    assert.equal(res.status, 400);
    assert.equal(res.body, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
  });

  test('an empty HTTP 400 becomes -32700 with id null', async () => {
    const res = await runScenario({ version: '2025-06-18', request: broken, respond: reply(400), proxy: { policy: () => enforce } });
    assert.equal(res.status, 400);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    assert.deepEqual(JSON.parse(res.body), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error', data: { reason: 'parse-error-unanswered', upstreamStatus: 400 } },
    });
    const v = assertFires(res, 'parse-error-unanswered');
    assert.equal(v.action, 'rewrite');
    assert.equal(v.applied, true);
  });
});
