// Blocks on real sockets. A server-side block withholds the server's answer: the client gets
// -32603 with data.reason "WARDEN_BLOCKED" and the rule, on HTTP 200, and none of the server's
// words; entries scoped by `tools` or `methods` block only what they name. The SDK client
// (2025-11-25, JSON and SSE responses) and a 2026-07-28 client are the receivers; every message
// the proxy builds is checked against the official schema of the session's version. A client-side
// block inside a legacy batch (2025-03-26) answers the whole POST and forwards nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startFaultyServer, type ToolReply } from '../fixtures/faulty-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { MODERN, runScenario, type Reply } from '../helpers/rule-scenario.ts';
import { assertValidResponse } from '../helpers/schema-check.ts';
import { connectWireClient, responseIn, sseBlocks, type WireClient } from '../helpers/sdk-wire.ts';

function policyOf(yaml: string): Policy {
  const result = loadPolicyText(yaml, 'test.yaml', { rewritable: REWRITABLE });
  assert.ok(result.ok, JSON.stringify(!result.ok && result.errors));
  return result.policy;
}

const BLOCKED_MESSAGE = "The server's response was withheld by policy";
const E1 =
  'event: message\nid: e-1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n';
const HTML = '<!DOCTYPE html><html><body><h1>500 Internal Server Error</h1><p>upstream: app-7</p></body></html>';
const FAILURE = 'Error: SMTP connection refused';

const SCOPED = policyOf(`mode: enforce
rules:
  silent-success: { action: block, tools: ['send_*'] }
  html-body: { action: block, tools: ['export_*'] }
`);

const failureResult: ToolReply = { result: { content: [{ type: 'text', text: FAILURE }] } };
const htmlPage: ToolReply = { http: { status: 500, contentType: 'text/html', body: HTML } };

for (const mode of ['json', 'sse'] as const) {
  describe(`server-side blocks, SDK client (2025-11-25, ${mode})`, () => {
    let upstream: Awaited<ReturnType<typeof startFaultyServer>>;
    let proxy: TestProxy;
    let c: WireClient;
    before(async () => {
      upstream = await startFaultyServer({
        mode,
        tools: {
          send_email: { reply: () => failureResult },
          notify_team: { reply: () => failureResult },
          export_report: { reply: () => htmlPage },
          fetch_page: { reply: () => htmlPage },
        },
      });
      proxy = await startProxy(upstream.url, { policy: () => SCOPED });
      c = await connectWireClient(proxy.url);
      await c.client.listTools();
    });
    after(async () => {
      await c?.close();
      await proxy?.close();
      await upstream?.close();
    });

    for (const [tool, rule, secret] of [
      ['send_email', 'silent-success', 'SMTP connection refused'],
      ['export_report', 'html-body', 'app-7'],
    ] as const) {
      test(`${tool}: ${rule} blocks; the client gets -32603 WARDEN_BLOCKED and none of the server's words`, async () => {
        const err = await c.client.callTool({ name: tool, arguments: {} }, undefined, { timeout: 1500 }).then(
          (r) => assert.fail(`resolved: ${JSON.stringify(r)}`),
          (e: unknown) => e,
        );
        assert.ok(err instanceof McpError, String(err));
        assert.equal(err.code, -32603);
        assert.equal(err.message, `MCP error -32603: ${BLOCKED_MESSAGE}`);
        assert.deepEqual(err.data, { reason: 'WARDEN_BLOCKED', rule, by: 'mcp-warden' });

        const w = c.post('tools/call', tool);
        const text = (await w.body).toString('utf8');
        const sent = JSON.parse(w.request) as { id: unknown };
        assert.equal(w.status, 200);
        assert.ok(!text.includes(secret), `the server's words reached the client: ${text}`);
        const msg = responseIn(w.contentType, text);
        assertValidResponse(msg, '2025-11-25', 'tools/call');
        assert.deepEqual(msg.id, sent.id);
        if (mode === 'sse' && rule === 'silent-success') {
          assert.ok(text.startsWith(E1), text);
          const events = sseBlocks(text);
          assert.equal(events.length, 2);
          assert.equal(events[1]!.raw, `event: message\nid: e-2\ndata: ${events[1]!.data}\n\n`, 'the blocked event is replaced in place');
        } else {
          assert.match(w.contentType, /^application\/json/);
        }

        const block = await proxy.log.waitFor((r) => r.msg === 'block' && r.tool === tool, 1000);
        assert.equal(block.rule, rule);
        assert.equal(block.status, 200);
        assert.deepEqual(JSON.parse(String(block.after)), msg);
        const violation = proxy.log.find((r) => r.msg === 'violation' && r.tool === tool && r.rule === rule);
        assert.equal(violation?.action, 'block');
        assert.equal(violation?.applied, true);
        assert.equal(proxy.exchanges().find((r) => r.tool === tool)?.verdict, 'block');
      });
    }

    test('notify_team: the same failure text, outside the send_* scope, passes unchanged', async () => {
      const r = await c.client.callTool({ name: 'notify_team', arguments: {} }, undefined, { timeout: 1500 });
      assert.equal(r.isError, undefined);
      assert.deepEqual(r.content, [{ type: 'text', text: FAILURE }]);
      const w = c.post('tools/call', 'notify_team');
      const sent = JSON.parse(w.request) as { id: unknown };
      const json = JSON.stringify({ jsonrpc: '2.0', id: sent.id, ...failureResult });
      assert.equal((await w.body).toString('utf8'), mode === 'sse' ? `${E1}event: message\nid: e-2\ndata: ${json}\n\n` : json);
      const violation = await proxy.log.waitFor((x) => x.msg === 'violation' && x.tool === 'notify_team', 1000);
      assert.equal(violation.rule, 'silent-success');
      assert.equal(violation.action, 'log');
      assert.equal(violation.applied, false);
      assert.equal(
        proxy.log.find((x) => (x.msg === 'block' || x.msg === 'rewrite') && x.tool === 'notify_team'),
        undefined,
      );
    });

    test('fetch_page: an HTML page outside the export_* scope passes unchanged', async () => {
      await assert.rejects(
        c.client.callTool({ name: 'fetch_page', arguments: {} }, undefined, { timeout: 1500 }),
        (e: Error) => !(e instanceof McpError) && e.message.includes('500 Internal Server Error'),
      );
      const w = c.post('tools/call', 'fetch_page');
      assert.equal(w.status, 500);
      assert.equal((await w.body).toString('utf8'), HTML);
      const violation = await proxy.log.waitFor((x) => x.msg === 'violation' && x.tool === 'fetch_page', 1000);
      assert.equal(violation.rule, 'html-body');
      assert.equal(violation.applied, false);
      assert.equal(
        proxy.log.find((x) => x.msg === 'block' && x.tool === 'fetch_page'),
        undefined,
      );
    });
  });
}

describe('server-side blocks under 2026-07-28', () => {
  const BY_METHOD = policyOf(`mode: enforce
rules:
  html-body: { action: block, methods: ['tools/call'] }
  silent-success: { action: block, tools: ['send_*'] }
`);
  const html = (): Reply => ({ status: 502, headers: { 'content-type': 'text/html' }, body: HTML });

  test('html-body scoped to tools/call blocks an HTML answer to tools/call (-32603 on 200)', async () => {
    const r = await runScenario({
      version: MODERN,
      request: { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
      respond: html,
      proxy: { policy: () => BY_METHOD },
    });
    assert.equal(r.status, 200);
    assert.ok(!r.body.includes('app-7'), r.body);
    const msg = responseIn(String(r.headers['content-type']), r.body);
    assertValidResponse(msg, MODERN);
    assert.deepEqual(msg, {
      jsonrpc: '2.0',
      id: 'test-1',
      error: { code: -32603, message: BLOCKED_MESSAGE, data: { reason: 'WARDEN_BLOCKED', rule: 'html-body', by: 'mcp-warden' } },
    });
    assert.equal(r.exchange?.verdict, 'block');
    assert.equal(r.violations.find((v) => v.rule === 'html-body')?.applied, true);
  });

  test('the same HTML answer to prompts/list, outside the scope, passes unchanged', async () => {
    const r = await runScenario({
      version: MODERN,
      capabilities: { tools: {}, prompts: {} },
      request: { method: 'prompts/list', params: {} },
      respond: html,
      proxy: { policy: () => BY_METHOD },
    });
    assert.equal(r.status, 502);
    assert.equal(r.body, HTML);
    assert.equal(r.exchange?.verdict, undefined);
    assert.equal(r.violations.find((v) => v.rule === 'html-body')?.applied, false);
  });

  test('silent-success scoped to send_* blocks inside an SSE stream: the event is replaced in place', async () => {
    const note = 'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"sending"}}\n\n';
    const r = await runScenario({
      version: MODERN,
      tools: [{ name: 'send_sms', inputSchema: { type: 'object' } }],
      request: { method: 'tools/call', params: { name: 'send_sms', arguments: {} } },
      respond: (req) => ({
        sse: [
          note,
          `event: message\nid: 9\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: req?.id, result: { resultType: 'complete', content: [{ type: 'text', text: FAILURE }] } })}\n\n`,
        ],
      }),
      proxy: { policy: () => BY_METHOD },
    });
    assert.equal(r.status, 200);
    assert.ok(r.body.startsWith(note), r.body);
    assert.ok(!r.body.includes('SMTP'), r.body);
    const events = sseBlocks(r.body);
    assert.equal(events.length, 2, r.body);
    assert.equal(events[1]!.raw, `event: message\nid: 9\ndata: ${events[1]!.data}\n\n`);
    const msg = JSON.parse(events[1]!.data) as Record<string, unknown>;
    assertValidResponse(msg, MODERN);
    assert.equal(msg.id, 'test-1');
    assert.equal((msg.error as { data: { rule: string } }).data.rule, 'silent-success');
    assert.equal(r.exchange?.verdict, 'block');
  });
});

describe('a client-side block inside a legacy batch (2025-03-26)', () => {
  const ENVELOPE = policyOf('mode: enforce\nrules:\n  request-envelope: block\n');
  const good = { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };
  // A notification sent with an id: request-envelope's finding, on the second message only.
  const bad = { jsonrpc: '2.0', id: 'b', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } };

  test('request-envelope: block on one message answers every request of the batch and forwards nothing', async () => {
    let forwarded = 0;
    const r = await runScenario({
      version: '2025-03-26',
      request: { method: 'batch', raw: JSON.stringify([good, bad]) },
      respond: () => {
        forwarded++;
        return { json: [] };
      },
      proxy: { policy: () => ENVELOPE },
    });
    assert.equal(forwarded, 0, 'the server never saw the batch');
    // What request-verdicts.ts does: the POST's findings judge every request in it, the first
    // blocked request's error goes to each request with its own id, as a JSON array, HTTP 200
    // (legacy era), and nothing is forwarded.
    assert.equal(r.status, 200, r.body);
    assert.match(String(r.headers['content-type']), /^application\/json/);
    const replies = JSON.parse(r.body) as Array<Record<string, unknown>>;
    assert.ok(Array.isArray(replies), r.body);
    assert.deepEqual(
      replies.map((m) => m.id),
      ['a', 'b'],
    );
    for (const m of replies) {
      assertValidResponse(m, '2025-03-26');
      const e = m.error as { code: number; message: string; data: Record<string, unknown> };
      assert.equal(e.code, -32600);
      assert.match(e.message, /notifications\/progress was sent with an id/);
      assert.deepEqual(e.data, { reason: 'WARDEN_BLOCKED', rule: 'request-envelope', by: 'mcp-warden' });
    }
    const block = r.records.find((x) => x.msg === 'block');
    assert.equal(block?.rule, 'request-envelope');
    assert.equal(block?.status, 200);
    const outcomes = r.records
      .filter((x) => x.msg === 'exchange' && (x.id === 'a' || x.id === 'b'))
      .map((x) => [x.id, x.outcome, x.status]);
    assert.deepEqual(outcomes, [
      ['a', 'blocked', 200],
      ['b', 'blocked', 200],
    ]);
    const violations = r.violations.filter((v) => v.rule === 'request-envelope');
    assert.ok(violations.length >= 1);
    for (const v of violations) assert.equal(v.applied, true);
  });

  test('the same batch without the bad message is forwarded and answered by the server', async () => {
    let forwarded = 0;
    const other = { ...good, id: 'c' };
    const r = await runScenario({
      version: '2025-03-26',
      request: { method: 'batch', raw: JSON.stringify([good, other]) },
      respond: () => {
        forwarded++;
        return { json: ['a', 'c'].map((id) => ({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'hi' }] } })) };
      },
      proxy: { policy: () => ENVELOPE },
    });
    assert.equal(forwarded, 1);
    assert.equal(r.status, 200);
    const replies = JSON.parse(r.body) as Array<Record<string, unknown>>;
    assert.deepEqual(
      replies.map((m) => m.id),
      ['a', 'c'],
    );
    for (const m of replies) assertValidResponse(m, '2025-03-26', 'tools/call');
    assert.equal(
      r.records.find((x) => x.msg === 'block'),
      undefined,
    );
  });
});
