// Every rewrite of config/enforce.yaml on real sockets, with the official SDK client (2025-11-25)
// as the receiver: SDK client -> proxy -> faulty-server, in JSON and SSE response modes. For each
// fault the test asserts what the SDK made of the answer (a result, or an McpError with the
// rewritten code), that the bytes it got are a valid 2025-11-25 JSON-RPC response per the official
// schema, that in SSE the events around the edited one passed byte for byte and the edited one kept
// its id and event name, and that the proxy logged the rewrite and the applied violation. The same
// faults under config/audit.yaml reach the client exactly as the server sent them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { request } from 'undici';
import { McpError, ListResourcesResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startFaultyServer, type ToolReply } from '../fixtures/faulty-server.ts';
import { closeServer, listen } from '../helpers/net.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { assertValidResponse } from '../helpers/schema-check.ts';
import { connectWireClient, responseIn, sseBlocks, type WireClient, type WireExchange } from '../helpers/sdk-wire.ts';

const VERSION = '2025-11-25';
const MARKER = '[redacted]';
/** The notification event the fixture sends before the response event in SSE mode. */
const E1 =
  'event: message\nid: e-1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}\n\n';
const HTML = '<!DOCTYPE html><html><body><h1>500 Internal Server Error</h1><p>nginx</p></body></html>';

type Mode = 'json' | 'sse';
type Outcome = { result: Record<string, unknown> } | { error: unknown };

interface Case {
  /** The tool called (or, for `method`, a label). */
  tool: string;
  /** Listed by tools/list. */
  known: boolean;
  reply: ToolReply;
  /** The rule the rewrite is for (it is in the rewrite record's `rules`, and its violation is applied). */
  rule: string;
  /** What the SDK client must receive. */
  expect: (o: Outcome) => void;
  /** Text that must not reach the client. */
  gone?: string[];
  /** Text the rewrite record's `before` keeps from what the server sent. */
  before?: string;
  /** Text the rewrite record's `after` shows. */
  after: string;
}

const BODY_MESSAGES: Record<string, string> = {
  'html-body': 'The MCP server answered with an HTML page instead of a JSON-RPC response',
  'empty-body': 'The MCP server answered with an empty body instead of a JSON-RPC response',
  'non-json-body': 'The MCP server answered with a body that is not JSON',
  'not-jsonrpc-body': 'The MCP server answered with JSON that is not a JSON-RPC response',
  'no-response': 'Upstream MCP server closed the connection before responding',
};

function rejected(o: Outcome, code: number, message: string | ((m: string) => void), data?: (d: Record<string, unknown>) => void): void {
  assert.ok('error' in o, `the call should reject; it resolved with ${JSON.stringify('result' in o ? o.result : undefined)}`);
  const err = o.error;
  assert.ok(err instanceof McpError, `an McpError, got ${String(err)}`);
  assert.equal(err.code, code, err.message);
  if (typeof message === 'string') assert.equal(err.message, `MCP error ${code}: ${message}`);
  else message(err.message);
  if (data) {
    assert.ok(typeof err.data === 'object' && err.data !== null, `error.data: ${JSON.stringify(err.data)}`);
    data(err.data as Record<string, unknown>);
  }
}

function resolved(o: Outcome): Record<string, unknown> {
  assert.ok('result' in o, `the call should resolve; it rejected with ${String('error' in o ? o.error : '')}`);
  return o.result;
}

const textOf = (r: Record<string, unknown>): string => (r.content as Array<{ text?: string }>)[0]?.text ?? '';

function unknownTool(tool: string, reply: ToolReply, rule: string, data: Record<string, unknown>, gone: string[] = []): Case {
  return {
    tool,
    known: false,
    reply,
    rule,
    gone,
    after: `"code":-32602,"message":"Unknown tool: ${tool}"`,
    expect: (o) => rejected(o, -32602, `Unknown tool: ${tool}`, (d) => assert.deepEqual(d, data)),
  };
}

function bodyFault(tool: string, reply: ToolReply, rule: string, upstreamStatus: number | null, gone: string[] = []): Case {
  return {
    tool,
    known: true,
    reply,
    rule,
    gone,
    after: `"code":-32603,"message":"${BODY_MESSAGES[rule]}"`,
    expect: (o) => rejected(o, -32603, BODY_MESSAGES[rule]!, (d) => assert.deepEqual(d, { reason: rule, upstreamStatus })),
  };
}

/** Leaked internals, each in a short error text: what must go, and what must stay. */
const LEAKS = {
  stack: {
    rule: 'leaked-stack-trace',
    text: 'Error: boom\n    at lookupUser (/srv/app/users.js:42:17)',
    leaked: '/srv/app/users.js',
    kept: 'Error: boom',
  },
  path: {
    rule: 'leaked-path',
    text: 'cannot open /home/deploy/app/config.json',
    leaked: '/home/deploy/app/config.json',
    kept: 'cannot open ',
  },
  ip: { rule: 'leaked-private-address', text: 'connect ECONNREFUSED 10.0.3.7:5432', leaked: '10.0.3.7', kept: 'connect ECONNREFUSED ' },
  host: {
    rule: 'leaked-internal-host',
    text: 'getaddrinfo ENOTFOUND db-primary.internal',
    leaked: 'db-primary.internal',
    kept: 'getaddrinfo ENOTFOUND ',
  },
} as const;

function redactedText(text: string, leak: (typeof LEAKS)[keyof typeof LEAKS]): void {
  assert.ok(!text.includes(leak.leaked), `${leak.leaked} still in ${JSON.stringify(text)}`);
  assert.ok(text.includes(MARKER), `no marker in ${JSON.stringify(text)}`);
  assert.ok(text.startsWith(leak.kept), `the rest of the text is kept: ${JSON.stringify(text)}`);
}

function leakCases(): Case[] {
  const out: Case[] = [];
  for (const [kind, leak] of Object.entries(LEAKS)) {
    const common = { known: true, rule: leak.rule, gone: [leak.leaked], before: leak.leaked, after: MARKER };
    out.push({
      ...common,
      tool: `leak_${kind}_message`,
      reply: { error: { code: -32603, message: leak.text } },
      expect: (o) => rejected(o, -32603, (m) => redactedText(m.replace('MCP error -32603: ', ''), leak)),
    });
    out.push({
      ...common,
      tool: `leak_${kind}_data`,
      reply: { error: { code: -32603, message: 'Internal error', data: { detail: leak.text } } },
      expect: (o) => rejected(o, -32603, 'Internal error', (d) => redactedText(String(d.detail), leak)),
    });
    out.push({
      ...common,
      tool: `leak_${kind}_iserror`,
      reply: { result: { content: [{ type: 'text', text: leak.text }], isError: true } },
      expect: (o) => {
        const r = resolved(o);
        assert.equal(r.isError, true);
        redactedText(textOf(r), leak);
      },
    });
  }
  return out;
}

const CASES: Case[] = [
  // Unknown tools: whatever the server answered becomes -32602 "Unknown tool: NAME".
  unknownTool(
    'ghost_iserror',
    { result: { content: [{ type: 'text', text: 'Tool not found' }], isError: true } },
    'unknown-tool-as-iserror',
    { serverMessage: 'Tool not found' },
  ),
  unknownTool('ghost_result', { result: { content: [{ type: 'text', text: 'done' }] } }, 'unknown-tool-as-result', {
    serverMessage: 'done',
  }),
  unknownTool('ghost_code', { error: { code: -32601, message: 'Method not found' } }, 'unknown-tool-wrong-code', {
    serverMessage: 'Method not found',
    originalCode: -32601,
  }),
  unknownTool(
    'ghost_html',
    { http: { status: 500, contentType: 'text/html', body: HTML } },
    'html-body',
    { reason: 'html-body', upstreamStatus: 500 },
    ['<html', 'nginx'],
  ),
  // A known tool answered with no JSON-RPC response: -32603 with the request's id.
  bodyFault('export_html', { http: { status: 500, contentType: 'text/html; charset=utf-8', body: HTML } }, 'html-body', 500, [
    '<html',
    'nginx',
  ]),
  bodyFault('export_empty', { http: { status: 200, contentType: 'application/json', body: '' } }, 'empty-body', 200),
  bodyFault(
    'export_text',
    { http: { status: 200, contentType: 'application/json', body: 'upstream crashed, try later' } },
    'non-json-body',
    200,
    ['upstream crashed'],
  ),
  bodyFault(
    'export_object',
    { http: { status: 200, contentType: 'application/json', body: '{"status":"error","detail":"database unavailable"}' } },
    'not-jsonrpc-body',
    200,
    ['database unavailable'],
  ),
  bodyFault('export_reset', { reset: true }, 'no-response', null),
  // Leaks in error.message, error.data and isError text.
  ...leakCases(),
  // A result that reads as a failure gets isError.
  {
    tool: 'send_email',
    known: true,
    reply: { result: { content: [{ type: 'text', text: 'Error: SMTP connection refused' }] } },
    rule: 'silent-success',
    before: 'Error: SMTP connection refused',
    after: '"isError":true',
    expect: (o) => {
      const r = resolved(o);
      assert.equal(r.isError, true);
      assert.equal(textOf(r), 'Error: SMTP connection refused');
    },
  },
  // Codes.
  {
    tool: 'query_legacy',
    known: true,
    reply: { error: { code: -32000, message: 'Database unavailable' } },
    rule: 'legacy-range-code',
    before: '"code":-32000',
    after: '"code":-32603',
    expect: (o) => rejected(o, -32603, 'Database unavailable', (d) => assert.deepEqual(d, { originalCode: -32000 })),
  },
  {
    tool: 'query_reserved',
    known: true,
    reply: { error: { code: -32050, message: 'Quota exceeded' } },
    rule: 'reserved-code',
    before: '"code":-32050',
    after: '"code":-32603',
    expect: (o) => rejected(o, -32603, 'Quota exceeded', (d) => assert.deepEqual(d, { originalCode: -32050 })),
  },
  {
    tool: 'query_null_id',
    known: true,
    reply: { message: { id: null, error: { code: -32603, message: 'Database unavailable' } } },
    rule: 'error-id-null',
    after: '"code":-32603,"message":"Database unavailable"',
    expect: (o) => rejected(o, -32603, 'Database unavailable'),
  },
];

/** The tools the faulty server lists, and how it answers unknown ones. */
function faultyTools(): { tools: Record<string, { reply: () => ToolReply }>; unknown: (name: string) => ToolReply } {
  const tools: Record<string, { reply: () => ToolReply }> = {
    ok: { reply: () => ({ result: { content: [{ type: 'text', text: 'fine' }] } }) },
  };
  for (const c of CASES) if (c.known) tools[c.tool] = { reply: () => c.reply };
  const unknown = (name: string): ToolReply =>
    CASES.find((c) => !c.known && c.tool === name)?.reply ?? { error: { code: -32602, message: `Unknown tool: ${name}` } };
  return { tools, unknown };
}

/** Whether the fixture frames the answer itself (a JSON body, or the SSE event e-2), rather than sending raw HTTP. */
const framed = (reply: ToolReply): boolean => !('http' in reply) && !('reset' in reply);

/** What the fixture sends for a framed answer to request `id`. */
function serverJson(reply: ToolReply, id: unknown): string {
  const fields = 'message' in reply ? reply.message : reply;
  return JSON.stringify({ jsonrpc: '2.0', id, ...fields });
}

/**
 * A front for the unknown-method case: answers resources/list with -32000 "Not supported" (the
 * faulty server declares no resources capability), framed as the faulty server frames answers,
 * and forwards every other request to `target` unchanged.
 */
async function startMethodFront(target: URL, mode: Mode): Promise<{ url: URL; close(): Promise<void> }> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let msg: { id?: unknown; method?: string } | undefined;
      try {
        msg = JSON.parse(body.toString('utf8')) as { id?: unknown; method?: string };
      } catch {
        msg = undefined;
      }
      if (req.method === 'POST' && msg?.method === 'resources/list') {
        const json = JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: 'Not supported' } });
        if (mode === 'sse') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(E1);
          res.end(`event: message\nid: e-2\ndata: ${json}\n\n`);
        } else {
          res.writeHead(200, { 'content-type': 'application/json' }).end(json);
        }
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']) {
        const v = req.headers[name];
        if (typeof v === 'string') headers[name] = v;
      }
      request(target, { method: (req.method ?? 'GET') as 'GET', headers, body: body.length > 0 ? body : null })
        .then(async (up) => {
          const out: Record<string, string> = {};
          for (const name of ['content-type', 'mcp-session-id', 'allow']) {
            const v = up.headers[name];
            if (typeof v === 'string') out[name] = v;
          }
          const bytes = Buffer.from(await up.body.arrayBuffer());
          res.writeHead(up.statusCode, out).end(bytes);
        })
        .catch(() => res.destroy());
    });
  });
  const url = new URL('/mcp', await listen(server));
  return { url, close: () => closeServer(server) };
}

async function shipped(name: 'audit.yaml' | 'enforce.yaml'): Promise<Policy> {
  const loaded = await loadPolicyFile(`config/${name}`, { rewritable: REWRITABLE });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
  return loaded.policy;
}

async function outcomeOf(p: Promise<unknown>): Promise<Outcome> {
  try {
    return { result: (await p) as Record<string, unknown> };
  } catch (error) {
    return { error };
  }
}

const recordsFor = (proxy: TestProxy, msg: string, where: (r: LogRecord) => boolean): LogRecord[] =>
  proxy.log.records.filter((r) => r.msg === msg && where(r));

/** The wire checks every rewritten answer must pass; returns the response message the client got. */
async function checkWire(
  w: WireExchange,
  mode: Mode,
  isFramed: boolean,
  original: string | undefined,
  gone: readonly string[],
): Promise<Record<string, unknown>> {
  const text = (await w.body).toString('utf8');
  const sent = JSON.parse(w.request) as { id: unknown };
  assert.equal(w.status, 200, `status ${w.status}: ${text}`);
  const msg = responseIn(w.contentType, text);
  assertValidResponse(msg, VERSION, 'tools/call');
  assert.deepEqual(msg.id, sent.id, "the answer carries the request's id");
  for (const g of gone) assert.ok(!text.includes(g), `${JSON.stringify(g)} reached the client: ${text}`);
  if (mode === 'sse' && isFramed) {
    assert.match(w.contentType, /^text\/event-stream/);
    assert.ok(text.startsWith(E1), `the event before the edited one arrives byte for byte: ${JSON.stringify(text)}`);
    const events = sseBlocks(text);
    assert.equal(events.length, 2, text);
    const edited = events[1]!;
    assert.equal(edited.raw, `event: message\nid: e-2\ndata: ${edited.data}\n\n`, 'the edited event keeps its event name and id, in place');
    assert.notEqual(edited.data, original, 'the event was rewritten');
    assert.deepEqual(JSON.parse(edited.data), msg);
  } else {
    assert.match(w.contentType, /^application\/json/);
    assert.notEqual(text, original, 'the body was rewritten');
  }
  return msg;
}

const enforce = await shipped('enforce.yaml');
const audit = await shipped('audit.yaml');

for (const mode of ['json', 'sse'] as const) {
  describe(`enforce.yaml: SDK client -> proxy -> faulty server (${mode})`, () => {
    let upstream: Awaited<ReturnType<typeof startFaultyServer>>;
    let proxy: TestProxy;
    let c: WireClient;

    before(async () => {
      upstream = await startFaultyServer({ mode, ...faultyTools() });
      proxy = await startProxy(upstream.url, { policy: () => enforce });
      c = await connectWireClient(proxy.url);
      const { tools } = await c.client.listTools();
      assert.equal(tools.length, CASES.filter((k) => k.known).length + 1);
    });
    after(async () => {
      await c?.close();
      await proxy?.close();
      await upstream?.close();
    });

    test('a good call passes unchanged and is not rewritten', async () => {
      const r = resolved(await outcomeOf(c.client.callTool({ name: 'ok', arguments: {} })));
      assert.equal(textOf(r), 'fine');
      const w = c.post('tools/call', 'ok');
      const text = (await w.body).toString('utf8');
      const sent = JSON.parse(w.request) as { id: unknown };
      const json = serverJson({ result: { content: [{ type: 'text', text: 'fine' }] } }, sent.id);
      assert.equal(text, mode === 'sse' ? `${E1}event: message\nid: e-2\ndata: ${json}\n\n` : json);
      assert.equal(recordsFor(proxy, 'rewrite', (x) => x.tool === 'ok').length, 0);
    });

    for (const k of CASES) {
      test(`${k.tool}: ${k.rule} is rewritten and the SDK client accepts it`, async () => {
        const o = await outcomeOf(c.client.callTool({ name: k.tool, arguments: {} }, undefined, { timeout: 1500 }));
        k.expect(o);
        const w = c.post('tools/call', k.tool);
        const sent = JSON.parse(w.request) as { id: unknown };
        const original = framed(k.reply) ? serverJson(k.reply, sent.id) : undefined;
        const msg = await checkWire(w, mode, framed(k.reply), original, k.gone ?? []);

        const rewrite = await proxy.log.waitFor((r) => r.msg === 'rewrite' && r.tool === k.tool);
        assert.ok((rewrite.rules as string[]).includes(k.rule), `rewrite rules ${JSON.stringify(rewrite.rules)} include ${k.rule}`);
        assert.equal(typeof rewrite.before, 'string');
        if (k.before !== undefined)
          assert.ok(String(rewrite.before).includes(k.before), `before ${JSON.stringify(rewrite.before)} keeps ${k.before}`);
        assert.ok(String(rewrite.after).includes(k.after), `after ${JSON.stringify(rewrite.after)} shows ${k.after}`);
        assert.deepEqual(JSON.parse(String(rewrite.after)), msg, 'the after excerpt is what the client got');
        assert.equal(rewrite.id, sent.id);
        const violation = recordsFor(proxy, 'violation', (r) => r.tool === k.tool && r.rule === k.rule)[0];
        assert.ok(violation, `a ${k.rule} violation for ${k.tool}`);
        assert.equal(violation.action, 'rewrite');
        assert.equal(violation.applied, true);
        const exchange = recordsFor(proxy, 'exchange', (r) => r.tool === k.tool)[0];
        assert.equal(exchange?.verdict, 'rewrite');
        assert.equal(exchange?.status, 200);
      });
    }

    test("query_null_id: the rewrite record's before shows the error the server sent", async () => {
      const rewrite = await proxy.log.waitFor((r) => r.msg === 'rewrite' && r.tool === 'query_null_id', 200);
      assert.ok(String(rewrite.before).includes('"id":null'), `before: ${JSON.stringify(rewrite.before)}`);
      assert.ok(String(rewrite.before).includes('Database unavailable'), `before: ${JSON.stringify(rewrite.before)}`);
    });
  });

  describe(`enforce.yaml: -32000 on a method the server does not serve (${mode})`, () => {
    let upstream: Awaited<ReturnType<typeof startFaultyServer>>;
    let front: Awaited<ReturnType<typeof startMethodFront>>;
    let proxy: TestProxy;
    let c: WireClient;
    before(async () => {
      upstream = await startFaultyServer({ mode, ...faultyTools() });
      front = await startMethodFront(upstream.url, mode);
      proxy = await startProxy(front.url, { policy: () => enforce });
      c = await connectWireClient(proxy.url);
    });
    after(async () => {
      await c?.close();
      await proxy?.close();
      await front?.close();
      await upstream?.close();
    });

    test('resources/list answered -32000 reaches the SDK client as -32601, the original code in data', async () => {
      assert.equal(c.client.getServerCapabilities()?.resources, undefined, 'the server did not declare resources');
      const o = await outcomeOf(c.client.request({ method: 'resources/list' }, ListResourcesResultSchema, { timeout: 3000 }));
      rejected(o, -32601, 'Not supported', (d) => assert.deepEqual(d, { originalCode: -32000 }));
      const w = c.post('resources/list');
      const text = (await w.body).toString('utf8');
      const sent = JSON.parse(w.request) as { id: unknown };
      const msg = responseIn(w.contentType, text);
      assertValidResponse(msg, VERSION);
      assert.deepEqual(msg.id, sent.id);
      if (mode === 'sse') {
        assert.ok(text.startsWith(E1), text);
        const edited = sseBlocks(text)[1]!;
        assert.equal(edited.raw, `event: message\nid: e-2\ndata: ${edited.data}\n\n`);
      }
      const rewrite = await proxy.log.waitFor((r) => r.msg === 'rewrite' && r.method === 'resources/list');
      assert.ok((rewrite.rules as string[]).includes('legacy-range-code'), JSON.stringify(rewrite.rules));
      assert.ok(String(rewrite.before).includes('"code":-32000'), String(rewrite.before));
      assert.ok(String(rewrite.after).includes('"code":-32601'), String(rewrite.after));
      const legacy = recordsFor(proxy, 'violation', (r) => r.method === 'resources/list' && r.rule === 'legacy-range-code')[0];
      assert.equal(legacy?.applied, true);
      assert.equal(legacy?.action, 'rewrite');
      const unknown = recordsFor(proxy, 'violation', (r) => r.method === 'resources/list' && r.rule === 'unknown-method-wrong-code')[0];
      assert.equal(unknown?.action, 'rewrite', 'unknown-method-wrong-code is found too');
    });

    test('resources/list: the unknown-method-wrong-code finding the client received put right is logged applied: true', async () => {
      const unknown = recordsFor(proxy, 'violation', (r) => r.method === 'resources/list' && r.rule === 'unknown-method-wrong-code')[0];
      assert.ok(unknown);
      assert.equal(unknown.applied, true);
    });
  });

  describe(`audit.yaml: the same faults pass unchanged (${mode})`, () => {
    let upstream: Awaited<ReturnType<typeof startFaultyServer>>;
    let front: Awaited<ReturnType<typeof startMethodFront>>;
    let proxy: TestProxy;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    let nextId = 100;

    const post = async (url: URL, body: string) => {
      const res = await request(url, { method: 'POST', headers, body });
      return {
        status: res.statusCode,
        contentType: String(res.headers['content-type'] ?? ''),
        body: Buffer.from(await res.body.arrayBuffer()),
      };
    };

    before(async () => {
      upstream = await startFaultyServer({ mode, ...faultyTools() });
      front = await startMethodFront(upstream.url, mode);
      proxy = await startProxy(front.url, { policy: () => audit });
      const init = await post(
        proxy.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      );
      assert.equal(init.status, 200);
      const session = responseIn(init.contentType, init.body.toString('utf8'));
      assert.equal((session.result as { protocolVersion: string }).protocolVersion, VERSION);
      const sid = (
        await request(upstream.url, {
          method: 'POST',
          headers,
          body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} }),
        })
      ).headers['mcp-session-id'];
      headers['mcp-session-id'] = String(sid);
      headers['mcp-protocol-version'] = VERSION;
      await post(proxy.url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
      const list = await post(proxy.url, JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }));
      assert.equal(list.status, 200);
    });
    after(async () => {
      await proxy?.close();
      await front?.close();
      await upstream?.close();
    });

    for (const k of CASES) {
      test(`${k.tool}: ${k.rule} is logged with applied: false, the bytes are the server's`, async () => {
        const id = nextId++;
        const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: k.tool, arguments: {} } });
        const via = await post(proxy.url, body);
        if ('reset' in k.reply) {
          // The server sent nothing: the proxy answers for it, as it does without a policy.
          await assert.rejects(post(upstream.url, body));
          assert.equal(via.status, 502);
          const msg = responseIn(via.contentType, via.body.toString('utf8'));
          assert.equal((msg.error as { data: { reason: unknown } }).data.reason, 'WARDEN_UPSTREAM_RESET');
        } else {
          const direct = await post(upstream.url, body);
          assert.equal(via.status, direct.status);
          assert.equal(via.contentType, direct.contentType);
          assert.ok(via.body.equals(direct.body), `the bytes differ:\n${via.body.toString('utf8')}\n${direct.body.toString('utf8')}`);
          if (mode === 'sse' && framed(k.reply))
            assert.equal(via.body.toString('utf8'), `${E1}event: message\nid: e-2\ndata: ${serverJson(k.reply, id)}\n\n`);
        }
        const violation = await proxy.log.waitFor((r) => r.msg === 'violation' && r.tool === k.tool && r.rule === k.rule, 1000);
        assert.equal(violation.applied, false);
        assert.equal(violation.action, 'log');
        assert.equal(violation.id, id);
        assert.equal(recordsFor(proxy, 'rewrite', () => true).length, 0, 'nothing is rewritten in audit mode');
        assert.equal(recordsFor(proxy, 'exchange', (r) => r.id === id)[0]?.verdict, undefined);
      });
    }

    test("resources/list: -32000 is logged with applied: false, the bytes are the server's", async () => {
      const id = nextId++;
      const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'resources/list', params: {} });
      const via = await post(proxy.url, body);
      const direct = await post(front.url, body);
      assert.equal(via.status, direct.status);
      assert.ok(via.body.equals(direct.body), via.body.toString('utf8'));
      for (const rule of ['legacy-range-code', 'unknown-method-wrong-code']) {
        const v = await proxy.log.waitFor((r) => r.msg === 'violation' && r.method === 'resources/list' && r.rule === rule);
        assert.equal(v.applied, false, rule);
      }
    });
  });
}
