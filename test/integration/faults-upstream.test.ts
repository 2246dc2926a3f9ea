// An upstream that misbehaves, on real sockets: every client still gets an answer it can use (a
// JSON-RPC error with its request's id, or a cleanly ended stream once headers were sent), the log
// says what happened, and the same proxy keeps serving other clients.
//
// Already covered in proxy-wire.test.ts, not repeated here:
//   'refused connection: 502'                        (status, body, reason, exchange record)
//   'too slow: 504 after the headers timeout'        (status, id, reason)
//   'silent between events: the stream ends cleanly after the idle timeout'
//   'reset in the middle of a JSON body: 502 with the id'   (FIN, chunked)
//   'reset in the middle of an SSE stream: delivered events arrive, then a clean end'   (FIN)
//   'an HTML 500 passes unchanged and is recorded as undecodable'
// What those tests leave out (the proxy serving others during and after each of them) is the
// "one proxy through every fault in turn" test below; the variants here (RST instead of FIN, a
// server that comes back, stalls mid-body, closes without answering, oversize bodies and events,
// invalid UTF-8) are new.
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import {
  byTool,
  html500,
  jsonRpcResult,
  resetAfter,
  sseEvents,
  stall,
  startRawServer,
  type RawHandler,
  type RawServer,
} from '../fixtures/raw-server.ts';
import { closeServer, listen } from '../helpers/net.ts';
import { ACCEPT, assertStillServes, brokenStream, call, post, sleep, within } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

interface RpcError {
  jsonrpc: string;
  id: unknown;
  error: { code: number; message: string; data: { reason: string; by: string } };
}

const running: Array<{ close(): Promise<void> }> = [];
const cleanups: Array<() => void> = [];
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
  for (const c of cleanups.splice(0)) c();
});
after(async () => {
  for (const r of running.reverse()) await r.close();
});

/** The JSON-RPC error the proxy answers with, checked against the id and reason it must carry. */
async function expectProxyError(res: Awaited<ReturnType<typeof post>>, status: number, id: unknown, reason: string): Promise<void> {
  assert.equal(res.statusCode, status);
  assert.equal(res.headers['content-type'], 'application/json');
  const body = (await res.body.json()) as RpcError;
  assert.equal(body.jsonrpc, '2.0');
  assert.deepEqual(body.id, id);
  assert.equal(body.error.code, -32603);
  assert.equal(body.error.data.reason, reason);
  assert.equal(body.error.data.by, 'mcp-warden');
}

/** Reads a response with node:http: how many bytes came, and whether it ended cleanly or was cut. */
function readRaw(url: URL, body: string): Promise<{ status: number; bytes: number; complete: boolean; error: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT } }, (res) => {
      let bytes = 0;
      let error: string | undefined;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('error', (err: NodeJS.ErrnoException) => (error = err.code ?? err.message));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, bytes, complete: res.complete, error }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('refused connections', () => {
  test('the server refuses, then comes back on the same port: the same proxy serves again', async () => {
    // Take a free port, then close it: connections to it are refused.
    const probe = createServer();
    const base = await listen(probe);
    await closeServer(probe);
    const proxy = await startProxy(new URL('/mcp', base));
    running.push(proxy);

    await expectProxyError(await post(proxy.url, call('refused-1', 'echo')), 502, 'refused-1', 'WARDEN_UPSTREAM_UNREACHABLE');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'refused-1');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_UNREACHABLE');

    const revived = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] })(req, res, Buffer.concat(chunks)));
    });
    await new Promise<void>((resolve, reject) => {
      revived.once('error', reject);
      revived.listen(Number(base.port), '127.0.0.1', () => resolve());
    });
    running.push({ close: () => closeServer(revived) });
    await assertStillServes(proxy);
  });
});

describe('resets and closes', () => {
  test('a TCP RST in the middle of a JSON body: 502 with the id, logged, and the proxy still serves', async () => {
    const { proxy } = await setup(
      byTool({
        rst: resetAfter('{"jsonrpc":"2.0","id":"rst-json","result":{"content":[{"type":"te', {
          contentType: 'application/json',
          rst: true,
        }),
      }),
    );
    await expectProxyError(await post(proxy.url, call('rst-json', 'rst')), 502, 'rst-json', 'WARDEN_UPSTREAM_RESET');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'rst-json');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_RESET');
    assert.equal(record.status, 502);
    assert.ok(
      proxy.log.find((r) => r.msg === 'violation' && r.rule === 'no-response' && r.id === 'rst-json'),
      'the dropped answer is a finding',
    );
    await assertStillServes(proxy);
  });

  test('a TCP RST in the middle of an SSE stream: every complete event delivered, then an error with the id and a clean end; stream broken logged', async () => {
    const events = [
      'event: message\nid: 1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n',
      ': keepalive\n\n',
      'id: 2\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}\n\n',
    ];
    const { upstream, proxy } = await setup(
      byTool({ rst: resetAfter(`${events.join('')}data: {"jsonrpc":"2.0","id":"rst-sse","res`, { rst: true }) }),
    );
    const res = await post(proxy.url, call('rst-sse', 'rst'));
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'text/event-stream');
    // undici would reject a body that was cut: text() resolving means the stream ended cleanly.
    const got = brokenStream(await res.body.text(), events.join(''));
    assert.equal(got.head, events.join(''), 'every complete event, none of the broken one');
    assert.deepEqual(
      got.error,
      { id: 'rst-sse', code: -32603, reason: 'WARDEN_UPSTREAM_RESET' },
      "then the proxy's error for the waiting request",
    );
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'rst-sse');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.transport, 'sse');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_RESET');
    const broken = proxy.log.find((r) => r.msg === 'stream broken');
    assert.equal(broken?.proxyError, 'WARDEN_UPSTREAM_RESET');
    assert.equal(broken?.events, 3);
    // What broke and where, never a bare code (#25: 'stream broken: undefined').
    assert.equal(typeof broken?.detail, 'string');
    assert.match(String(broken?.cause), /ECONNRESET|other side closed|terminated/i);
    assert.equal(broken?.upstream, new URL('/mcp', upstream.url).href);
    await assertStillServes(proxy);
  });

  test('the server reads the request and closes the connection without a response: 502 with the id', async () => {
    const { upstream, proxy } = await setup(byTool({ drop: (_req, res) => void res.socket?.destroy() }));
    await expectProxyError(await post(proxy.url, call('dropped', 'drop')), 502, 'dropped', 'WARDEN_UPSTREAM_RESET');
    assert.equal(
      upstream.requests.filter((r) => r.body.toString().includes('"dropped"')).length,
      1,
      'the request reached the server once: not retried',
    );
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'dropped');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_RESET');
    assert.equal(record.transport, 'none');
    await assertStillServes(proxy);
  });

  test('the server accepts the connection and closes it before reading anything: 502 with the id', async () => {
    let drop = true;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] })(req, res, Buffer.concat(chunks)));
    });
    server.on('connection', (socket: Socket) => {
      if (drop) socket.destroy();
    });
    const base = await listen(server);
    running.push({ close: () => closeServer(server) });
    const proxy = await startProxy(new URL('/mcp', base));
    running.push(proxy);

    await expectProxyError(await post(proxy.url, call('unread', 'echo')), 502, 'unread', 'WARDEN_UPSTREAM_RESET');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'unread');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_RESET');
    drop = false;
    await assertStillServes(proxy);
  });
});

describe('stalls', () => {
  test('a server that never sends headers holds up only its own client: others are served meanwhile, then 504 with the id', async () => {
    const { proxy } = await setup(byTool({ stall: stall() }), { limits: { upstreamHeadersTimeoutMs: 3000 } });
    const started = performance.now();
    let settled = false;
    const stalled = post(proxy.url, call('stalled', 'stall')).finally(() => (settled = true));
    await sleep(50);
    await assertStillServes(proxy);
    await assertStillServes(proxy);
    assert.equal(settled, false, 'the other clients were answered while the stalled request was still waiting');
    await expectProxyError(await stalled, 504, 'stalled', 'WARDEN_UPSTREAM_TIMEOUT');
    assert.ok(performance.now() - started < 10_000);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'stalled');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_TIMEOUT');
    assert.equal(record.status, 504);
  });

  test('a server that stalls in the middle of a JSON body: 504 with the id after the idle timeout (nothing was sent yet)', async () => {
    const stallMidBody: RawHandler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0","id":"mid-json","result":{"content":[');
    };
    const { proxy } = await setup(byTool({ stall: stallMidBody }), { limits: { upstreamBodyTimeoutMs: 150 } });
    const started = performance.now();
    await expectProxyError(await post(proxy.url, call('mid-json', 'stall')), 504, 'mid-json', 'WARDEN_UPSTREAM_TIMEOUT');
    // undici's timers tick in coarse steps: bounded, not exact.
    assert.ok(performance.now() - started < 5_000);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'mid-json');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_TIMEOUT');
    assert.equal(record.status, 504);
    await assertStillServes(proxy);
  });
});

describe('one proxy through every fault in turn', () => {
  test('each faulty exchange gets its answer, a long stream of another client flows throughout, normal requests succeed in between', async () => {
    let stopTicker = false;
    const ticker: RawHandler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let n = 1; !stopTicker && n < 2000; n++) {
        if (res.destroyed) return;
        res.write(`id: ${n}\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":${n}}}\n\n`);
        await sleep(40);
      }
      res.end('data: {"jsonrpc":"2.0","id":"ticker","result":{"content":[{"type":"text","text":"done"}]}}\n\n');
    };
    const { proxy } = await setup(
      byTool({
        ticker,
        stall: stall(),
        idle: sseEvents(['data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}}\n\n'], 0, {
          end: false,
        }),
        resetJson: resetAfter('{"jsonrpc":"2.0","id":"reset-json","res', { contentType: 'application/json' }),
        resetSse: resetAfter(
          'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}}\n\ndata: {"jsonrpc',
          {},
        ),
        html: html500(),
        drop: (_req, res) => void res.socket?.destroy(),
      }),
      { limits: { upstreamHeadersTimeoutMs: 1000, upstreamBodyTimeoutMs: 1000 } },
    );

    const tick = await post(proxy.url, call('ticker', 'ticker'));
    assert.equal(tick.statusCode, 200);
    let streamed = '';
    const reading = (async () => {
      for await (const chunk of tick.body) streamed += String(chunk);
    })();

    await expectProxyError(await post(proxy.url, call('stall', 'stall')), 504, 'stall', 'WARDEN_UPSTREAM_TIMEOUT');
    await assertStillServes(proxy);
    const idle = await post(proxy.url, call('idle', 'idle'));
    assert.equal(idle.statusCode, 200);
    assert.match(await idle.body.text(), /"data":"one"/);
    await assertStillServes(proxy);
    await expectProxyError(await post(proxy.url, call('reset-json', 'resetJson')), 502, 'reset-json', 'WARDEN_UPSTREAM_RESET');
    await assertStillServes(proxy);
    const resetSse = await post(proxy.url, call('reset-sse', 'resetSse'));
    const sseHead = 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}}\n\n';
    const resetGot = brokenStream(await resetSse.body.text(), sseHead);
    assert.equal(resetGot.head, sseHead);
    assert.equal(resetGot.error?.id, 'reset-sse');
    await assertStillServes(proxy);
    const html = await post(proxy.url, call('html', 'html'));
    assert.equal(html.statusCode, 500);
    await html.body.text();
    await assertStillServes(proxy);
    await expectProxyError(await post(proxy.url, call('drop', 'drop')), 502, 'drop', 'WARDEN_UPSTREAM_RESET');
    await assertStillServes(proxy);

    const before = (streamed.match(/progress":\d+/g) ?? []).length;
    stopTicker = true;
    await within(5000, 'the ticker stream to end', reading);
    const progress = [...streamed.matchAll(/"progress":(\d+)/g)].map((m) => Number(m[1]));
    assert.ok(before > 0 && progress.length >= before, 'the long stream flowed while the faults happened');
    assert.deepEqual(
      progress,
      progress.map((_, i) => i + 1),
      'no event of the long stream was lost or reordered',
    );
    assert.match(streamed, /"id":"ticker","result"/);

    const outcomes = Object.fromEntries(
      ['stall', 'idle', 'reset-json', 'reset-sse', 'html', 'drop', 'ticker'].map((id) => [
        id,
        proxy.exchanges().find((r) => r.id === id)?.outcome,
      ]),
    );
    assert.deepEqual(outcomes, {
      stall: 'no-response',
      idle: 'no-response',
      'reset-json': 'no-response',
      'reset-sse': 'no-response',
      html: 'invalid-response',
      drop: 'no-response',
      ticker: 'result',
    });
  });
});

// --- A JSON body far over the audit limit -------------------------------------------------------

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
/** Bytes the process holds after a full collection: JS heap plus Buffer memory. */
function heldBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe('a JSON body far over the audit limit', () => {
  const AUDIT_LIMIT = 64 * 1024;
  const TOTAL = 256 * 1024 * 1024;
  /** The server never gets further ahead of the client than this. */
  const WINDOW = 8 * 1024 * 1024;

  test('256 MiB streams through unaudited, intact, without the proxy holding it (lock-step, bytes counted after GC)', {
    timeout: 60_000,
  }, async () => {
    const head = Buffer.from('{"jsonrpc":"2.0","id":"big","result":{"content":[{"type":"text","text":"');
    const tail = Buffer.from('"}]}}');
    const fill = Buffer.alloc(64 * 1024, 0x78);
    let sent = 0;
    let received = 0;
    let stopped = false;
    let wake: (() => void) | undefined;
    const progress = (): void => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const waitUntil = async (cond: () => boolean): Promise<void> => {
      while (!cond() && !stopped) await new Promise<void>((r) => (wake = r));
    };
    let reachedMiddle!: () => void;
    const middle = new Promise<void>((r) => (reachedMiddle = r));
    let goOn!: () => void;
    const resumed = new Promise<void>((r) => (goOn = r));
    cleanups.push(() => {
      stopped = true;
      goOn();
      progress();
    });

    // The server writes only while it is less than WINDOW ahead of what the client has read. A
    // proxy that collected the body before forwarding it would never let it finish: this test
    // would stop at "halfway" below. Halfway, with nothing in flight, it waits for a measurement.
    const big: RawHandler = async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': TOTAL });
      res.write(head);
      sent += head.length;
      let left = TOTAL - head.length - tail.length;
      let paused = false;
      while (left > 0 && !stopped && !res.destroyed) {
        await waitUntil(() => sent - received < WINDOW);
        if (!paused && sent >= TOTAL / 2) {
          paused = true;
          await waitUntil(() => received === sent);
          reachedMiddle();
          await resumed;
        }
        const n = Math.min(left, fill.length);
        if (!res.write(n === fill.length ? fill : fill.subarray(0, n))) await new Promise((r) => res.once('drain', r));
        sent += n;
        left -= n;
      }
      res.end(tail);
      sent += tail.length;
    };
    const { proxy } = await setup(byTool({ big }), { limits: { auditBodyBytes: AUDIT_LIMIT } });

    const baseline = heldBytes();
    let last: Buffer = Buffer.alloc(0);
    const done = new Promise<{ status: number; length: string | undefined }>((resolve, reject) => {
      const req = httpRequest(proxy.url, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT } }, (res) => {
        res.on('data', (c: Buffer) => {
          if (received === 0) assert.deepEqual(c.subarray(0, head.length), head);
          received += c.length;
          last = c;
          progress();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, length: res.headers['content-length'] }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(call('big', 'big'));
    });

    await within(30_000, 'halfway through the body (a proxy that buffers the body never gets there)', middle);
    const held = heldBytes() - baseline;
    assert.ok(received >= TOTAL / 2);
    assert.ok(
      held < 32 * 1024 * 1024,
      `the process holds ${(held / 2 ** 20).toFixed(1)} MiB more after ${(received / 2 ** 20).toFixed(0)} MiB went through`,
    );
    goOn();

    const { status, length } = await within(30_000, 'the end of the body', done);
    assert.equal(status, 200);
    assert.equal(length, String(TOTAL), 'an unaudited body keeps its content-length');
    assert.equal(received, TOTAL, 'every byte arrived');
    assert.equal(last.subarray(-tail.length).toString(), tail.toString(), 'the body ends as the server ended it');

    const unaudited = await proxy.log.waitFor((r) => r.msg === 'unaudited body');
    assert.equal(unaudited.limit, AUDIT_LIMIT);
    assert.equal(unaudited.level, 40);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'big');
    assert.equal(record.outcome, 'unaudited');
    assert.equal(record.status, 200);
    // An unread body is not judged: its one finding says so.
    const findings = proxy.log.records.filter((r) => r.msg === 'violation' && r.id === 'big');
    assert.deepEqual(
      findings.map((r) => [r.rule, r.severity]),
      [['unaudited-response', 'info']],
    );
    assert.equal(findings[0]!.level, 30);
    await assertStillServes(proxy);
  });

  test('the exchange record counts the bytes of an unaudited body', async () => {
    const body = `{"jsonrpc":"2.0","id":"sized","result":{"content":[{"type":"text","text":"${'x'.repeat(10_000)}"}]}}`;
    const { proxy } = await setup(
      byTool({ sized: (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(body) }),
      { limits: { auditBodyBytes: 1024 } },
    );
    const res = await post(proxy.url, call('sized', 'sized'));
    assert.equal(await res.body.text(), body);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'sized');
    assert.equal(record.outcome, 'unaudited');
    assert.equal(record.responseBytes, Buffer.byteLength(body));
    assert.equal(record.violations, 1);
    const finding = proxy.log.find((r) => r.msg === 'violation' && r.id === 'sized');
    assert.equal(finding?.rule, 'unaudited-response');
    assert.match(String(finding?.message), /a body larger than the audit limit: it was relayed unread/);
  });

  const cutAfterHead =
    (withLength: boolean): RawHandler =>
    async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', ...(withLength ? { 'content-length': 100_000 } : {}) });
      await new Promise<void>((r) =>
        res.write(`{"jsonrpc":"2.0","id":"cut","result":{"content":[{"type":"text","text":"${'x'.repeat(5000)}`, () => r()),
      );
      await sleep(30);
      res.socket?.destroy();
    };

  test('the server breaks an unaudited body: the log says so, and the proxy still serves', async () => {
    const { proxy } = await setup(byTool({ cut: cutAfterHead(true) }), { limits: { auditBodyBytes: 1024 } });
    const res = await post(proxy.url, call('cut', 'cut'));
    assert.equal(res.statusCode, 200);
    // What the client sees of the cut is the subject of the two tests below: not read here.
    res.body.on('error', () => {});
    cleanups.push(() => res.body.destroy());
    const unaudited = await proxy.log.waitFor((r) => r.msg === 'unaudited body');
    assert.equal(unaudited.limit, 1024);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'cut');
    assert.equal(record.outcome, 'no-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_RESET');
    await assertStillServes(proxy);
  });

  test('the server breaks an unaudited chunked body: the client connection is cut, not ended', async () => {
    const { proxy } = await setup(byTool({ cut: cutAfterHead(false) }), { limits: { auditBodyBytes: 1024 } });
    const got = await readRaw(proxy.url, call('cut', 'cut'));
    assert.equal(got.status, 200);
    assert.ok(got.bytes > 1024, 'the head of the body was relayed');
    assert.equal(got.complete, false, 'a truncated JSON body must not end with its terminating chunk');
  });

  test('the server breaks an unaudited body framed by content-length: the client connection is cut at once', async () => {
    const { proxy } = await setup(byTool({ cut: cutAfterHead(true) }), { limits: { auditBodyBytes: 1024 } });
    const started = performance.now();
    const got = await within(10_000, 'the client connection to close', readRaw(proxy.url, call('cut', 'cut')));
    assert.equal(got.complete, false, 'the client can tell the body is incomplete');
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 2000, `cut after ${Math.round(elapsed)} ms, not when the upstream broke (~30 ms)`);
  });
});

describe('invalid UTF-8', () => {
  const INVALID = Buffer.concat([
    Buffer.from('{"jsonrpc":"2.0","id":"latin","result":{"content":[{"type":"text","text":"caf'),
    Buffer.from([0xe9, 0xc3, 0x28, 0xff, 0xfe]),
    Buffer.from('"}]}}'),
  ]);

  test('a JSON body that is not UTF-8 is forwarded byte for byte and logged as undecodable (default audit policy)', async () => {
    const { proxy } = await setup(
      byTool({ latin: (_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end(INVALID) }),
    );
    const res = await post(proxy.url, call('latin', 'latin'));
    assert.equal(res.statusCode, 200);
    assert.deepEqual(Buffer.from(await res.body.arrayBuffer()), INVALID, 'unchanged, byte for byte');
    const undecodable = await proxy.log.waitFor((r) => r.msg === 'undecodable' && r.from === 'server');
    assert.equal(undecodable.problem, 'not-utf8');
    assert.equal(undecodable.transport, 'json');
    assert.equal(undecodable.bytes, INVALID.length);
    const violation = await proxy.log.waitFor((r) => r.msg === 'violation' && r.id === 'latin');
    assert.equal(violation.rule, 'non-utf8-body');
    assert.equal(violation.action, 'log');
    assert.equal(violation.applied, false);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'latin');
    assert.equal(record.outcome, 'invalid-response');
    assert.equal(record.status, 200);
    await assertStillServes(proxy);
  });

  test('an SSE event that is not UTF-8 passes byte for byte; the response after it is still read', async () => {
    // Event streams are decoded with replacement characters (as EventSource does): no finding.
    const bad = Buffer.concat([
      Buffer.from('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}}\n\n'),
    ]);
    const good = Buffer.from('data: {"jsonrpc":"2.0","id":"sse-latin","result":{"content":[]}}\n\n');
    const { proxy } = await setup(
      byTool({
        latin: (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(bad);
          res.end(good);
        },
      }),
    );
    const res = await post(proxy.url, call('sse-latin', 'latin'));
    assert.deepEqual(Buffer.from(await res.body.arrayBuffer()), Buffer.concat([bad, good]));
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'sse-latin');
    assert.equal(record.outcome, 'result');
    assert.equal(record.transport, 'sse');
    await assertStillServes(proxy);
  });
});

describe('an SSE event over the audit limit', () => {
  const EVENT_LIMIT = 1024;
  const before =
    'event: message\nid: 1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n';
  const big = `event: message\nid: 2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 'huge', result: { content: [{ type: 'text', text: 'y'.repeat(64 * 1024) }] } })}\n\n`;
  const chunks = [before, big.slice(0, 700), big.slice(700, 30_000), big.slice(30_000)];
  const handler = byTool({ huge: sseEvents(chunks, 5) });

  test('passes through unread and intact, between events that are read', async () => {
    const { proxy } = await setup(handler, { limits: { auditEventBytes: EVENT_LIMIT } });
    const res = await post(proxy.url, call('huge', 'huge'));
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), before + big, 'every byte of every event');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'huge');
    assert.equal(record.transport, 'sse');
    assert.equal(record.status, 200);
    await assertStillServes(proxy);
  });

  test('the log says the event passed unread, like an unaudited body', async () => {
    const { proxy } = await setup(handler, { limits: { auditEventBytes: EVENT_LIMIT } });
    const res = await post(proxy.url, call('huge', 'huge'));
    await res.body.text();
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'huge');
    assert.equal(
      proxy.log.find((r) => r.msg === 'violation' && r.id === 'huge' && r.rule === 'no-response'),
      undefined,
      'the server did answer',
    );
    assert.equal(record.outcome, 'unaudited');
    assert.ok(
      proxy.log.find((r) => typeof r.msg === 'string' && /unaudited/.test(r.msg) && r.msg !== 'exchange'),
      'a record names the event passed unread',
    );
    const findings = proxy.log.records.filter((r) => r.msg === 'violation' && r.id === 'huge');
    assert.deepEqual(
      findings.map((r) => [r.rule, r.severity]),
      [['unaudited-response', 'info']],
    );
    assert.match(String(findings[0]!.message), /an SSE event larger than the audit limit/);
  });
});
