// A client that misbehaves, on real sockets: aborts (the soak of 2,000 is test/slow/abort-soak.test.ts), hostile bodies,
// slowloris, header injection, and JSON-RPC the proxy must forward and correlate although it is odd.
// Each case: what the client gets, what the log says, and that the same proxy still serves.
//
// Already covered in proxy-wire.test.ts, not repeated here:
//   'a body over the limit gets 413 with a JSON-RPC error and never reaches the upstream'
//       (a small body over a small --max-body, sent whole)
//   'a client that closes its connection aborts the upstream request'   (once, mid-stream)
//   'ids 1 and "1" in one session are different requests'
//   'a 2026-07-28 request keeps its MCP headers, loses hop-by-hop ones, gains X-Forwarded-*'
// rules-protocol.test.ts judges batches under each version ('batch-not-allowed fires on a batch
// (2025-06-18)'); the batch test here is about forwarding and correlating one, not the rule.
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { request } from 'undici';
import { DEFAULT_LIMITS } from '../../src/config/defaults.ts';
import { createProxy } from '../../src/proxy/server.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { byTool, jsonRpcResult, startRawServer, type RawHandler, type RawServer } from '../fixtures/raw-server.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import { ACCEPT, assertStillServes, call, post, rpc, sleep, within } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const running: Array<{ close(): Promise<void> }> = [];
const sockets = new Set<Socket>();
async function setup(
  handler: RawHandler,
  options: Parameters<typeof startProxy>[1] = {},
): Promise<{ upstream: RawServer; proxy: TestProxy }> {
  const upstream = await startRawServer(handler);
  const proxy = await startProxy(new URL('/mcp', upstream.url), options);
  running.push(proxy, upstream);
  return { upstream, proxy };
}
afterEach(() => {
  for (const s of sockets) s.destroy();
  sockets.clear();
});
after(async () => {
  for (const r of running.reverse()) await r.close();
});

/** A raw TCP client: what it received, and when the proxy ended or closed the connection. */
interface RawClient {
  socket: Socket;
  text(): string;
  /** Resolves when the peer ended its side or the socket closed. */
  ended: Promise<'end' | 'close'>;
  closed: Promise<void>;
}
function rawClient(port: number): RawClient {
  const socket = connect(port, '127.0.0.1');
  sockets.add(socket);
  let received = '';
  socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
  socket.on('error', () => {});
  const closed = new Promise<void>((r) => socket.once('close', () => r()));
  const ended = new Promise<'end' | 'close'>((r) => {
    socket.once('end', () => r('end'));
    socket.once('close', () => r('close'));
  });
  return { socket, text: () => received, ended, closed };
}

/** Sends a whole request on a fresh connection (connection: close) and resolves with the raw answer. */
async function rawExchange(port: number, wire: string | Buffer): Promise<string> {
  const c = rawClient(port);
  c.socket.write(wire);
  await within(5000, 'the proxy to answer and close', c.closed);
  return c.text();
}

const head = (body: string, extra = ''): string =>
  `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;

/** The JSON body of a raw HTTP/1.1 answer (content-length framed). */
function jsonOf(raw: string): unknown {
  const at = raw.indexOf('\r\n\r\n');
  return JSON.parse(Buffer.from(raw.slice(at + 4), 'latin1').toString('utf8'));
}

describe('the client aborts', () => {
  test('mid-request (before the server answered): the upstream request is closed, the exchange logged client-closed', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    let seen!: () => void;
    const arrived = new Promise<void>((r) => (seen = r));
    const { proxy } = await setup(
      byTool({
        stall: (_req, res) => {
          res.on('close', () => upstreamClosed());
          seen();
        },
      }),
    );
    const controller = new AbortController();
    const pending = request(proxy.url, {
      method: 'POST',
      body: call('abort-early', 'stall'),
      headers: { 'content-type': 'application/json', accept: ACCEPT },
      signal: controller.signal,
    });
    pending.catch(() => {});
    await within(2000, 'the request to reach the server', arrived);
    controller.abort();
    await assert.rejects(pending);
    await within(2000, 'the upstream request to be closed', closed);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'abort-early');
    assert.equal(record.outcome, 'client-closed');
    assert.equal(record.transport, 'none');
    assert.equal(record.status, undefined, 'the client received no status');
    await assertStillServes(proxy);
  });

  test('while still sending its body: nothing is forwarded, the log says the client left (no proxy error)', async () => {
    const { upstream, proxy } = await setup(byTool({}));
    const body = call('half', 'echo');
    const c = rawClient(Number(proxy.url.port));
    // Closed once the bytes are with the system (a close before the connection is made drops them).
    await new Promise<void>((resolve) =>
      c.socket.write(
        `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\ncontent-length: ${body.length + 1000}\r\n\r\n${body}`,
        () => resolve(),
      ),
    );
    c.socket.destroy();
    const left = await proxy.log.waitFor((r) => r.msg === 'client disconnected');
    assert.equal(left.when, 'request');
    assert.equal(
      proxy.log.find((r) => r.msg === 'request rejected'),
      undefined,
      'no answer for a client that left',
    );
    assert.equal(upstream.requests.length, 0, 'a half-sent body is never forwarded');
    await assertStillServes(proxy);
  });
});

describe('hostile bodies', () => {
  test("malformed JSON is forwarded as sent (audit), the server's parse error relayed, the log says the body was not JSON", async () => {
    const parseError = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';
    const { upstream, proxy } = await setup((_req, res, body) => {
      if (body.toString().startsWith('{"jsonrpc":"2.0","id":"broken"')) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(parseError);
        return;
      }
      return byTool({})(_req, res, body);
    });
    const malformed = '{"jsonrpc":"2.0","id":"broken","method":"tools/call","params":{"name":"echo",}';
    const res = await post(proxy.url, malformed);
    assert.equal(res.statusCode, 400);
    assert.equal(await res.body.text(), parseError, "the server's answer, unchanged");
    assert.equal(upstream.requests.at(-1)?.body.toString(), malformed, 'forwarded byte for byte');
    const undecodable = await proxy.log.waitFor((r) => r.msg === 'undecodable' && r.from === 'client');
    assert.equal(undecodable.problem, 'not-json');
    assert.equal(undecodable.bytes, malformed.length);
    const violation = await proxy.log.waitFor((r) => r.msg === 'violation' && r.rule === 'request-envelope');
    assert.equal(violation.message, "the client's POST body is not JSON");
    assert.equal(proxy.exchanges().length, 0, 'no id could be read: no exchange opened');
    await assertStillServes(proxy);
  });

  test('a 1 GiB body (declared): 413 at once with a JSON-RPC error, the connection closed, nothing read or forwarded', async () => {
    const { upstream, proxy } = await setup(byTool({}));
    const c = rawClient(Number(proxy.url.port));
    const started = performance.now();
    c.socket.write(
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\ncontent-length: 1073741824\r\n\r\n`,
    );
    c.socket.write(
      `{"jsonrpc":"2.0","id":"giant","method":"tools/call","params":{"name":"echo","arguments":{"blob":"${'x'.repeat(64 * 1024)}`,
    );
    // The client keeps its side open and never sends the rest: the proxy must answer and close anyway.
    const how = await within(3000, 'the proxy to close the connection', c.ended);
    assert.ok(how === 'end' || how === 'close');
    assert.ok(performance.now() - started < 3000);
    const raw = c.text();
    assert.match(raw, /^HTTP\/1\.1 413 /);
    assert.match(raw, /\r\nconnection: close\r\n/i);
    const body = jsonOf(raw) as { id: unknown; error: { code: number; data: { reason: string } } };
    assert.equal(body.id, null, 'the body was never read, so no id');
    assert.equal(body.error.code, -32600);
    assert.equal(body.error.data.reason, 'WARDEN_BODY_TOO_LARGE');
    const rejected = await proxy.log.waitFor((r) => r.msg === 'request rejected');
    assert.equal(rejected.proxyError, 'WARDEN_BODY_TOO_LARGE');
    assert.equal(upstream.requests.length, 0);
    await assertStillServes(proxy);
  });

  test('a 1 GiB body streamed without a length: cut off past --max-body, after a bounded number of bytes', async () => {
    const { upstream, proxy } = await setup(byTool({}), { limits: { maxRequestBytes: 1024 * 1024 } });
    const c = rawClient(Number(proxy.url.port));
    let closed = false;
    void c.closed.then(() => (closed = true));
    c.socket.write(
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\ntransfer-encoding: chunked\r\n\r\n`,
    );
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
    let pushed = 0;
    const started = performance.now();
    while (!closed && pushed < 1024 ** 3 && performance.now() - started < 10_000) {
      if (!c.socket.write(frame)) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 100);
          const done = (): void => {
            clearTimeout(t);
            resolve();
          };
          c.socket.once('drain', done);
          c.socket.once('close', done);
        });
      }
      pushed += chunk.length;
    }
    await within(3000, 'the proxy to close the connection', c.closed);
    assert.ok(pushed < 64 * 1024 * 1024, `the client got ${(pushed / 2 ** 20).toFixed(0)} MiB into the connection before it was closed`);
    assert.match(c.text(), /^HTTP\/1\.1 413 /);
    assert.equal((jsonOf(c.text()) as { error: { data: { reason: string } } }).error.data.reason, 'WARDEN_BODY_TOO_LARGE');
    const rejected = await proxy.log.waitFor((r) => r.msg === 'request rejected');
    assert.equal(rejected.proxyError, 'WARDEN_BODY_TOO_LARGE');
    assert.equal(upstream.requests.length, 0);
    await assertStillServes(proxy);
  });
});

describe('slowloris', () => {
  /** Writes `text` one byte every `everyMs` until the proxy closes the connection; resolves with how long that took. */
  async function trickle(
    port: number,
    text: string,
    everyMs = 20,
    limitMs = 5000,
  ): Promise<{ closedAfterMs: number | undefined; answer: string; sent: number }> {
    const c = rawClient(port);
    const started = performance.now();
    let sent = 0;
    let closedAt: number | undefined;
    void c.closed.then(() => (closedAt = performance.now()));
    while (closedAt === undefined && performance.now() - started < limitMs) {
      if (sent < text.length) c.socket.write(text[sent++]!);
      await sleep(everyMs);
    }
    c.socket.destroy();
    return { closedAfterMs: closedAt === undefined ? undefined : closedAt - started, answer: c.text(), sent };
  }
  const HEADERS = `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\nx-padding: ${'a'.repeat(4000)}`;

  test("the proxy sets client timeouts shorter than node's defaults (headers 60 s, request 300 s)", async () => {
    const { proxy } = await setup(byTool({}));
    assert.equal(proxy.server.headersTimeout, DEFAULT_LIMITS.clientHeadersTimeoutMs);
    assert.equal(proxy.server.requestTimeout, DEFAULT_LIMITS.clientRequestTimeoutMs);
    assert.ok(proxy.server.headersTimeout < 60_000);
    assert.ok(proxy.server.requestTimeout < 300_000);
    const { proxy: tuned } = await setup(byTool({}), { limits: { clientHeadersTimeoutMs: 500, clientRequestTimeoutMs: 1000 } });
    assert.equal(tuned.server.headersTimeout, 500);
    assert.equal(tuned.server.requestTimeout, 1000);
  });

  test('headers trickled byte by byte are cut off about clientHeadersTimeoutMs after they began', async () => {
    const { proxy } = await setup(byTool({}), { limits: { clientHeadersTimeoutMs: 500 } });
    const { closedAfterMs } = await trickle(Number(proxy.url.port), HEADERS, 20, 3000);
    assert.ok(
      closedAfterMs !== undefined && closedAfterMs < 2000,
      `closed after ${closedAfterMs === undefined ? 'more than 3000' : Math.round(closedAfterMs)} ms`,
    );
  });

  /** The proxy with node's connection check every 100 ms: what server.ts should set (see the todo above). */
  async function checkedProxy(limits: {
    clientHeadersTimeoutMs: number;
    clientRequestTimeoutMs: number;
  }): Promise<{ upstream: RawServer; url: URL; log: ReturnType<typeof createLogCapture> }> {
    const upstream = await startRawServer(byTool({}));
    const log = createLogCapture();
    const created = createProxy({
      upstream: new URL('/mcp', upstream.url),
      logger: createLogger({ destination: log.stream, level: 'debug' }),
      limits,
    });
    // A test-only tweak: node reads it when the server starts listening.
    (created.server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 100;
    const running_ = await created.listen(0, '127.0.0.1');
    running.push(running_, upstream);
    return { upstream, url: running_.url, log };
  }

  test('with the connection check every 100 ms: trickled headers are cut at the headers timeout with a 400, others served meanwhile', async () => {
    const proxy = await checkedProxy({ clientHeadersTimeoutMs: 500, clientRequestTimeoutMs: 2000 });
    const slow = trickle(Number(proxy.url.port), HEADERS, 20, 8000);
    await sleep(100);
    await assertStillServes(proxy);
    const { closedAfterMs, answer, sent } = await slow;
    assert.ok(closedAfterMs !== undefined, 'the proxy closed the connection');
    assert.ok(closedAfterMs >= 400 && closedAfterMs < 4000, `closed after ${Math.round(closedAfterMs)} ms`);
    assert.ok(sent < HEADERS.length, 'before the headers were complete');
    // A timeout is answered 408 Request Timeout, as node's own handler would.
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.equal(proxy.upstream.requests.length, 1, 'only the normal request was forwarded');
    await assertStillServes(proxy);
  });

  test('with the connection check every 100 ms: a trickled body is cut at the request timeout, and logged', async () => {
    const proxy = await checkedProxy({ clientHeadersTimeoutMs: 500, clientRequestTimeoutMs: 1000 });
    const c = rawClient(Number(proxy.url.port));
    const started = performance.now();
    c.socket.write(
      `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\ncontent-length: 4000\r\n\r\n`,
    );
    let sent = 0;
    let closed = false;
    void c.closed.then(() => (closed = true));
    while (!closed && performance.now() - started < 8000) {
      c.socket.write('x');
      sent++;
      await sleep(20);
    }
    const elapsed = performance.now() - started;
    assert.ok(closed && elapsed >= 900 && elapsed < 5000, `closed after ${Math.round(elapsed)} ms`);
    assert.ok(sent < 4000);
    assert.match(c.text(), /^HTTP\/1\.1 408 /);
    const cut = await proxy.log.waitFor((r) => r.msg === 'client error');
    assert.equal(cut.proxyError, 'WARDEN_CLIENT_TIMEOUT');
    // One answer, one count: the request's body read that the cut ended is not a second error.
    assert.equal(
      proxy.log.find((r) => r.msg === 'request rejected'),
      undefined,
    );
    assert.equal(proxy.upstream.requests.length, 0);
    await assertStillServes(proxy);
  });

  test('a client cut off for trickling its headers is logged', async () => {
    const proxy = await checkedProxy({ clientHeadersTimeoutMs: 300, clientRequestTimeoutMs: 1000 });
    await trickle(Number(proxy.url.port), HEADERS, 20, 2000);
    await proxy.log.waitFor((r) => r.level !== undefined && r.msg !== 'listening', 500);
  });
});

describe('header injection', () => {
  const body = rpc('inj', 'ping', {});
  const cases: Array<[string, string]> = [
    ['a bare CR inside a value', 'x-note: a\rinjected: yes\r\n'],
    ['a bare LF inside a value', 'x-note: a\ninjected: yes\r\n'],
    ['a NUL inside a value', 'x-note: a\0b\r\n'],
    ['an obsolete line folding', 'x-note: a\r\n injected: yes\r\n'],
    ['a space before the colon', 'x-note : a\r\n'],
    ['transfer-encoding and content-length together', 'transfer-encoding: chunked\r\n'],
    ['two different content-lengths', 'content-length: 3\r\n'],
  ];

  test('malformed headers get a 400 from node, nothing is forwarded, the proxy keeps serving', async () => {
    const { upstream, proxy } = await setup(byTool({}));
    const port = Number(proxy.url.port);
    for (const [name, extra] of cases) {
      const answer = await rawExchange(port, head(body, extra) + body);
      assert.match(answer, /^HTTP\/1\.1 400 /, name);
      assert.equal(upstream.requests.length, 0, `${name}: not forwarded`);
    }
    await assertStillServes(proxy);
    const forwarded = upstream.requests.at(-1)!;
    assert.equal(forwarded.headers.injected, undefined);
  });

  test('a second Host header is rejected with 400 (RFC 9112 section 3.2)', async () => {
    const { upstream, proxy } = await setup(byTool({}));
    const wire = `POST /mcp HTTP/1.1\r\nhost: proxy.example\r\nhost: evil.example\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`;
    assert.match(await rawExchange(Number(proxy.url.port), wire), /^HTTP\/1\.1 400 /);
    assert.equal(upstream.requests.length, 0);
  });

  test("forged X-Forwarded-*: the real peer is appended to X-Forwarded-For; Host and Proto are the proxy's own", async () => {
    const { upstream, proxy } = await setup(byTool({}));
    const res = await post(proxy.url, body, {
      'x-forwarded-for': '203.0.113.7',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
    });
    assert.equal(res.statusCode, 200);
    await res.body.text();
    const seen = upstream.requests.at(-1)!;
    assert.equal(seen.headers['x-forwarded-for'], '203.0.113.7, 127.0.0.1', 'the claimed address stays, the real peer comes last');
    assert.equal(seen.headers['x-forwarded-host'], proxy.url.host);
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    await assertStillServes(proxy);
  });
});

describe('JSON-RPC the proxy forwards and correlates', () => {
  test("an unknown method is forwarded; the server's -32601 reaches the client and the log", async () => {
    const { upstream, proxy } = await setup((req, res, raw) => {
      const m = JSON.parse(raw.toString()) as { id: unknown; method: string };
      if (m.method === 'tools/call') return byTool({})(req, res, raw);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } }));
    });
    const sent = rpc('unknown-1', 'no/such-method', { x: 1 });
    const res = await post(proxy.url, sent);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), {
      jsonrpc: '2.0',
      id: 'unknown-1',
      error: { code: -32601, message: 'Method not found: no/such-method' },
    });
    assert.equal(upstream.requests[0]?.body.toString(), sent);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'unknown-1');
    assert.equal(record.method, 'no/such-method');
    assert.equal(record.outcome, 'error:-32601');
    await assertStillServes(proxy);
  });

  test('an unknown HTTP method on the MCP path goes through the pass-through and is logged', async () => {
    const { upstream, proxy } = await setup((req, res, raw) => {
      if (req.method !== 'PUT') return byTool({})(req, res, raw);
      res.writeHead(405, { allow: 'GET, POST, DELETE', 'content-type': 'text/plain' });
      res.end(`${req.method} not allowed`);
    });
    const res = await request(proxy.url, { method: 'PUT', body: 'x', headers: { 'content-type': 'text/plain' } });
    assert.equal(res.statusCode, 405);
    assert.equal(await res.body.text(), 'PUT not allowed');
    assert.equal(upstream.requests[0]?.method, 'PUT');
    const record = await proxy.log.waitFor((r) => r.msg === 'passthrough');
    assert.equal(record.method, 'PUT');
    assert.equal(record.status, 405);
    const answer = await rawExchange(Number(proxy.url.port), 'BREW /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 400 /, 'a method node does not know is a parse error');
    await assertStillServes(proxy);
  });

  test('a batch under 2025-06-18 is forwarded as sent, each request correlated, the violation logged', async () => {
    const { upstream, proxy } = await setup((req, res, raw) => (raw[0] === 0x5b ? jsonRpcResult({}) : byTool({}))(req, res, raw));
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 'b-1', method: 'ping' },
      { jsonrpc: '2.0', id: 2, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } },
    ]);
    const res = await post(proxy.url, batch, { 'mcp-protocol-version': '2025-06-18' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(await res.body.json(), [
      { jsonrpc: '2.0', id: 'b-1', result: {} },
      { jsonrpc: '2.0', id: 2, result: {} },
    ]);
    assert.equal(upstream.requests[0]?.body.toString(), batch, 'forwarded byte for byte');
    const violation = await proxy.log.waitFor((r) => r.msg === 'violation' && r.rule === 'batch-not-allowed');
    assert.equal(violation.protocolVersion, '2025-06-18');
    assert.equal(violation.action, 'log');
    for (const id of ['b-1', 2]) {
      const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === id);
      assert.equal(record.outcome, 'result');
      assert.equal(record.protocolVersion, '2025-06-18');
    }
    await assertStillServes(proxy);
  });

  test('ids of every kind JSON-RPC allows are forwarded unchanged and correlated, type kept', async () => {
    // The server answers with the id exactly as it appeared on the wire.
    const { upstream, proxy } = await setup((req, res, raw) => {
      const text = raw.toString('utf8');
      const id = /^\{"jsonrpc":"2.0","id":(.*),"method":"ping"\}$/s.exec(text)?.[1];
      if (id === undefined) return byTool({})(req, res, raw);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"jsonrpc":"2.0","id":${id},"result":{}}`);
    });
    const ids: Array<[string, unknown]> = [
      ['0', 0],
      ['7', 7],
      ['-7', -7],
      ['1.5', 1.5],
      ['1e2', 100],
      // biome-ignore lint/correctness/noPrecisionLoss: beyond 2^53 on purpose: the log holds the nearest double
      ['9007199254740993', 9007199254740993],
      ['""', ''],
      ['"7"', '7'],
      ['"ïd ✓ 😀 \\u0000 \\"q\\" \u05e9\u05dc\u05d5\u05dd"', 'ïd ✓ 😀 \u0000 "q" \u05e9\u05dc\u05d5\u05dd'],
      // A long id is correlated whole; its record carries it cut to 1,024 characters (LOG_BOUNDS).
      [JSON.stringify('L'.repeat(10_000)), `${'L'.repeat(1024)}…[10000 chars]`],
    ];
    for (const [wire, value] of ids) {
      const sent = `{"jsonrpc":"2.0","id":${wire},"method":"ping"}`;
      const res = await post(proxy.url, sent);
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), `{"jsonrpc":"2.0","id":${wire},"result":{}}`, `id ${wire.slice(0, 40)}: the answer unchanged`);
      assert.equal(upstream.requests.at(-1)?.body.toString(), sent, `id ${wire.slice(0, 40)}: forwarded byte for byte`);
      const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.method === 'ping' && r.id === value);
      assert.equal(typeof record.id, typeof value, `id ${wire.slice(0, 40)}: its type kept`);
      assert.equal(record.outcome, 'result', `id ${wire.slice(0, 40)}: matched to its response`);
    }
    assert.equal(proxy.exchanges().length, ids.length);
    await assertStillServes(proxy);
  });

  test('ids JSON-RPC does not allow (null, boolean, object, array) are forwarded, flagged, and open no exchange', async () => {
    const invalidRequest: RawHandler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}');
    };
    const { upstream, proxy } = await setup((req, res, raw) =>
      (raw.toString().includes('"method":"ping"') ? invalidRequest : byTool({}))(req, res, raw),
    );
    for (const wire of ['null', 'true', '{"a":1}', '[1]']) {
      const sent = `{"jsonrpc":"2.0","id":${wire},"method":"ping"}`;
      const res = await post(proxy.url, sent);
      assert.equal(res.statusCode, 200);
      await res.body.text();
      assert.equal(upstream.requests.at(-1)?.body.toString(), sent);
    }
    const flagged = proxy.log.records.filter((r) => r.msg === 'violation' && r.rule === 'request-envelope');
    assert.equal(flagged.length, 4);
    assert.equal(proxy.exchanges().length, 0);
    await assertStillServes(proxy);
  });
});
