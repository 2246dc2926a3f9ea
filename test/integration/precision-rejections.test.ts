// Transport rejections under config/enforce.yaml (issue 11): a 4xx whose JSON-RPC body uses a code
// of the legacy range (the SDK's 400 "No valid session ID", 406 Not Acceptable, 415 Unsupported
// Media Type, all -32000 with id null) is rewritten to what the finding's own fix says, -32600
// (Invalid Request), status kept. An id-less rejection is allowed from 2025-03-26 on (R6), so the
// rewrite keeps its id as the server sent it; a rewrite that fills in the request's id always comes
// with the error-id-null finding that says why. Through the real proxy.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { assertFires, assertSilent, runScenario, type Reply, type ScenarioRequest, type ScenarioResult } from '../helpers/rule-scenario.ts';

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;

const call: ScenarioRequest = { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };

/** The SDK's rejection: { jsonrpc, error: { code, message }, id: null } (or the request's id). */
const rejection =
  (status: number, code: number, message: string, id: 'null' | 'omit' | 'request' = 'null') =>
  (req: { id?: unknown } | undefined): Reply => {
    const msg: Record<string, unknown> = { jsonrpc: '2.0', error: { code, message } };
    if (id === 'null') msg.id = null;
    else if (id === 'request') msg.id = req?.id;
    return { status, json: msg };
  };

type Msg = { jsonrpc: string; id?: unknown; error: { code: number; message: string; data?: Record<string, unknown> } };

/** The rewrite records of the request under test. */
const rewrites = (res: ScenarioResult) => res.records.filter((r) => r.msg === 'rewrite');

/** Every rewrite that changed the id came with a finding of error-id-null on that exchange. */
function idChangesAreExplained(res: ScenarioResult, sent: unknown, got: Msg): void {
  if (got.id === sent) return;
  const v = res.violations.find((f) => f.rule === 'error-id-null');
  assert.ok(v, `the id went from ${JSON.stringify(sent)} to ${JSON.stringify(got.id)} without an error-id-null finding`);
}

const TRANSPORT: Array<{ name: string; status: number; message: string }> = [
  { name: '400 "No valid session ID"', status: 400, message: 'Bad Request: No valid session ID provided' },
  { name: '406 Not Acceptable', status: 406, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' },
  { name: '415 Unsupported Media Type', status: 415, message: 'Unsupported Media Type: Content-Type must be application/json' },
];

describe('transport rejections under enforce.yaml', () => {
  for (const version of ['2025-06-18', '2025-11-25']) {
    for (const t of TRANSPORT) {
      test(`${t.name} with -32000, id null (${version}): -32600 as the fix says, status and null id kept`, async () => {
        const res = await runScenario({
          version,
          request: call,
          respond: rejection(t.status, -32000, t.message),
          proxy: { policy: () => enforce },
        });
        const v = assertFires(res, 'legacy-range-code');
        assert.match(String(v.fix), /-32600/);
        assertSilent(res, 'error-id-null');
        assert.equal(res.status, t.status);
        const got = JSON.parse(res.body) as Msg;
        assert.deepEqual(got, { jsonrpc: '2.0', id: null, error: { code: -32600, message: t.message, data: { originalCode: -32000 } } });
        idChangesAreExplained(res, null, got);
        assert.equal(rewrites(res).length, 1);
      });
    }
  }

  test("400 with -32000 and the request's id: -32600, the id kept", async () => {
    const res = await runScenario({
      version: '2025-11-25',
      request: call,
      respond: rejection(400, -32000, 'Bad Request: No valid session ID provided', 'request'),
      proxy: { policy: () => enforce },
    });
    assertFires(res, 'legacy-range-code');
    const got = JSON.parse(res.body) as Msg;
    assert.equal(res.status, 400);
    assert.deepEqual(got, {
      jsonrpc: '2.0',
      id: 'test-1',
      error: { code: -32600, message: 'Bad Request: No valid session ID provided', data: { originalCode: -32000 } },
    });
  });

  test('an id-less 400 under 2025-11-25 keeps its id absent', async () => {
    const res = await runScenario({
      version: '2025-11-25',
      request: call,
      respond: rejection(400, -32000, 'Bad Request: No valid session ID provided', 'omit'),
      proxy: { policy: () => enforce },
    });
    const got = JSON.parse(res.body) as Msg;
    assert.equal('id' in got, false, res.body);
    assert.equal(got.error.code, -32600);
  });

  test('2024-11-05 requires the id even on a rejection: error-id-null fires, and the filled-in id comes with it', async () => {
    const res = await runScenario({
      version: '2024-11-05',
      request: call,
      respond: rejection(400, -32000, 'Bad Request'),
      proxy: { policy: () => enforce },
    });
    const v = assertFires(res, 'error-id-null');
    assert.equal(v.action, 'rewrite');
    const got = JSON.parse(res.body) as Msg;
    assert.equal(got.id, 'test-1');
    assert.equal(got.error.code, -32600);
    idChangesAreExplained(res, null, got);
  });

  test('a 200 error with id null and -32000 is no transport rejection: -32603, the id filled in with error-id-null', async () => {
    const res = await runScenario({
      version: '2025-06-18',
      request: call,
      respond: rejection(200, -32000, 'Something failed'),
      proxy: { policy: () => enforce },
    });
    assertFires(res, 'error-id-null');
    const got = JSON.parse(res.body) as Msg;
    assert.equal(got.id, 'test-1');
    assert.equal(got.error.code, -32603);
    idChangesAreExplained(res, null, got);
  });

  test('a 500 with -32000 and id null: -32603 (a failure, not a rejection), the id left as sent (no finding asks for it)', async () => {
    const res = await runScenario({
      version: '2025-06-18',
      request: call,
      respond: rejection(500, -32000, 'Something failed'),
      proxy: { policy: () => enforce },
    });
    const v = assertFires(res, 'legacy-range-code');
    assert.doesNotMatch(String(v.fix), /-32600/);
    assertSilent(res, 'error-id-null');
    const got = JSON.parse(res.body) as Msg;
    assert.equal(res.status, 500);
    assert.equal(got.error.code, -32603);
    assert.equal(got.id, null);
  });
});
