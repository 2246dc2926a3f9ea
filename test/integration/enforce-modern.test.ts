// Enforce under 2026-07-28 on real sockets: a scripted modern server (no handshake, no session)
// answers one request wrongly, the proxy runs config/enforce.yaml, and an undici client reads what
// came back, as a JSON body and as an SSE stream. Every message the proxy emits is checked against
// the official 2026-07-28 schema; in SSE the events around the edited one pass byte for byte.
// Client-side rules: a request whose headers disagree with its body reaches the server with the
// headers re-derived (header-mismatch: rewrite), or is answered by the proxy and never forwarded
// (header-mismatch: block, missing-request-meta: block).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { jsonRpcResult, startRawServer, type RawServer } from '../fixtures/raw-server.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { MODERN, runScenario, type Reply, type ScenarioRequest, type ScenarioResult } from '../helpers/rule-scenario.ts';
import { assertValidResponse } from '../helpers/schema-check.ts';
import { responseIn, sseBlocks } from '../helpers/sdk-wire.ts';

type Mode = 'json' | 'sse';
type Msg = Record<string, unknown>;

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;

function policyOf(yaml: string): Policy {
  const result = loadPolicyText(yaml, 'test.yaml', { rewritable: REWRITABLE });
  assert.ok(result.ok, JSON.stringify(!result.ok && result.errors));
  return result.policy;
}

const MARKER = '[redacted]';
/** Around the response event in SSE mode: a notification before, a comment after. */
const BEFORE =
  'event: message\nid: m-1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n';
const AFTER = ': stream done\n\n';
const responseEvent = (json: string): string => `event: message\nid: m-2\ndata: ${json}\n\n`;

/** The server's answer to the request under test, as a JSON body or as the middle event of a stream. */
function answer(mode: Mode, message: (id: unknown) => Msg, status = 200): (req: { id?: unknown } | undefined) => Reply {
  return (req) => {
    const msg = message(req?.id);
    return mode === 'json' ? { status, json: msg } : { status, sse: [BEFORE, responseEvent(JSON.stringify(msg)), AFTER] };
  };
}

const call = (name: string, args: Msg = { text: 'hi' }): ScenarioRequest => ({ method: 'tools/call', params: { name, arguments: args } });
const error =
  (code: number, message: string, data?: unknown) =>
  (id: unknown): Msg => ({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } });
const result =
  (value: Msg) =>
  (id: unknown): Msg => ({ jsonrpc: '2.0', id, result: value });

interface Case {
  name: string;
  request: ScenarioRequest;
  capabilities?: Record<string, unknown>;
  message: (id: unknown) => Msg;
  status?: number;
  /** The rule whose rewrite the client receives. */
  rule: string;
  /** The HTTP status the client must get, by mode. */
  expectStatus: Record<Mode, number>;
  /** Whether the message itself changes; false: only the status does (JSON), or nothing (SSE). */
  edits: Record<Mode, boolean>;
  /** Checks the message the client got. */
  check: (msg: Msg, mode: Mode) => void;
}

const leak = (text: string, leaked: string, kept: string) => (got: string) => {
  assert.ok(!got.includes(leaked), `${leaked} still in ${JSON.stringify(got)}`);
  assert.ok(got.includes(MARKER), `no marker in ${JSON.stringify(got)}`);
  assert.ok(got.startsWith(kept), `the rest is kept: ${JSON.stringify(got)} (was ${JSON.stringify(text)})`);
};
const errorOf = (msg: Msg) => msg.error as { code: number; message: string; data?: Record<string, unknown> };
const resultOf = (msg: Msg) => msg.result as { resultType?: string; isError?: boolean; content: Array<{ text: string }> };

const STACK = 'Error: boom\n    at handler (/srv/app/dist/tools.js:42:17)';
const PATH = 'cannot open /home/deploy/app/config.json';
const IP = 'connect ECONNREFUSED 10.0.3.7:5432';
const HOST = 'getaddrinfo ENOTFOUND db-primary.internal';

const BOTH = { json: true, sse: true };

const CASES: Case[] = [
  {
    name: '-32002 on resources/read becomes -32602',
    request: { method: 'resources/read', params: { uri: 'file:///missing.txt' } },
    capabilities: { tools: {}, resources: {} },
    message: error(-32002, 'Resource not found', { uri: 'file:///missing.txt' }),
    rule: 'resource-not-found-code',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) =>
      assert.deepEqual(msg.error, {
        code: -32602,
        message: 'Resource not found',
        data: { uri: 'file:///missing.txt', originalCode: -32002 },
      }),
  },
  {
    name: '-32002 outside resources/read (retired in 2026-07-28) becomes -32602',
    request: call('echo'),
    message: error(-32002, 'No such record'),
    rule: 'retired-code',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) => assert.deepEqual(msg.error, { code: -32602, message: 'No such record', data: { originalCode: -32002 } }),
  },
  {
    name: '-32601 on 200 gets 404',
    request: { method: 'prompts/list', params: {} },
    message: error(-32601, 'Method not found'),
    rule: 'unknown-method-status',
    expectStatus: { json: 404, sse: 200 },
    edits: { json: false, sse: false },
    check: (msg) => assert.deepEqual(msg.error, { code: -32601, message: 'Method not found' }),
  },
  {
    name: 'an unknown tool answered -32601 becomes -32602, still on 200 (the 404 pairing is for unknown methods)',
    request: call('nope', {}),
    message: error(-32601, 'Method not found'),
    rule: 'unknown-tool-wrong-code',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) => assert.equal(errorOf(msg).code, -32602),
  },
  {
    name: '-32022 on 200 gets 400',
    request: call('echo'),
    message: error(-32022, 'Unsupported protocol version', { supported: ['2025-11-25'], requested: MODERN }),
    rule: 'error-status-pairing',
    expectStatus: { json: 400, sse: 200 },
    edits: { json: false, sse: false },
    check: (msg) => assert.equal(errorOf(msg).code, -32022),
  },
  {
    name: 'a result without resultType gets "complete"',
    request: call('echo'),
    message: result({ content: [{ type: 'text', text: 'hi' }] }),
    rule: 'result-type-missing',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) => assert.deepEqual(msg.result, { content: [{ type: 'text', text: 'hi' }], resultType: 'complete' }),
  },
  {
    name: 'an unknown tool answered with isError becomes -32602',
    request: call('nope', {}),
    message: result({ resultType: 'complete', content: [{ type: 'text', text: 'Tool nope not found' }], isError: true }),
    rule: 'unknown-tool-as-iserror',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) =>
      assert.deepEqual(msg.error, { code: -32602, message: 'Unknown tool: nope', data: { serverMessage: 'Tool nope not found' } }),
  },
  {
    name: 'a stack trace in error.message is redacted',
    request: call('echo'),
    message: error(-32603, STACK),
    rule: 'leaked-stack-trace',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) => leak(STACK, '/srv/app/dist/tools.js', 'Error: boom')(errorOf(msg).message),
  },
  {
    name: 'a path in error.data is redacted',
    request: call('echo'),
    message: error(-32603, 'Internal error', { detail: PATH }),
    rule: 'leaked-path',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) => leak(PATH, '/home/deploy', 'cannot open ')(String(errorOf(msg).data?.detail)),
  },
  {
    name: 'a private address in isError text is redacted',
    request: call('echo'),
    message: result({ resultType: 'complete', content: [{ type: 'text', text: IP }], isError: true }),
    rule: 'leaked-private-address',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) => leak(IP, '10.0.3.7', 'connect ECONNREFUSED ')(resultOf(msg).content[0]!.text),
  },
  {
    name: 'an internal host in error.message is redacted',
    request: call('echo'),
    message: error(-32603, HOST),
    rule: 'leaked-internal-host',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) => leak(HOST, 'db-primary.internal', 'getaddrinfo ENOTFOUND ')(errorOf(msg).message),
  },
  {
    name: "an error with a null id gets the request's id",
    request: call('echo'),
    message: (_id) => error(-32603, 'Database unavailable')(null),
    rule: 'error-id-null',
    expectStatus: { json: 200, sse: 200 },
    edits: BOTH,
    check: (msg) => assert.deepEqual(msg.error, { code: -32603, message: 'Database unavailable' }),
  },
];

const findRecord = (records: LogRecord[], msg: string, pred: (r: LogRecord) => boolean = () => true) =>
  records.find((r) => r.msg === msg && pred(r));

/** What the client got: the response message, after checking the body's framing. */
function received(r: ScenarioResult, mode: Mode, serverJson: string, edits: boolean): Msg {
  const type = String(r.headers['content-type'] ?? '');
  const msg = responseIn(type, r.body);
  if (mode === 'sse') {
    assert.match(type, /^text\/event-stream/);
    assert.ok(r.body.startsWith(BEFORE), `the event before arrives byte for byte: ${JSON.stringify(r.body)}`);
    assert.ok(r.body.endsWith(AFTER), `the block after arrives byte for byte: ${JSON.stringify(r.body)}`);
    const blocks = sseBlocks(r.body);
    assert.equal(blocks.length, 3, r.body);
    const middle = blocks[1]!;
    assert.equal(middle.raw, responseEvent(middle.data), 'the response event keeps its event name and id, in place');
    if (edits) assert.notEqual(middle.data, serverJson);
    else assert.equal(middle.data, serverJson);
  } else {
    assert.match(type, /^application\/json/);
    if (edits) assert.notEqual(r.body, serverJson);
    else assert.deepEqual(JSON.parse(r.body), JSON.parse(serverJson));
  }
  return msg;
}

describe('enforce.yaml under 2026-07-28: server answers put right', () => {
  for (const mode of ['json', 'sse'] as const) {
    for (const k of CASES) {
      test(`${k.name} (${mode})`, async () => {
        const r = await runScenario({
          version: MODERN,
          request: k.request,
          ...(k.capabilities ? { capabilities: k.capabilities } : {}),
          respond: answer(mode, k.message, k.status),
          proxy: { policy: () => enforce },
        });
        const serverJson = JSON.stringify(k.message('test-1'));
        assert.equal(r.status, k.expectStatus[mode], r.body);
        const msg = received(r, mode, serverJson, k.edits[mode]);
        assertValidResponse(msg, MODERN, k.request.method === 'tools/call' ? 'tools/call' : undefined);
        assert.equal(msg.id, 'test-1');
        k.check(msg, mode);

        const violation = r.violations.find((v) => v.rule === k.rule);
        const changed = k.edits[mode] || k.expectStatus[mode] !== (k.status ?? 200);
        const rewrite = findRecord(r.records, 'rewrite', (x) => x.id === 'test-1');
        if (changed) {
          assert.ok(violation, `${k.rule} fires; saw ${JSON.stringify(r.violations.map((v) => v.rule))}`);
          assert.equal(violation.action, 'rewrite');
          assert.equal(violation.applied, true);
          assert.ok(rewrite, 'a rewrite record');
          assert.ok((rewrite.rules as string[]).includes(k.rule), JSON.stringify(rewrite.rules));
          assert.equal(typeof rewrite.before, 'string');
          assert.deepEqual(JSON.parse(String(rewrite.after)), msg, 'the after excerpt is what the client got');
          if (k.expectStatus[mode] !== 200) assert.equal(rewrite.status, k.expectStatus[mode]);
          assert.equal(r.exchange?.verdict, 'rewrite');
          assert.equal(r.exchange?.status, k.expectStatus[mode]);
        } else {
          // An SSE stream has sent its status line already: nothing to put right, nothing rewritten.
          assert.equal(rewrite, undefined, JSON.stringify(rewrite));
          assert.equal(r.exchange?.verdict, undefined);
          if (violation) assert.equal(violation.applied, false);
        }
      });
    }
  }

  test('HTML on 200 becomes -32603 on 200', async () => {
    const r = await runScenario({
      version: MODERN,
      request: call('echo'),
      respond: () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>Bad Gateway</h1></body></html>' }),
      proxy: { policy: () => enforce },
    });
    assert.equal(r.status, 200);
    const msg = responseIn(String(r.headers['content-type']), r.body);
    assertValidResponse(msg, MODERN);
    assert.equal(msg.id, 'test-1');
    assert.equal(errorOf(msg).code, -32603);
    assert.deepEqual(errorOf(msg).data, { reason: 'html-body', upstreamStatus: 200 });
    assert.ok(!r.body.includes('<html'), r.body);
    const rewrite = findRecord(r.records, 'rewrite', (x) => x.id === 'test-1');
    assert.equal(rewrite?.rule, 'html-body');
    assert.ok(String(rewrite?.before).includes('Bad Gateway'), String(rewrite?.before));
    assert.equal(r.violations.find((v) => v.rule === 'html-body')?.applied, true);
  });

  test('HTML on 500 becomes -32603 on 200', async () => {
    const r = await runScenario({
      version: MODERN,
      request: call('echo'),
      respond: () => ({
        status: 500,
        headers: { 'content-type': 'text/html; charset=utf-8' },
        body: '<!DOCTYPE html><html><body>Internal Server Error</body></html>',
      }),
      proxy: { policy: () => enforce },
    });
    assert.equal(r.status, 200);
    const msg = responseIn(String(r.headers['content-type']), r.body);
    assertValidResponse(msg, MODERN);
    assert.equal(msg.id, 'test-1');
    assert.equal(errorOf(msg).code, -32603);
    assert.deepEqual(errorOf(msg).data, { reason: 'html-body', upstreamStatus: 500 });
    assert.equal(r.exchange?.verdict, 'rewrite');
    assert.equal(r.violations.find((v) => v.rule === 'html-body')?.applied, true);
  });

  test('an SSE stream whose event carries an HTML page instead of JSON-RPC ends with a -32603 event', async () => {
    const r = await runScenario({
      version: MODERN,
      request: call('echo'),
      respond: () => ({ sse: [BEFORE, 'event: message\ndata: <html><body>Bad Gateway</body></html>\n\n'] }),
      proxy: { policy: () => enforce },
    });
    assert.equal(r.status, 200);
    assert.ok(r.body.startsWith(BEFORE), r.body);
    const blocks = sseBlocks(r.body);
    const last = blocks.at(-1)!;
    const msg = JSON.parse(last.data) as Msg;
    assertValidResponse(msg, MODERN);
    assert.equal(msg.id, 'test-1');
    assert.equal(errorOf(msg).code, -32603);
    assert.equal(r.violations.find((v) => v.rule === 'html-body')?.applied, true, JSON.stringify(r.violations));
  });

  test('an SSE event carrying an HTML page is replaced in place: the HTML never reaches the client', async () => {
    const r = await runScenario({
      version: MODERN,
      request: call('echo'),
      respond: () => ({ sse: [BEFORE, 'event: message\nid: m-2\ndata: <html><body>Bad Gateway</body></html>\n\n', AFTER] }),
      proxy: { policy: () => enforce },
    });
    assert.ok(!r.body.includes('<html'), r.body);
    const blocks = sseBlocks(r.body);
    assert.equal(blocks.length, 3, r.body);
    assert.equal(blocks[0]!.raw, BEFORE);
    assert.equal(blocks[1]!.raw, responseEvent(blocks[1]!.data));
    assert.equal(blocks[2]!.raw, AFTER);
  });
});

test('without a catalogue, a tools/call answered -32601 is relayed as it came: no 404 is added (an unknown tool is -32602, never an unknown method)', async () => {
  const r = await runScenario({
    version: MODERN,
    request: call('nope', {}),
    respond: answer('json', error(-32601, 'Method not found')),
    proxy: { policy: () => enforce, limits: { maxToolsPerSession: 0 } },
  });
  assert.equal(r.status, 200, r.body);
  assert.deepEqual(JSON.parse(r.body), error(-32601, 'Method not found')('test-1'));
  assert.deepEqual(
    r.violations.filter((v) => v.rule === 'unknown-method-status'),
    [],
  );
});

describe('client rules under 2026-07-28', () => {
  let upstream: RawServer | undefined;
  let proxy: TestProxy | undefined;
  after(async () => {
    await proxy?.close();
    await upstream?.close();
  });

  const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
  const toolResult = { resultType: 'complete', content: [{ type: 'text', text: 'hi' }] };

  async function start(yaml: string): Promise<{ upstream: RawServer; proxy: TestProxy }> {
    await proxy?.close();
    await upstream?.close();
    upstream = await startRawServer(jsonRpcResult(toolResult));
    const policy = policyOf(yaml);
    proxy = await startProxy(new URL('/mcp', upstream.url), { policy: () => policy });
    return { upstream, proxy };
  }

  async function send(p: TestProxy, body: Msg, headers: Record<string, string>) {
    const res = await request(p.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.body.text();
    await new Promise((r) => setTimeout(r, 20));
    return { status: res.statusCode, type: String(res.headers['content-type'] ?? ''), text };
  }

  const variants: Array<{ name: string; tool: string; headers: Record<string, string>; want: Record<string, string>; before: string }> = [
    {
      name: 'an Mcp-Name that differs from params.name',
      tool: 'echo',
      headers: { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'other_tool' },
      want: { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
      before: 'other_tool',
    },
    {
      name: 'a missing Mcp-Method and a wrong MCP-Protocol-Version',
      tool: 'echo',
      headers: { 'mcp-protocol-version': '2025-11-25', 'mcp-name': 'echo' },
      want: { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
      before: '2025-11-25',
    },
    {
      name: 'an Mcp-Name that is not the base64 form of a non-ASCII name',
      tool: 'météo',
      headers: { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'meteo' },
      want: {
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': `=?base64?${Buffer.from('météo').toString('base64')}?=`,
      },
      before: 'meteo',
    },
  ];

  for (const v of variants) {
    test(`header-mismatch: rewrite: ${v.name} reaches the server with the headers re-derived from the body`, async () => {
      const { upstream: up, proxy: p } = await start('mode: enforce\nrules:\n  header-mismatch: rewrite\n');
      const body = { jsonrpc: '2.0', id: 'req-1', method: 'tools/call', params: { name: v.tool, arguments: { text: 'hi' }, _meta: META } };
      const got = await send(p, body, v.headers);
      assert.equal(got.status, 200, got.text);
      const msg = responseIn(got.type, got.text);
      assertValidResponse(msg, MODERN, 'tools/call');
      assert.deepEqual(msg, { jsonrpc: '2.0', id: 'req-1', result: toolResult });
      assert.equal(up.requests.length, 1);
      const seen = up.requests[0]!;
      for (const [name, value] of Object.entries(v.want)) assert.equal(seen.headers[name], value, name);
      assert.deepEqual(JSON.parse(seen.body.toString('utf8')), body, 'the body is forwarded as sent');
      const rewrite = p.log.find((r) => r.msg === 'rewrite' && r.rule === 'header-mismatch');
      assert.ok(rewrite, 'a rewrite record for header-mismatch');
      assert.ok(String(rewrite.before).includes(v.before), `before: ${String(rewrite.before)}`);
      assert.ok(String(rewrite.after).includes(v.want['mcp-name']!), `after: ${String(rewrite.after)}`);
      const violation = p.log.find((r) => r.msg === 'violation' && r.rule === 'header-mismatch');
      assert.equal(violation?.applied, true);
      assert.equal(violation?.action, 'rewrite');
    });
  }

  test('header-mismatch: block: the server never sees the request; the client gets -32020 on 400 with its id', async () => {
    const { upstream: up, proxy: p } = await start('mode: enforce\nrules:\n  header-mismatch: block\n');
    const body = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' }, _meta: META } };
    const got = await send(p, body, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'other_tool' });
    assert.equal(got.status, 400, got.text);
    assert.match(got.type, /^application\/json/);
    const msg = responseIn(got.type, got.text);
    assertValidResponse(msg, MODERN);
    assert.equal(msg.id, 7);
    assert.equal(errorOf(msg).code, -32020);
    assert.deepEqual({ ...errorOf(msg).data }, { reason: 'WARDEN_BLOCKED', rule: 'header-mismatch', by: 'mcp-warden' });
    assert.equal(up.requests.length, 0, 'nothing was forwarded');
    const block = p.log.find((r) => r.msg === 'block');
    assert.equal(block?.rule, 'header-mismatch');
    assert.equal(block?.status, 400);
    assert.equal(p.log.find((r) => r.msg === 'violation' && r.rule === 'header-mismatch')?.applied, true);
    assert.equal(p.exchanges().find((r) => r.id === 7)?.outcome, 'blocked');
  });

  test('missing-request-meta: block: the server never sees the request; the client gets -32602 on 400 with its id', async () => {
    const { upstream: up, proxy: p } = await start('mode: enforce\nrules:\n  missing-request-meta: block\n');
    const body = { jsonrpc: '2.0', id: 'no-meta', method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };
    const got = await send(p, body, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'echo' });
    assert.equal(got.status, 400, got.text);
    const msg = responseIn(got.type, got.text);
    assertValidResponse(msg, MODERN);
    assert.equal(msg.id, 'no-meta');
    assert.equal(errorOf(msg).code, -32602);
    assert.equal(errorOf(msg).data?.reason, 'WARDEN_BLOCKED');
    assert.equal(errorOf(msg).data?.rule, 'missing-request-meta');
    assert.equal(up.requests.length, 0, 'nothing was forwarded');
    assert.equal(p.log.find((r) => r.msg === 'block')?.rule, 'missing-request-meta');
  });

  test("the same mismatch under header-mismatch: log is forwarded with the client's headers", async () => {
    const { upstream: up, proxy: p } = await start('mode: enforce\nrules:\n  header-mismatch: log\n');
    const body = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' }, _meta: META } };
    const got = await send(p, body, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'other_tool' });
    assert.equal(got.status, 200);
    assert.equal(up.requests[0]?.headers['mcp-name'], 'other_tool');
    assert.equal(
      p.log.find((r) => r.msg === 'rewrite'),
      undefined,
    );
    assert.equal(p.log.find((r) => r.msg === 'violation' && r.rule === 'header-mismatch')?.applied, false);
  });
});
