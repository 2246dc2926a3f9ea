// The fixtures on their own, no proxy: proves that the SDK server fixture, the SDK client helper,
// the raw server and the log capture behave as the proxy tests will assume.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { LoggingMessageNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_QUESTION, FAIL_TEXT, TOOL_NAMES, startSdkServer, type SdkServer } from '../fixtures/sdk-server.ts';
import { html500, jsonRpcResult, resetAfter, sequence, sseEvents, stall, startRawServer } from '../fixtures/raw-server.ts';
import { answerFor, connectSdkClient, type SdkClientHandle } from '../helpers/sdk-client.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import { sseReader, type SseEvent, type SseReader } from '../helpers/sse-reader.ts';

function textOf(result: unknown): string {
  const content = (result as CallToolResult).content;
  const first = content[0];
  assert.ok(first && first.type === 'text', `expected text content, got ${JSON.stringify(content)}`);
  return first.text;
}

for (const mode of ['json', 'sse'] as const) {
  describe(`sdk-server fixture, mode ${mode}, through the SDK client`, () => {
    let server: SdkServer;
    let handle: SdkClientHandle;

    before(async () => {
      server = await startSdkServer({ mode });
      handle = await connectSdkClient(server.url);
    });
    after(async () => {
      await handle?.close();
      await server?.close();
    });

    it('negotiates 2025-11-25 and opens one session', () => {
      assert.equal(handle.transport.protocolVersion, '2025-11-25');
      assert.equal(server.sessionIds().length, 1);
      assert.equal(server.sessionIds()[0], handle.transport.sessionId);
    });

    it('lists every tool', async () => {
      const { tools } = await handle.client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
      const add = tools.find((t) => t.name === 'add');
      assert.deepEqual(add?.inputSchema.required?.slice().sort(), ['a', 'b']);
      assert.ok(add?.outputSchema, 'add declares an outputSchema');
    });

    it('answers POSTs with the content type of its mode, and later requests carry mcp-protocol-version', async () => {
      await handle.client.callTool({ name: 'echo', arguments: { text: 'ct' } });
      const posts = server.requests.filter((r) => r.method === 'POST');
      assert.ok(posts.length >= 3);
      for (const r of posts.slice(1)) assert.equal(r.headers['mcp-protocol-version'], '2025-11-25');
      const raw = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': handle.transport.sessionId ?? '',
          'mcp-protocol-version': '2025-11-25',
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'raw-1', method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }),
      });
      const ct = raw.headers.get('content-type') ?? '';
      const text = await raw.text();
      assert.equal(raw.status, 200);
      assert.ok(ct.startsWith(mode === 'json' ? 'application/json' : 'text/event-stream'), ct);
      assert.match(text, /"id":"raw-1"/);
      assert.match(text, /echo: x/);
    });

    it('calls echo, add and fail', async () => {
      assert.equal(textOf(await handle.client.callTool({ name: 'echo', arguments: { text: 'hi' } })), 'echo: hi');
      const add = await handle.client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
      assert.equal(textOf(add), '42');
      assert.deepEqual(add.structuredContent, { sum: 42 });
      const fail = await handle.client.callTool({ name: 'fail', arguments: {} });
      assert.equal(fail.isError, true);
      assert.equal(textOf(fail), FAIL_TEXT);
    });

    it('countdown sends one progress notification per step', async () => {
      const seen: number[] = [];
      const result = await handle.client.callTool({ name: 'countdown', arguments: { steps: 4 } }, undefined, {
        onprogress: (p) => seen.push(p.progress),
      });
      assert.equal(textOf(result), 'done');
      assert.deepEqual(seen, [1, 2, 3, 4]);
    });

    it('ask and ask_on_get round-trip an elicitation', async () => {
      const before = handle.elicitations.length;
      const a = await handle.client.callTool({ name: 'ask', arguments: {} });
      assert.equal(textOf(a), answerFor(DEFAULT_QUESTION));
      const b = await handle.client.callTool({ name: 'ask_on_get', arguments: { question: 'colour?' } });
      assert.equal(textOf(b), answerFor('colour?'));
      assert.deepEqual(
        handle.elicitations.slice(before).map((e) => e.params.message),
        [DEFAULT_QUESTION, 'colour?'],
      );
    });

    it('notify_on_get delivers a logging notification on the GET stream', async () => {
      const got: unknown[] = [];
      handle.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
        got.push(n.params.data);
      });
      const result = await handle.client.callTool({ name: 'notify_on_get', arguments: { text: 'ping-on-get' } });
      assert.equal(textOf(result), 'sent');
      for (let i = 0; i < 100 && got.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(got, ['ping-on-get']);
      const gets = server.requests.filter((r) => r.method === 'GET');
      assert.ok(gets.length > 0, 'the client opened the standalone GET stream');
      for (const r of gets) assert.equal(r.headers['mcp-protocol-version'], '2025-11-25');
    });

    it('reads the resource and gets the prompt', async () => {
      const res = await handle.client.readResource({ uri: 'fixture://hello' });
      const first = res.contents[0];
      assert.ok(first && 'text' in first);
      assert.equal(first.text, 'hello');
      const prompt = await handle.client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
      assert.deepEqual(prompt.messages[0]?.content, { type: 'text', text: 'Please greet Ada.' });
    });

    it('terminateSession sends DELETE and ends the session (later requests get 404)', async () => {
      const sid = handle.transport.sessionId;
      assert.ok(sid);
      await handle.transport.terminateSession();
      assert.equal(handle.transport.sessionId, undefined);
      const del = server.requests.find((r) => r.method === 'DELETE');
      assert.equal(del?.headers['mcp-session-id'], sid);
      assert.equal(del?.headers['mcp-protocol-version'], '2025-11-25');
      assert.deepEqual(server.sessionIds(), []);
      const res = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid },
        body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
      });
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as { error: { code: number } }).error.code, -32001);
    });
  });
}

// ---- resumption with Last-Event-ID (sse mode, event store) --------------------------------------

interface RawSession {
  sid: string;
  headers(extra?: Record<string, string>): Record<string, string>;
}

async function rawInitialize(url: URL, capabilities: Record<string, unknown> = {}): Promise<RawSession> {
  const post = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '0' } },
    }),
  });
  assert.equal(post.status, 200);
  const sid = post.headers.get('mcp-session-id');
  assert.ok(sid);
  const text = post.headers.get('content-type')?.startsWith('text/event-stream')
    ? (await sseReader(post.body).rest()).map((e) => e.data).join('\n')
    : await post.text();
  assert.match(text, /"protocolVersion":"2025-11-25"/);
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': sid,
    'mcp-protocol-version': '2025-11-25',
    ...extra,
  });
  const initialized = await fetch(url, {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  assert.equal(initialized.status, 202);
  await initialized.body?.cancel();
  return { sid, headers };
}

/** GET with Last-Event-ID; retries a 409 while the server has not yet noticed the old stream is gone. */
async function resume(url: URL, session: RawSession, lastEventId: string): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(url, {
      method: 'GET',
      headers: session.headers({ accept: 'text/event-stream', 'last-event-id': lastEventId }),
    });
    if (res.status !== 409 || attempt >= 50) return res;
    await res.body?.cancel();
    await new Promise((r) => setTimeout(r, 10));
  }
}

const parse = (e: SseEvent): Record<string, unknown> => JSON.parse(e.data) as Record<string, unknown>;

describe('sdk-server fixture, mode sse with event store: resumption', () => {
  let server: SdkServer;
  before(async () => {
    server = await startSdkServer({ mode: 'sse', eventStore: true });
  });
  after(async () => {
    await server?.close();
  });

  it('replays the rest of a dropped POST stream, response included, on GET with Last-Event-ID', async () => {
    const session = await rawInitialize(server.url);
    const abort = new AbortController();
    const post = await fetch(server.url, {
      method: 'POST',
      headers: session.headers(),
      signal: abort.signal,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'countdown', arguments: { steps: 4, delayMs: 30 }, _meta: { progressToken: 'tok' } },
      }),
    });
    assert.equal(post.headers.get('content-type'), 'text/event-stream');
    const reader = sseReader(post.body);
    const priming = await reader.next();
    assert.ok(priming.id, 'priming event has an id');
    assert.equal(priming.data, '');
    assert.equal(priming.retry, 50);
    const first = await reader.next();
    assert.ok(first.id);
    assert.equal((parse(first).params as { progress: number }).progress, 1);
    abort.abort();

    const res = await resume(server.url, session, first.id);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const replayed = await sseReader(res.body).until((e) => e.data.includes('"result"'), 3000);
    const messages = replayed.map(parse);
    assert.deepEqual(
      messages.slice(0, -1).map((m) => (m.params as { progress: number }).progress),
      [2, 3, 4],
    );
    const last = messages.at(-1) as { id: unknown; result: CallToolResult };
    assert.equal(last.id, 7);
    assert.equal(textOf(last.result), 'done');
    assert.ok(replayed.every((e) => e.id !== undefined && e.id !== first.id));
    assert.equal(new Set(replayed.map((e) => e.id)).size, replayed.length, 'event ids are unique');
  });

  it('replays standalone GET stream events missed while disconnected', async () => {
    const session = await rawInitialize(server.url);
    const callNotify = async (id: number, text: string): Promise<void> => {
      const r = await fetch(server.url, {
        method: 'POST',
        headers: session.headers(),
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'notify_on_get', arguments: { text } } }),
      });
      const events = await sseReader(r.body).rest();
      assert.ok(events.some((e) => e.data.includes('"sent"')));
    };
    const abort = new AbortController();
    const get = await fetch(server.url, { method: 'GET', headers: session.headers({ accept: 'text/event-stream' }), signal: abort.signal });
    assert.equal(get.status, 200);
    const getReader = sseReader(get.body);
    await callNotify(1, 'a');
    const a = await getReader.next();
    assert.ok(a.id);
    assert.equal((parse(a).params as { data: unknown }).data, 'a');
    abort.abort();
    // 'b' and 'c' are stored; if the server has not yet noticed the abort, 'b' also goes to the
    // dying stream and resume() retries the 409 until the old stream is gone.
    await callNotify(2, 'b');
    await callNotify(3, 'c');

    const res = await resume(server.url, session, a.id);
    assert.equal(res.status, 200);
    const reader = sseReader(res.body);
    const data: unknown[] = [];
    for (const e of await reader.until((e) => e.data.includes('"c"'))) data.push((parse(e).params as { data: unknown }).data);
    await reader.cancel();
    assert.deepEqual(data, ['b', 'c']);
  });

  it('the SDK client resumes a POST stream the server closed (GET with Last-Event-ID) and gets the result', async () => {
    const handle = await connectSdkClient(server.url);
    try {
      const seen: number[] = [];
      const result = await handle.client.callTool({ name: 'countdown', arguments: { steps: 4, closeStreamAfter: 2 } }, undefined, {
        onprogress: (p) => seen.push(p.progress),
      });
      assert.equal(textOf(result), 'done');
      assert.deepEqual(seen, [1, 2, 3, 4]);
      const resumed = server.requests.filter(
        (r) => r.method === 'GET' && r.headers['mcp-session-id'] === handle.transport.sessionId && r.headers['last-event-id'],
      );
      assert.equal(resumed.length, 1, 'exactly one resumption GET');
    } finally {
      await handle.close();
    }
  });

  it('rejects an unknown Last-Event-ID with 400', async () => {
    const session = await rawInitialize(server.url);
    const res = await fetch(server.url, {
      method: 'GET',
      headers: session.headers({ accept: 'text/event-stream', 'last-event-id': 'no-such-event' }),
    });
    assert.equal(res.status, 400);
    await res.body?.cancel();
  });
});

// ---- which stream carries a server->client request (raw client, to see the wire) --------------

describe('server->client requests: which HTTP stream carries them', () => {
  const cases = [
    ['sse', 'ask', 'post'],
    ['sse', 'ask_on_get', 'get'],
    ['json', 'ask', 'get'],
    ['json', 'ask_on_get', 'get'],
  ] as const;
  for (const [mode, tool, expected] of cases) {
    it(`${mode} mode: ${tool} sends elicitation/create on the ${expected.toUpperCase()} stream`, async () => {
      const server = await startSdkServer({ mode });
      const getAbort = new AbortController();
      try {
        const session = await rawInitialize(server.url, { elicitation: { form: {} } });
        const get = await fetch(server.url, {
          method: 'GET',
          headers: session.headers({ accept: 'text/event-stream' }),
          signal: getAbort.signal,
        });
        assert.equal(get.status, 200);
        const gNext = sseReader(get.body).next(3000);
        gNext.catch(() => undefined);
        const post = fetch(server.url, {
          method: 'POST',
          headers: session.headers(),
          body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: tool, arguments: { question: 'q?' } } }),
        });
        let postReader: SseReader | undefined;
        let pNext: Promise<SseEvent> | undefined;
        if (mode === 'sse') {
          postReader = sseReader((await post).body);
          pNext = postReader.next(3000);
          pNext.catch(() => undefined);
        }
        const first = await Promise.race([
          gNext.then((e) => ({ where: 'get', e })),
          ...(pNext ? [pNext.then((e) => ({ where: 'post', e }))] : []),
        ]);
        assert.equal(first.where, expected);
        const request = parse(first.e) as { id: unknown; method: string; params: { message: string } };
        assert.equal(request.method, 'elicitation/create');
        assert.equal(request.params.message, 'q?');

        const answer = await fetch(server.url, {
          method: 'POST',
          headers: session.headers(),
          body: JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { action: 'accept', content: { answer: 'raw answer' } } }),
        });
        assert.equal(answer.status, 202);
        await answer.body?.cancel();

        let response: { id: unknown; result: CallToolResult };
        if (mode === 'json') {
          response = (await (await post).json()) as typeof response;
        } else {
          assert.ok(postReader && pNext);
          const events = first.where === 'post' ? await postReader.until((e) => e.data.includes('"result"')) : [await pNext];
          response = parse(events.at(-1) as SseEvent) as typeof response;
        }
        assert.equal(response.id, 5);
        assert.equal(textOf(response.result), 'raw answer');
      } finally {
        getAbort.abort();
        await server.close();
      }
    });
  }
});

// ---- raw server and log capture ----------------------------------------------------------------

describe('raw-server fixture', () => {
  it('records requests and answers jsonRpcResult with the request id (type kept), 202 for notifications', async () => {
    const raw = await startRawServer(jsonRpcResult({ ok: true }, { 'mcp-session-id': 's1' }));
    try {
      const r1 = await fetch(raw.url, { method: 'POST', body: '{"jsonrpc":"2.0","id":"1","method":"ping"}' });
      assert.equal(r1.headers.get('mcp-session-id'), 's1');
      assert.deepEqual(await r1.json(), { jsonrpc: '2.0', id: '1', result: { ok: true } });
      const r2 = await fetch(raw.url, { method: 'POST', body: '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"n"}]' });
      assert.deepEqual(await r2.json(), [{ jsonrpc: '2.0', id: 1, result: { ok: true } }]);
      const r3 = await fetch(raw.url, { method: 'POST', body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' });
      assert.equal(r3.status, 202);
      assert.equal(raw.requests.length, 3);
      assert.equal(raw.requests[0]?.body.toString(), '{"jsonrpc":"2.0","id":"1","method":"ping"}');
      assert.equal(raw.requests[0]?.method, 'POST');
    } finally {
      await raw.close();
    }
  });

  it('sseEvents writes the chunks byte for byte', async () => {
    const chunks = ['id: 1\r\ndata: {"a"', ':1}\r\n\r\n', ': comment\n\nid: 8\n\n'];
    const raw = await startRawServer(sseEvents(chunks, 10));
    try {
      const res = await fetch(raw.url);
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      assert.equal(await res.text(), chunks.join(''));
    } finally {
      await raw.close();
    }
  });

  it('html500, resetAfter, stall and sequence', async () => {
    const raw = await startRawServer(sequence(html500(), resetAfter('data: partial'), resetAfter('x', { rst: true }), stall()));
    try {
      const r1 = await fetch(raw.url);
      assert.equal(r1.status, 500);
      assert.match(r1.headers.get('content-type') ?? '', /text\/html/);
      assert.match(await r1.text(), /<h1>Internal Server Error<\/h1>/);

      const r2 = await fetch(raw.url);
      assert.equal(r2.status, 200);
      await assert.rejects(r2.text(), /terminated/);

      const r3 = await fetch(raw.url);
      await assert.rejects(r3.text());

      const stalled = fetch(raw.url, { signal: AbortSignal.timeout(100) });
      await assert.rejects(stalled, /aborted|timeout/i);
      assert.equal(raw.requests.length, 4);
    } finally {
      await raw.close();
    }
  });
});

describe('log-capture', () => {
  it('collects JSON lines, finds, and waits for later records', async () => {
    const cap = createLogCapture();
    cap.stream.write('{"level":30,"msg":"one"}\n{"level":40,"msg":"two"}\n');
    assert.equal(cap.records.length, 2);
    assert.equal(cap.find((r) => r.msg === 'two')?.level, 40);
    const waiting = cap.waitFor((r) => r.msg === 'three');
    setTimeout(() => cap.stream.write('{"level":30,"msg":"three"}\n'), 10);
    assert.equal((await waiting).level, 30);
    await assert.rejects(
      cap.waitFor((r) => r.msg === 'never', 30),
      /no matching record within 30 ms; 3 record\(s\) seen:[\s\S]*"msg":"three"/,
    );
  });

  it('works as a real pino destination', async () => {
    const { createLogger } = await import('../../src/sinks/logger.ts');
    const cap = createLogCapture();
    const log = createLogger({ destination: cap.stream, level: 'debug' });
    log.info({ headers: { authorization: 'Bearer secret' } }, 'hello');
    const rec = await cap.waitFor((r) => r.msg === 'hello');
    assert.deepEqual(rec.headers, { authorization: '[REDACTED]' });
  });
});
