// Rules about bodies that are not JSON-RPC responses: each fires on its bad answer and stays
// silent on a good one from the same server.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFires, assertSilent, runScenario, type Reply } from '../helpers/rule-scenario.ts';

const call = { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };
const good = (req: { id?: unknown } | undefined): Reply => ({
  json: { jsonrpc: '2.0', id: req?.id, result: { content: [{ type: 'text', text: 'hi' }] } },
});

const cases: Array<[rule: string, bad: Reply]> = [
  ['html-body', { status: 500, headers: { 'content-type': 'text/html' }, body: '<!DOCTYPE html><html><body><h1>500</h1></body></html>' }],
  ['empty-body', { status: 200, headers: { 'content-type': 'application/json' }, body: '' }],
  ['non-json-body', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'Internal error, try later' }],
  ['not-jsonrpc-body', { json: { ok: false, reason: 'boom' } }],
  [
    'no-response',
    { sse: ['event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}\n\n'] },
  ],
  ['no-response', { json: { jsonrpc: '2.0', id: 'x' }, reset: true }],
];

describe('body rules', () => {
  for (const version of ['2025-06-18', '2026-07-28']) {
    for (const [rule, bad] of cases) {
      test(`${rule} fires on ${JSON.stringify(bad).slice(0, 60)} (${version})`, async () => {
        const result = await runScenario({ version, request: call, respond: () => bad });
        const v = assertFires(result, rule);
        assert.equal(v.method, 'tools/call');
        assert.equal(v.id, 'test-1');
        assert.equal(v.protocolVersion, version);
        assert.equal(result.exchange?.violations, result.violations.length);
      });
    }
    test(`all stay silent on a good answer (${version})`, async () => {
      const result = await runScenario({ version, request: call, respond: good });
      for (const rule of new Set(cases.map((c) => c[0]))) assertSilent(result, rule);
      assert.equal(result.exchange?.outcome, 'result');
    });
  }
});

describe('transport rejections are not unusable answers', () => {
  for (const [status, headers] of [
    [401, { 'www-authenticate': 'Bearer realm="mcp"' }],
    [403, {}],
    [404, {}],
    [302, { location: 'http://127.0.0.1:9/elsewhere' }],
  ] as Array<[number, Record<string, string>]>) {
    test(`an empty ${status} is not flagged as an empty body`, async () => {
      const result = await runScenario({ version: '2025-11-25', request: call, respond: () => ({ status, headers, body: '' }) });
      assertSilent(result, 'empty-body');
    });
  }
  test('an empty 500 still is', async () => {
    const result = await runScenario({ version: '2025-11-25', request: call, respond: () => ({ status: 500, body: '' }) });
    assertFires(result, 'empty-body');
  });
});

describe('unaudited-response: a response over the audit limit is relayed unread, and the finding says so', () => {
  const limits = { proxy: { limits: { auditBodyBytes: 512, auditEventBytes: 512 } } };
  const long = (req: { id?: unknown } | undefined) => ({
    jsonrpc: '2.0',
    id: req?.id,
    result: { content: [{ type: 'text', text: 'z'.repeat(2000) }] },
  });
  for (const version of ['2025-06-18', '2026-07-28']) {
    test(`fires (info) on a JSON body over the limit; the client gets it unchanged (${version})`, async () => {
      const result = await runScenario({ version, request: call, respond: (req) => ({ json: long(req) }), ...limits });
      const v = assertFires(result, 'unaudited-response');
      assert.equal(v.severity, 'info');
      assert.equal(v.pointer, '/response');
      assert.equal(result.exchange?.outcome, 'unaudited');
      assert.equal(JSON.parse(result.body).result.content[0].text.length, 2000);
    });
    test(`fires on an SSE event over the limit (${version})`, async () => {
      const result = await runScenario({
        version,
        request: call,
        respond: (req) => ({ sse: [`event: message\ndata: ${JSON.stringify(long(req))}\n\n`] }),
        ...limits,
      });
      assertFires(result, 'unaudited-response');
      assertSilent(result, 'no-response');
    });
    test(`stays silent on answers within the limit (${version})`, async () => {
      for (const respond of [
        good,
        (req: { id?: unknown } | undefined): Reply => ({ sse: [`event: message\ndata: ${JSON.stringify(good(req).json)}\n\n`] }),
      ]) {
        const result = await runScenario({ version, request: call, respond, ...limits });
        assertSilent(result, 'unaudited-response');
        assert.equal(result.exchange?.outcome, 'result');
      }
    });
  }
});
