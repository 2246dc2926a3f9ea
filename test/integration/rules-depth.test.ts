// Depth defeats no rule (issue 10 item 6; issue 16 "a deeply nested client body ... the rule must
// return its finding"), through the real proxy on real sockets. A stack trace placed where the
// old walk stopped (33 levels deep in error.data, after 2,000 other values, after 16 KiB of text)
// is found by leaked-stack-trace, and under config/enforce.yaml rewritten away. What no bound lets
// the rules read (a request whose _meta nests 3,000 levels, a client body nested 100,000 levels,
// an answer nested 3,000 levels, more than 1 MiB of error text) gets unreadable-request or
// unreadable-response, never a "rule failed" record, and under enforce.yaml it is blocked: the
// request never reaches the server, the answer never reaches the client. Ordinary deep-ish
// content (depth 20, 5,000 values) gets no such finding and passes byte for byte.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { assertFires, assertSilent, MODERN, runScenario, type Reply, type ScenarioResult } from '../helpers/rule-scenario.ts';

const LEGACY = '2025-06-18';
const TRACE = 'Error: boom\\n    at handler (/srv/app/dist/tools.js:42:17)'; // JSON-escaped: bodies are built as text
const call = { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };

/** `inner` (JSON text) under `depth` levels of {"c": ...}. */
const nested = (depth: number, inner: string): string => `${'{"c":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;
const json = (text: string): Reply => ({ body: text, headers: { 'content-type': 'application/json' } });
const errorBody = (id: unknown, message: string, data: string): string =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":{"code":-32603,"message":${JSON.stringify(message)},"data":${data}}}`;

function assertNoRuleFailed(result: ScenarioResult): void {
  const failed = result.records.filter((r) => r.msg === 'rule failed' || (typeof r.level === 'number' && r.level >= 50));
  assert.deepEqual(
    failed.map((r) => `${String(r.msg)} ${String(r.rule)}`),
    [],
    'no rule may fail',
  );
}

let enforce: Policy;
before(async () => {
  const loaded = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
  enforce = loaded.policy;
});

/** Where the old walk stopped reading: each hides a stack trace the leak rules must now find. */
const LATE_TRACES: Array<[string, (id: unknown) => string]> = [
  ['33 levels deep in error.data', (id) => errorBody(id, 'Internal error', nested(33, `"${TRACE}"`))],
  [
    'after 2,000 other values',
    (id) => errorBody(id, 'Internal error', `{"filler":[${Array.from({ length: 2000 }, (_, i) => i).join(',')}],"trace":"${TRACE}"}`),
  ],
  ['after 16 KiB of text', (id) => errorBody(id, 'x'.repeat(16 * 1024 + 10), `{"trace":"${TRACE}"}`)],
];

describe('a stack trace past where the leak rules used to stop reading', () => {
  for (const [where, body] of LATE_TRACES) {
    test(`${where}: leaked-stack-trace fires (audit)`, async () => {
      const result = await runScenario({ version: LEGACY, request: call, respond: (req) => json(body(req?.id)) });
      const v = assertFires(result, 'leaked-stack-trace');
      assert.ok(String(v.pointer).startsWith('/response/error/data'), String(v.pointer));
      assertSilent(result, 'unreadable-response');
      assertNoRuleFailed(result);
      assert.ok(result.body.includes('tools.js:42:17'), 'audit delivers the answer as it came');
    });

    test(`${where}: rewritten away under enforce.yaml`, async () => {
      const result = await runScenario({
        version: LEGACY,
        request: call,
        respond: (req) => json(body(req?.id)),
        proxy: { policy: () => enforce },
      });
      assertFires(result, 'leaked-stack-trace');
      assertNoRuleFailed(result);
      assert.equal(result.status, 200);
      const answer = JSON.parse(result.body) as { id: unknown; error: { code: number } };
      assert.equal(answer.id, 'test-1');
      assert.equal(answer.error.code, -32603);
      assert.ok(!result.body.includes('tools.js'), `the trace reached the client: ${result.body.slice(-300)}`);
      assert.ok(result.body.includes('[redacted]'));
    });
  }
});

/** Requests nested past the depth bound: raw legacy bodies (the harness would JSON.stringify them, which fails past ~5,000 levels). */
const DEEP_REQUESTS: Array<[string, string]> = [
  [
    '_meta nested 3,000 levels',
    `{"jsonrpc":"2.0","id":"test-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":${nested(3000, '1')}}}`,
  ],
  [
    'arguments nested 100,000 levels',
    `{"jsonrpc":"2.0","id":"test-1","method":"tools/call","params":{"name":"echo","arguments":${nested(100_000, '{"text":"hi"}')}}}`,
  ],
];

describe('a client request nested past the depth bound', () => {
  for (const [what, raw] of DEEP_REQUESTS) {
    test(`${what}: unreadable-request, and the server's answer is still judged (audit)`, async () => {
      const result = await runScenario({
        version: LEGACY,
        request: { ...call, raw },
        respond: (req) => json(errorBody(req?.id, 'Internal error', `{"trace":"${TRACE}"}`)),
      });
      const v = assertFires(result, 'unreadable-request');
      assert.equal(v.severity, 'warning');
      assert.ok(String(v.pointer).startsWith('/request/params/'), String(v.pointer));
      assert.ok(String(v.pointer).length <= 240);
      assertFires(result, 'leaked-stack-trace');
      assertNoRuleFailed(result);
    });

    test(`${what}: blocked under enforce.yaml, never forwarded`, async () => {
      let forwarded = 0;
      const result = await runScenario({
        version: LEGACY,
        request: { ...call, raw },
        respond: (req) => {
          forwarded++;
          return json(`{"jsonrpc":"2.0","id":${JSON.stringify(req?.id ?? null)},"result":{"content":[{"type":"text","text":"ran"}]}}`);
        },
        proxy: { policy: () => enforce },
      });
      assertFires(result, 'unreadable-request');
      assertNoRuleFailed(result);
      assert.equal(forwarded, 0, 'the request reached the server');
      const answer = JSON.parse(result.body) as { id: unknown; error: { code: number; data: { reason: string; rule: string } } };
      assert.equal(answer.id, 'test-1');
      assert.equal(answer.error.code, -32600);
      assert.deepEqual([answer.error.data.reason, answer.error.data.rule], ['WARDEN_BLOCKED', 'unreadable-request']);
    });
  }

  test('a body that is nothing but 100,000 nested arrays: request-envelope and unreadable-request, no rule failed', async () => {
    const raw = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const result = await runScenario({
      version: '2025-03-26',
      request: { ...call, raw },
      respond: () => json('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}'),
    });
    assertFires(result, 'unreadable-request');
    assertFires(result, 'request-envelope');
    assertNoRuleFailed(result);
  });

  test('a body that is nothing but 100,000 nested arrays: blocked under enforce.yaml with 400 and id null, never forwarded', async () => {
    const raw = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    let forwarded = 0;
    const result = await runScenario({
      version: '2025-03-26',
      request: { ...call, raw },
      respond: () => {
        forwarded++;
        return json('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}');
      },
      proxy: { policy: () => enforce },
    });
    assertNoRuleFailed(result);
    assert.equal(forwarded, 0, 'the body reached the server');
    assert.equal(result.status, 400);
    const answer = JSON.parse(result.body) as { id: unknown; error: { code: number; data: { reason: string } } };
    assert.deepEqual([answer.id, answer.error.code, answer.error.data.reason], [null, -32600, 'WARDEN_BLOCKED']);
  });

  test('a modern request whose _meta nests 3,000 levels', async () => {
    const result = await runScenario({
      version: MODERN,
      request: {
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hi' }, _meta: { deep: JSON.parse(nested(3000, '1')) as unknown } },
      },
      respond: (req) => ({
        json: { jsonrpc: '2.0', id: req?.id, result: { resultType: 'complete', content: [{ type: 'text', text: 'hi' }] } },
      }),
    });
    assertFires(result, 'unreadable-request');
    assertSilent(result, 'missing-request-meta');
    assertNoRuleFailed(result);
  });
});

/** Answers the rules cannot read whole. */
const UNREADABLE_ANSWERS: Array<[string, string, (id: unknown) => string, RegExp]> = [
  [
    'an isError result for an unknown tool whose _meta nests 3,000 levels',
    'nope',
    (id) =>
      `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"_meta":${nested(3000, '1')},"content":[{"type":"text","text":"Unknown tool: nope"}],"isError":true}}`,
    /nested more than 128 levels/,
  ],
  [
    'an error whose data nests 3,000 levels around a stack trace',
    'echo',
    (id) => errorBody(id, 'Internal error', nested(3000, `"${TRACE}"`)),
    /nested more than 128 levels/,
  ],
  [
    'a stack trace after more than 1 MiB of error text',
    'echo',
    (id) => errorBody(id, 'x'.repeat(1024 * 1024 + 1), `{"trace":"${TRACE}"}`),
    /more than 1 MiB of error text/,
  ],
];

describe('an answer the rules cannot read whole', () => {
  for (const [what, tool, body, message] of UNREADABLE_ANSWERS) {
    const request = { method: 'tools/call', params: { name: tool, arguments: { text: 'hi' } } };

    test(`${what}: unreadable-response (audit)`, async () => {
      const result = await runScenario({ version: LEGACY, request, respond: (req) => json(body(req?.id)) });
      const v = assertFires(result, 'unreadable-response');
      assert.match(String(v.message), message);
      assert.equal(v.severity, 'warning');
      assertNoRuleFailed(result);
    });

    test(`${what}: withheld under enforce.yaml`, async () => {
      const result = await runScenario({
        version: LEGACY,
        request,
        respond: (req) => json(body(req?.id)),
        proxy: { policy: () => enforce },
      });
      assertFires(result, 'unreadable-response');
      assertNoRuleFailed(result);
      const answer = JSON.parse(result.body) as { id: unknown; error: { code: number; data: { reason: string; rule: string } } };
      assert.equal(answer.id, 'test-1');
      assert.equal(answer.error.code, -32603);
      assert.deepEqual([answer.error.data.reason, answer.error.data.rule], ['WARDEN_BLOCKED', 'unreadable-response']);
      assert.ok(!result.body.includes('tools.js') && !result.body.includes('Unknown tool'), result.body.slice(0, 300));
    });
  }
});

describe('an answer on an SSE stream the rules cannot read whole', () => {
  const event = (id: unknown) =>
    `event: message\ndata: {"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"_meta":${nested(3000, '1')},"content":[{"type":"text","text":"ran"}]}}\n\n`;

  test('unreadable-response, and under enforce.yaml the event is withheld in the stream', async () => {
    const audit = await runScenario({ version: LEGACY, request: call, respond: (req) => ({ sse: [event(req?.id)] }) });
    assertFires(audit, 'unreadable-response');
    assertNoRuleFailed(audit);
    const result = await runScenario({
      version: LEGACY,
      request: call,
      respond: (req) => ({ sse: [event(req?.id)] }),
      proxy: { policy: () => enforce },
    });
    assertFires(result, 'unreadable-response');
    assertNoRuleFailed(result);
    assert.match(String(result.headers['content-type']), /text\/event-stream/);
    const data = result.body
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => JSON.parse(l.slice(5)) as { id: unknown; error?: { code: number; data: { rule: string } } });
    assert.equal(data.length, 1, result.body.slice(0, 300));
    assert.equal(data[0]!.id, 'test-1');
    assert.deepEqual([data[0]!.error?.code, data[0]!.error?.data.rule], [-32603, 'unreadable-response']);
  });
});

describe('ordinary deep-ish content (depth 20, 5,000 values) is read whole', () => {
  /** 20 levels of nesting under the message and 5,000 values beside them, with text. */
  const content = {
    tree: JSON.parse(nested(16, '{"leaf":"the bottom"}')) as unknown,
    rows: Array.from({ length: 5000 }, (_, i) => (i % 2 ? { id: i, name: `row ${i}` } : `value ${i}`)),
  };

  for (const policy of ['audit', 'enforce'] as const) {
    test(`a request and its result, an error and an isError result: no unreadable finding, and the answer passes unchanged (${policy})`, async () => {
      const answers = [
        (id: unknown) =>
          JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'done' }], structuredContent: content } }),
        (id: unknown) =>
          JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32602, message: 'Invalid params: row 17 is not a number', data: content } }),
        (id: unknown) =>
          JSON.stringify({
            jsonrpc: '2.0',
            id,
            result: { content: [{ type: 'text', text: 'The text must not be empty' }], isError: true, _meta: content },
          }),
      ];
      for (const answer of answers) {
        let sent = '';
        const result = await runScenario({
          version: LEGACY,
          request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi', data: content } } },
          respond: (req) => {
            sent = answer(req?.id);
            return json(sent);
          },
          ...(policy === 'enforce' ? { proxy: { policy: () => enforce } } : {}),
        });
        assertSilent(result, 'unreadable-request');
        assertSilent(result, 'unreadable-response');
        assertNoRuleFailed(result);
        assert.equal(result.body, sent, 'the answer passes byte for byte');
      }
    });
  }
});
