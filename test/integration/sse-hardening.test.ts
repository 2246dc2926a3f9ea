// Issue 16, SSE items, on real sockets against a raw upstream:
// 1. A request the proxy gives up on while its SSE stream is open (the upstream's idle timeout, a
//    reset, bytes that stop decoding) gets a JSON-RPC error with its own id on that stream before
//    it ends, under audit and under enforce; a rewrite the policy decided is written instead, never
//    both; a legacy stream with event ids, which the client may resume, gets none.
// 2. A Content-Type sent twice (two header lines, or one comma-joined value) still makes a stream.
// 3. Comment keep-alives with no blank line after them reach the client as they are written.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { byTool, jsonRpcResult, resetAfter, sseEvents, startRawServer, type RawHandler } from '../fixtures/raw-server.ts';
import { call, post, rpc, sleep, within } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { sseReader, type SseEvent } from '../helpers/sse-reader.ts';

const running: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const r of running.reverse()) await r.close();
});

const loaded = await loadPolicyFile('config/enforce.yaml', { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforceYaml = loaded.policy;
// Enforce with every rule logged: what the client gets when no rewrite answers for the server.
const bare = loadPolicyText('mode: enforce\ndefaults:\n  action: log\n', 'bare-enforce.yaml', { rewritable: REWRITABLE });
assert.ok(bare.ok);
const enforceBare = bare.policy;

type PolicyName = 'audit' | 'enforce.yaml' | 'enforce, rules logged';
const POLICIES: Record<PolicyName, Policy | undefined> = {
  audit: undefined,
  'enforce.yaml': enforceYaml,
  'enforce, rules logged': enforceBare,
};

async function setup(
  handler: RawHandler,
  policy: PolicyName,
  limits: Parameters<typeof startProxy>[1] extends infer O ? (O extends { limits?: infer L } ? L : never) : never = {},
): Promise<TestProxy> {
  const upstream = await startRawServer(handler);
  const p = POLICIES[policy];
  const proxy = await startProxy(new URL('/mcp', upstream.url), { limits, ...(p ? { policy: () => p } : {}) });
  running.push(proxy, upstream);
  return proxy;
}

interface RpcError {
  jsonrpc: string;
  id: unknown;
  error: { code: number; message: string; data: { reason: string; by?: string } };
}

const NOTE = 'data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"one"}}\n\n';
const progress = (n: number) =>
  `id: ${n}\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":${n}}}\n\n`;
const answer = (id: unknown) =>
  `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'ok' }] } })}\n\n`;

/** The events of a whole body, once it ended. */
async function eventsOf(body: { text(): Promise<string> }): Promise<SseEvent[]> {
  const text = await within(5000, 'the stream to end', body.text());
  return sseReader(new Response(text).body).rest();
}

/** The JSON-RPC messages among the events that answer `id`. */
const answersTo = (events: SseEvent[], id: unknown): unknown[] =>
  events.flatMap((e) => {
    try {
      const m = JSON.parse(e.data) as { id?: unknown; method?: unknown };
      return m.id === id && m.method === undefined ? [m] : [];
    } catch {
      return [];
    }
  });

function assertProxyError(message: unknown, id: unknown, reason: string): void {
  const m = message as RpcError;
  assert.equal(m.jsonrpc, '2.0');
  assert.deepEqual(m.id, id);
  assert.equal(m.error.code, -32603);
  assert.equal(m.error.data.reason, reason);
  assert.equal(m.error.data.by, 'mcp-warden');
}

describe('a request the proxy gives up on gets a JSON-RPC error with its id on the stream', () => {
  for (const policy of ['audit', 'enforce.yaml'] as const) {
    test(`${policy}: the upstream falls silent past its idle timeout: the events it sent, then the error (WARDEN_UPSTREAM_TIMEOUT), then the end`, async () => {
      const proxy = await setup(byTool({ idle: sseEvents([NOTE], 0, { end: false }) }), policy, { upstreamBodyTimeoutMs: 150 });
      const res = await post(proxy.url, call('idle', 'idle'));
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'text/event-stream');
      const text = await within(5000, 'the stream to end', res.body.text());
      assert.ok(text.startsWith(NOTE), "the server's event first, byte for byte");
      const events = await sseReader(new Response(text).body).rest();
      assert.equal(events.length, 2);
      assert.equal(events[1]!.event, 'message');
      assertProxyError(JSON.parse(events[1]!.data), 'idle', 'WARDEN_UPSTREAM_TIMEOUT');
      const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'idle');
      assert.equal(record.outcome, 'no-response');
      assert.equal(record.transport, 'sse');
      assert.equal(record.proxyError, 'WARDEN_UPSTREAM_TIMEOUT');
    });
  }

  test('audit: the upstream resets the stream (TCP RST): the complete events, then the error (WARDEN_UPSTREAM_RESET)', async () => {
    const proxy = await setup(
      byTool({ rst: resetAfter(`${progress(1)}: keepalive\n\n${progress(2)}data: {"jsonrpc":"2.0","id":"rst","res`, { rst: true }) }),
      'audit',
    );
    const res = await post(proxy.url, call('rst', 'rst'));
    const text = await within(5000, 'the stream to end', res.body.text());
    const sent = `${progress(1)}: keepalive\n\n${progress(2)}`;
    assert.ok(text.startsWith(sent), 'every complete event, none of the broken one');
    const events = await sseReader(new Response(text.slice(sent.length)).body).rest();
    assert.equal(events.length, 1);
    assertProxyError(JSON.parse(events[0]!.data), 'rst', 'WARDEN_UPSTREAM_RESET');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'rst');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_RESET');
  });

  test('enforce.yaml: the upstream resets the stream: the rewrite the policy decided (no-response) is the one answer, no proxy error besides', async () => {
    const proxy = await setup(byTool({ rst: resetAfter(progress(1), { rst: true }) }), 'enforce.yaml');
    const res = await post(proxy.url, call('rst', 'rst'));
    const events = await eventsOf(res.body);
    const answers = answersTo(events, 'rst');
    assert.equal(answers.length, 1, 'one answer for the id');
    assert.equal((answers[0] as RpcError).error.data.reason, 'no-response');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'rst');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_RESET');
  });

  for (const policy of ['audit', 'enforce.yaml'] as const) {
    test(`${policy}: a batch of two, one answered before the upstream falls silent: one error, for the other id only`, async () => {
      const proxy = await setup(
        (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(answer(1));
        },
        policy,
        { upstreamBodyTimeoutMs: 150 },
      );
      const res = await post(proxy.url, `[${rpc(1)},${rpc('two')}]`);
      const events = await eventsOf(res.body);
      assert.equal(events.length, 2);
      assert.equal(answersTo(events, 1).length, 1, 'the answered request: its answer only');
      const errors = answersTo(events, 'two');
      assert.equal(errors.length, 1);
      assertProxyError(errors[0], 'two', 'WARDEN_UPSTREAM_TIMEOUT');
      assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 1)).outcome, 'result');
      assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'two')).proxyError, 'WARDEN_UPSTREAM_TIMEOUT');
    });
  }

  test('the upstream falls silent in the middle of an event over the audit limit: that event is closed under a type clients ignore, then the error', async () => {
    const partial = `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'x'.repeat(4000)}`;
    const proxy = await setup(byTool({ big: sseEvents([NOTE, partial], 5, { end: false }) }), 'audit', {
      upstreamBodyTimeoutMs: 150,
      auditEventBytes: 1024,
    });
    const res = await post(proxy.url, call('big', 'big'));
    const text = await within(5000, 'the stream to end', res.body.text());
    assert.ok(text.startsWith(NOTE + partial), 'what the server sent, as it came');
    const events = await sseReader(new Response(text).body).rest();
    assert.deepEqual(
      events.map((e) => e.event),
      [undefined, 'mcp-warden-truncated', 'message'],
    );
    assertProxyError(JSON.parse(events[2]!.data), 'big', 'WARDEN_UPSTREAM_TIMEOUT');
  });

  test('enforce, every rule logged: a compressed stream whose bytes stop decoding: the events that decoded, then the error (WARDEN_UPSTREAM_PROTOCOL)', async () => {
    // The bad bytes go once the client has read the first event: sent together, they can reach
    // the proxy in one read, and zlib hands on nothing of a write that fails.
    let readFirst!: () => void;
    const firstRead = new Promise<void>((r) => (readFirst = r));
    const proxy = await setup(
      byTool({
        bad: async (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
          // The first event in gzip, flushed; then bytes that are no deflate data.
          const gz = zlib.createGzip();
          gz.on('data', (c: Buffer) => res.write(c));
          gz.write(NOTE);
          await new Promise<void>((r) => gz.flush(() => r()));
          await firstRead;
          res.write(Buffer.alloc(64, 0xff));
        },
      }),
      'enforce, rules logged',
      // Past the 5 s the test waits: the error must come from the bad bytes, at once, not from a timeout.
      { upstreamBodyTimeoutMs: 30_000 },
    );
    const res = await post(proxy.url, call('bad', 'bad'), { 'accept-encoding': 'gzip' });
    assert.equal(res.headers['content-encoding'], undefined, 'decoded for the client, so the proxy can write to it');
    const read = async (): Promise<string> => {
      let got = '';
      for await (const chunk of res.body) {
        got += (chunk as Buffer).toString('utf8');
        if (got.startsWith(NOTE)) readFirst();
      }
      return got;
    };
    const text = await within(5000, 'the stream to end', read());
    assert.ok(text.startsWith(NOTE), text);
    const events = await sseReader(new Response(text).body).rest();
    assert.equal(events.length, 2);
    assertProxyError(JSON.parse(events[1]!.data), 'bad', 'WARDEN_UPSTREAM_PROTOCOL');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'bad');
    assert.equal(record.outcome, 'invalid-response');
    assert.equal(record.proxyError, 'WARDEN_UPSTREAM_PROTOCOL');
  });

  test('a legacy session whose stream carried event ids may resume it on a GET: no error, the request still waits', async () => {
    const proxy = await setup(byTool({ idle: sseEvents([progress(1)], 0, { end: false }) }), 'audit', { upstreamBodyTimeoutMs: 150 });
    const res = await post(proxy.url, call('resume', 'idle'), { 'mcp-session-id': 'legacy-1', 'mcp-protocol-version': '2025-06-18' });
    assert.equal(await within(5000, 'the stream to end', res.body.text()), progress(1));
    await proxy.log.waitFor((r) => r.msg === 'stream broken');
    assert.equal(
      proxy.exchanges().find((r) => r.id === 'resume'),
      undefined,
      'not given up on',
    );
  });

  test('the same proxy serves normally after each of these', async () => {
    const proxy = await setup(jsonRpcResult({ content: [] }), 'audit');
    const res = await post(proxy.url, call('ok', 'echo'));
    assert.equal(((await res.body.json()) as { id: unknown }).id, 'ok');
  });
});

/** A handler that writes each part when the test lets it (the first at once), then ends. */
function paced(
  headers: Record<string, string | string[]>,
  parts: readonly string[],
): { handler: RawHandler; next: () => void; done: () => void } {
  const gates: Array<() => void> = [];
  const waits = parts.map((_, k) => (k === 0 ? Promise.resolve() : new Promise<void>((r) => gates.push(r))));
  const handler: RawHandler = async (_req, res) => {
    res.writeHead(200, headers);
    res.flushHeaders();
    for (const [k, part] of parts.entries()) {
      await waits[k];
      if (res.destroyed) return;
      res.write(part);
    }
    res.end();
  };
  return {
    handler,
    next: () => gates.shift()?.(),
    done: () => {
      for (const g of gates.splice(0)) g();
    },
  };
}

/** Reads the body chunk by chunk: the bytes that arrive within `ms`, failing if none do. */
function chunks(body: AsyncIterable<unknown>) {
  const it = body[Symbol.asyncIterator]();
  let text = '';
  return {
    async until(want: string, what: string, ms = 3000): Promise<void> {
      const deadline = Date.now() + ms;
      while (!text.endsWith(want)) {
        const { value, done } = await within(Math.max(1, deadline - Date.now()), what, it.next());
        if (done) throw new Error(`${what}: the stream ended`);
        text += Buffer.from(value as Uint8Array).toString('latin1');
      }
    },
    async rest(): Promise<string> {
      for (;;) {
        const { value, done } = await within(3000, 'the end of the stream', it.next());
        if (done) return text;
        text += Buffer.from(value as Uint8Array).toString('latin1');
      }
    },
  };
}

describe('a Content-Type sent twice', () => {
  const SSE = 'text/event-stream';
  for (const [what, value] of [
    ['two header lines', [SSE, SSE]],
    ['one comma-joined value', `${SSE}, ${SSE}; charset=utf-8`],
  ] as const) {
    test(`${what}: still a stream, relayed event by event and read`, async () => {
      const server = paced({ 'content-type': value as string | string[] }, [NOTE, answer('dup')]);
      const proxy = await setup(byTool({ dup: server.handler }), 'audit');
      try {
        // A proxy that took it for a body would not even send the headers before the server ends.
        const res = await within(3000, 'the response headers', post(proxy.url, call('dup', 'dup')));
        assert.equal(res.statusCode, 200);
        const got = chunks(res.body);
        await got.until(NOTE, 'the first event while the server holds the answer back');
        server.next();
        assert.equal(await got.rest(), NOTE + answer('dup'));
        const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'dup');
        assert.equal(record.outcome, 'result');
        assert.equal(record.transport, 'sse');
      } finally {
        server.done();
      }
    });
  }
});

describe('comment keep-alives with no blank line', () => {
  for (const [style, eol] of [
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ] as const) {
    for (const policy of ['audit', 'enforce.yaml'] as const) {
      test(`${style}, ${policy}: each keep-alive reaches the client as the server writes it; the answer after them is read`, async () => {
        const ping = `: keepalive${eol}`;
        const server = paced({ 'content-type': 'text/event-stream' }, [ping, ping, `${eol}${answer('kept')}`]);
        const proxy = await setup(byTool({ keep: server.handler }), policy);
        try {
          const res = await post(proxy.url, call('kept', 'keep'));
          const got = chunks(res.body);
          await got.until(ping, 'the first keep-alive');
          server.next();
          await got.until(ping + ping, 'the second keep-alive');
          server.next();
          assert.equal(await got.rest(), `${ping}${ping}${eol}${answer('kept')}`, 'byte for byte');
          assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'kept')).outcome, 'result');
        } finally {
          server.done();
        }
      });
    }
  }

  test('keep-alives every 20 ms for a while, then the answer: none is held back, none is lost', async () => {
    const ping = ': ping\n';
    let writes = 0;
    const proxy = await setup(
      byTool({
        pings: async (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (; writes < 10 && !res.destroyed; writes++) {
            res.write(ping);
            await sleep(20);
          }
          res.end(answer('pings'));
        },
      }),
      'audit',
    );
    const res = await post(proxy.url, call('pings', 'pings'));
    const got = chunks(res.body);
    await got.until(ping.repeat(3), 'three keep-alives');
    assert.ok(writes < 10, 'the keep-alives arrived while the server was still writing them');
    assert.equal(await got.rest(), ping.repeat(10) + answer('pings'));
  });
});
