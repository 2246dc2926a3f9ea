// Issue #24, two evasions a hostile run found, through the real proxy on real sockets:
// 1. an unknown tool's words after 2,000 characters of an isError result's text (no catalogue:
//    only the server's words tell) are judged, and enforce.yaml answers -32602 as it does when
//    they open the text; another tool's words that far in are not this call's;
// 2. a body that is not JSON answered HTTP 500 with -32603 is judged (parse-error-code); enforce
//    logs it and, like a 400 with a wrong code, passes it (parse-error-code has no rewrite).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { assertFires, assertSilent, runScenario, type Reply, type ScenarioRequest } from '../helpers/rule-scenario.ts';
import { shippedWith } from '../helpers/shipped-policy.ts';

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;

const VERSION = '2025-06-18';
const PADDING = `${'step ok; '.repeat(222)}\n`;
const noCatalogue = { limits: { maxToolsPerSession: 0 } };
const call = (name: string): ScenarioRequest => ({ method: 'tools/call', params: { name, arguments: {} } });
const toolError =
  (text: string) =>
  (req: { id?: unknown } | undefined): Reply => ({
    json: { jsonrpc: '2.0', id: req?.id, result: { content: [{ type: 'text', text }], isError: true } },
  });

describe('an unknown tool named past the first 1,024 characters', () => {
  test('audit: judged, and the client gets the server answer unchanged', async () => {
    const res = await runScenario({
      version: VERSION,
      request: call('nope'),
      respond: toolError(`${PADDING}Unknown tool: nope`),
      proxy: noCatalogue,
    });
    const v = assertFires(res, 'unknown-tool-as-iserror');
    assert.match(String(v.message), /calls unknown/);
    const body = JSON.parse(res.body);
    assert.equal(body.result.isError, true);
    assert.equal(body.result.content[0].text, `${PADDING}Unknown tool: nope`);
  });

  test('enforce.yaml: -32602 "Unknown tool: nope", as when the words open the text', async () => {
    for (const text of ['Unknown tool: nope', `${PADDING}Unknown tool: nope`]) {
      const res = await runScenario({
        version: VERSION,
        request: call('nope'),
        respond: toolError(text),
        proxy: { ...noCatalogue, policy: () => enforce },
      });
      assert.equal(res.status, 200);
      const body = JSON.parse(res.body);
      assert.equal(body.error?.code, -32602, text.slice(0, 40));
      assert.equal(body.error.message, 'Unknown tool: nope');
      assert.equal(body.error.data.serverMessage, text);
      assert.equal(assertFires(res, 'unknown-tool-as-iserror').applied, true);
    }
  });

  test("enforce.yaml: another tool's words that far in are not this call's: passed as it came", async () => {
    const text = `${PADDING}step 3 said: Unknown tool: fetch_rows`;
    const res = await runScenario({
      version: VERSION,
      request: call('run_pipeline'),
      respond: toolError(text),
      proxy: { ...noCatalogue, policy: () => enforce },
    });
    assertSilent(res, 'unknown-tool-as-iserror');
    assert.equal(JSON.parse(res.body).result.content[0].text, text);
  });
});

describe('a body that is not JSON answered HTTP 500', () => {
  const broken: ScenarioRequest = { method: 'tools/call', raw: '{"jsonrpc":"2.0","id":1,"method":' };
  const internal = (): Reply => ({ status: 500, json: { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } } });

  test('audit: -32603 fires parse-error-code; the client gets the 500 unchanged', async () => {
    const res = await runScenario({ version: VERSION, request: broken, respond: internal });
    const v = assertFires(res, 'parse-error-code');
    assert.equal(v.pointer, '/response/error/code');
    assert.match(String(v.message), /-32603 instead of -32700/);
    assertSilent(res, 'parse-error-id');
    assertSilent(res, 'parse-error-unanswered');
    assert.equal(res.status, 500);
    assert.equal(JSON.parse(res.body).error.code, -32603);
  });

  test('a made-up id on a 500 fires parse-error-id', async () => {
    const res = await runScenario({
      version: VERSION,
      request: broken,
      respond: () => ({ status: 500, json: { jsonrpc: '2.0', id: 1, error: { code: -32700, message: 'Parse error' } } }),
    });
    assertFires(res, 'parse-error-id');
    assertSilent(res, 'parse-error-code');
  });

  test('a 500 with -32700 and id null is right: silent', async () => {
    const res = await runScenario({
      version: VERSION,
      request: broken,
      respond: () => ({ status: 500, json: { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } } }),
    });
    assertSilent(res, 'parse-error-code');
    assertSilent(res, 'parse-error-id');
  });

  test('enforce.yaml with request-envelope logged (forwarded): logged, and passed as on a 400 (parse-error-code has no rewrite)', async () => {
    const envelopeLogged = await shippedWith('enforce', { 'request-envelope': 'log' });
    for (const status of [400, 500]) {
      const res = await runScenario({
        version: VERSION,
        request: broken,
        respond: () => ({ status, json: { jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } } }),
        proxy: { policy: () => envelopeLogged },
      });
      const v = assertFires(res, 'parse-error-code');
      assert.notEqual(v.applied, true);
      assert.equal(res.status, status);
      assert.equal(JSON.parse(res.body).error.code, -32603);
    }
  });
});
