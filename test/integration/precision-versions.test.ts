// A client asks for a protocol version nobody defined (issue 11): the version is a fact about the
// request, never the name of a rule table. The answer is judged by the rules for unsupported
// versions of the era the request was sent in: a request carrying `_meta` (or only the
// MCP-Protocol-Version header) is a 2026-07-28 request, which must be turned away with -32022,
// data { supported, requested } and HTTP 400 (R19); an initialize is a legacy request, answered
// with a version the server supports or an error (R15). Through the real proxy, audit and enforce.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { assertFires, assertSilent, MODERN, runScenario, type Reply, type ScenarioRequest } from '../helpers/rule-scenario.ts';

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;

const UNKNOWN = '2027-01-01';
const V4 = '2025-11-25';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';

/** A 2026-07-28-style tools/call asking for UNKNOWN, in `_meta` and in the header. */
const modernCall: ScenarioRequest = {
  method: 'tools/call',
  params: { name: 'echo', arguments: { text: 'hi' }, _meta: { [META_VERSION]: UNKNOWN } },
  headers: { 'mcp-protocol-version': UNKNOWN },
};

/** A legacy client's initialize proposing UNKNOWN, on no session. */
const legacyInitialize: ScenarioRequest = {
  method: 'initialize',
  id: 'init-unknown',
  params: { protocolVersion: UNKNOWN, capabilities: {}, clientInfo: { name: 't', version: '1' } },
  headers: { 'mcp-session-id': '', 'mcp-protocol-version': '' },
};

const error =
  (code: number, message: string, opts: { status?: number; data?: unknown } = {}) =>
  (req: { id?: unknown } | undefined): Reply => ({
    status: opts.status,
    json: { jsonrpc: '2.0', id: req?.id, error: { code, message, ...(opts.data === undefined ? {} : { data: opts.data }) } },
  });

const SUPPORTED = { supported: [MODERN], requested: UNKNOWN };

describe('a request for a version nobody defined, sent as a 2026-07-28 request', () => {
  test('-32602 "bad version" on HTTP 200 is flagged unsupported-version-code', async () => {
    const res = await runScenario({ version: MODERN, request: modernCall, respond: error(-32602, 'bad version') });
    const v = assertFires(res, 'unsupported-version-code');
    assert.equal(v.severity, 'error');
    assert.equal(v.pointer, '/response/error/code');
    assert.match(String(v.fix), /-32022/);
    assert.match(String(v.message), /2027-01-01/);
  });

  test('-32603 on HTTP 500 is not a JSON-RPC-layer answer: not judged as the version rejection', async () => {
    const res = await runScenario({ version: MODERN, request: modernCall, respond: error(-32603, 'Internal error', { status: 500 }) });
    assertSilent(res, 'unsupported-version-code');
  });

  test('-32022 with data { supported, requested } on HTTP 400 is right: no finding at all', async () => {
    const res = await runScenario({
      version: MODERN,
      request: modernCall,
      respond: error(-32022, 'Unsupported protocol version', { status: 400, data: SUPPORTED }),
    });
    assert.ok(res.exchange, 'the exchange was logged');
    assert.deepEqual(
      res.violations.map((v) => v.rule),
      [],
    );
  });

  test('-32022 on HTTP 200 is judged by 2026-07-28 pairing: error-status-pairing, not reserved-code', async () => {
    const res = await runScenario({
      version: MODERN,
      request: modernCall,
      respond: error(-32022, 'Unsupported protocol version', { data: SUPPORTED }),
    });
    assertFires(res, 'error-status-pairing');
    assertSilent(res, 'reserved-code');
    assertSilent(res, 'unsupported-version-code');
  });

  test('-32022 without data.supported is flagged error-data-required', async () => {
    const res = await runScenario({
      version: MODERN,
      request: modernCall,
      respond: error(-32022, 'Unsupported protocol version', { status: 400, data: { requested: UNKNOWN } }),
    });
    const v = assertFires(res, 'error-data-required');
    assert.equal(v.pointer, '/response/error/data/supported');
    assertSilent(res, 'reserved-code');
  });

  test('only the header names the version, no _meta: -32602 for the missing _meta on 400 is a right answer', async () => {
    const res = await runScenario({
      version: MODERN,
      request: {
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hi' } },
        noMeta: true,
        headers: { 'mcp-protocol-version': UNKNOWN },
      },
      respond: error(-32602, 'Missing _meta', { status: 400 }),
    });
    assertSilent(res, 'unsupported-version-code');
    assertSilent(res, 'error-status-pairing');
  });

  test('a 2026-07-28 request is untouched by these rules: -32602 on 200 stays silent', async () => {
    const res = await runScenario({
      version: MODERN,
      request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
      respond: error(-32602, 'Unknown tool: nope'),
    });
    assertSilent(res, 'unsupported-version-code');
  });

  test('under enforce the right answer goes out byte for byte, status kept', async () => {
    const res = await runScenario({
      version: MODERN,
      request: modernCall,
      respond: (req) => ({
        status: 400,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: req?.id,
          error: { code: -32022, message: 'Unsupported protocol version', data: SUPPORTED },
        }),
        headers: { 'content-type': 'application/json' },
      }),
      proxy: { policy: () => enforce },
    });
    assert.equal(res.status, 400);
    assert.equal(
      res.body,
      JSON.stringify({ jsonrpc: '2.0', id: 'test-1', error: { code: -32022, message: 'Unsupported protocol version', data: SUPPORTED } }),
    );
    assert.deepEqual(
      res.violations.map((v) => v.rule),
      [],
    );
  });

  test('under enforce the wrong answer is logged, not rewritten (the proxy does not know what the server supports)', async () => {
    const res = await runScenario({
      version: MODERN,
      request: modernCall,
      respond: error(-32602, 'bad version'),
      proxy: { policy: () => enforce },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(JSON.parse(res.body), { jsonrpc: '2.0', id: 'test-1', error: { code: -32602, message: 'bad version' } });
    const v = assertFires(res, 'unsupported-version-code');
    assert.equal(v.action, 'log');
  });
});

describe('a legacy initialize proposing a version nobody defined', () => {
  test('answered with a version the server supports: silent', async () => {
    const res = await runScenario({
      version: V4,
      request: legacyInitialize,
      respond: (req) => ({
        json: { jsonrpc: '2.0', id: req?.id, result: { protocolVersion: V4, capabilities: {}, serverInfo: { name: 's', version: '1' } } },
      }),
    });
    assert.ok(res.exchange);
    assert.deepEqual(
      res.violations.map((v) => v.rule),
      [],
    );
  });

  test('answered with the legacy example error (-32602, data { supported, requested }): silent', async () => {
    const res = await runScenario({
      version: V4,
      request: legacyInitialize,
      respond: error(-32602, 'Unsupported protocol version', { data: { supported: [V4], requested: UNKNOWN } }),
    });
    assert.ok(res.exchange);
    assert.deepEqual(
      res.violations.map((v) => v.rule),
      [],
    );
  });

  test('a modern-only server turns it away with 400 and -32022: silent (R22)', async () => {
    const res = await runScenario({
      version: V4,
      request: legacyInitialize,
      respond: error(-32022, 'Unsupported protocol version', { status: 400, data: SUPPORTED }),
    });
    assert.ok(res.exchange);
    assert.deepEqual(
      res.violations.map((v) => v.rule),
      [],
    );
  });

  test('answered by echoing the undefined version: initialize-version', async () => {
    const res = await runScenario({
      version: V4,
      request: legacyInitialize,
      respond: (req) => ({
        json: {
          jsonrpc: '2.0',
          id: req?.id,
          result: { protocolVersion: UNKNOWN, capabilities: {}, serverInfo: { name: 's', version: '1' } },
        },
      }),
    });
    assertFires(res, 'initialize-version');
    assertSilent(res, 'unsupported-version-code');
  });
});
