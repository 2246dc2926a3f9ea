// invalid-request-code through the real proxy (issue #26): valid JSON that is not a request
// (`"method": 42`) answered -32603 or -32700 is judged; -32600 and a valid request stay silent.
// enforce.yaml logs it and changes nothing the client gets (the rule has no rewrite: the framing
// group is logged).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { assertFires, assertSilent, MODERN, runScenario, type Reply, type ScenarioRequest } from '../helpers/rule-scenario.ts';
import { shippedWith } from '../helpers/shipped-policy.ts';

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;
const envelopeLogged = await shippedWith('enforce', { 'request-envelope': 'log' });

const notARequest: ScenarioRequest = { method: 'tools/list', raw: '{"jsonrpc":"2.0","id":1,"method":42}' };
const answer =
  (code: number, status = 400) =>
  (): Reply => ({ status, json: { jsonrpc: '2.0', id: null, error: { code, message: 'rejected' } } });

describe('invalid-request-code', () => {
  for (const version of ['2025-06-18', MODERN]) {
    for (const code of [-32603, -32700]) {
      test(`${version}: "method": 42 answered ${code} fires it`, async () => {
        const res = await runScenario({ version, request: notARequest, respond: answer(code) });
        const v = assertFires(res, 'invalid-request-code');
        assert.equal(v.pointer, '/response/error/code');
        assert.match(String(v.message), /method is not a string/);
        assert.equal(JSON.parse(res.body).error.code, code);
      });
    }
    test(`${version}: -32600 is the right answer: silent`, async () => {
      assertSilent(await runScenario({ version, request: notARequest, respond: answer(-32600) }), 'invalid-request-code');
    });
  }

  test('a valid request answered -32603 is not judged by it', async () => {
    const res = await runScenario({
      version: '2025-06-18',
      request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
      respond: (req) => ({ json: { jsonrpc: '2.0', id: req?.id, error: { code: -32603, message: 'boom' } } }),
    });
    assertSilent(res, 'invalid-request-code');
  });

  test('enforce.yaml with request-envelope logged: invalid-request-code logged, and the client gets the server answer as it came', async () => {
    const res = await runScenario({
      version: '2025-06-18',
      request: notARequest,
      respond: answer(-32603, 500),
      proxy: { policy: () => envelopeLogged },
    });
    const v = assertFires(res, 'invalid-request-code');
    assert.notEqual(v.applied, true);
    assert.equal(res.status, 500);
    assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'rejected' } });
  });

  test('enforce.yaml: the proxy answers it -32600 with the id it could read (request-envelope: block), and the server never sees it', async () => {
    const res = await runScenario({
      version: '2025-06-18',
      request: notARequest,
      respond: () => assert.fail('forwarded to the server'),
      proxy: { policy: () => enforce },
    });
    assert.equal(res.status, 400);
    const body = JSON.parse(res.body) as { id: unknown; error: { code: number; data: { rule: string } } };
    assert.deepEqual([body.id, body.error.code, body.error.data.rule], [1, -32600, 'request-envelope']);
    assertSilent(res, 'invalid-request-code');
  });
});
