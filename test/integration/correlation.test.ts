// Answers belong to the exchange whose response carries them: a hostile upstream that answers
// POST A's id on POST B's response, or reuses an id in flight, must not get its answer matched to
// another exchange's request; an id that comes back with another type ("3" for 3) is flagged and,
// under enforce, put back to the request's own.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startRawServer, type RawHandler } from '../fixtures/raw-server.ts';
import { post, sleep, within } from '../helpers/faults.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const closers: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const c of closers.reverse()) await c.close();
});

const ENFORCE = fileURLToPath(new URL('../../config/enforce.yaml', import.meta.url));
async function enforcePolicy(): Promise<Policy> {
  const loaded = await loadPolicyFile(ENFORCE, { rewritable: REWRITABLE });
  assert.ok(loaded.ok);
  return loaded.policy;
}

async function setup(handler: RawHandler, policy?: Policy): Promise<TestProxy> {
  const upstream = await startRawServer(handler);
  const proxy = await startProxy(new URL('/mcp', upstream.url), policy ? { policy: () => policy } : {});
  closers.push(upstream, proxy);
  return proxy;
}

const SESSION = { 'mcp-session-id': 'sess-1', 'mcp-protocol-version': '2025-06-18' };
const callBody = (id: unknown, tool: string) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: {} } });
const answer = (id: unknown, text: string) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }] } });
const json = (res: Parameters<RawHandler>[1], body: string) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(body);
};

describe('an answer on the wrong exchange is a finding, never a match', () => {
  for (const mode of ['audit', 'enforce'] as const) {
    test(`${mode}: B's response carrying A's id leaves A waiting for its own answer`, async () => {
      let releaseA: (() => void) | undefined;
      const proxy = await setup(
        (_req, res, body) => {
          const { id } = JSON.parse(body.toString()) as { id: number };
          if (id === 1) releaseA = () => json(res, answer(1, 'slow done'));
          else json(res, answer(1, 'Error: quick failed')); // B answers with A's id
        },
        mode === 'enforce' ? await enforcePolicy() : undefined,
      );
      const a = post(proxy.url, callBody(1, 'slow'), SESSION);
      await within(
        2000,
        'A upstream',
        (async () => {
          while (!releaseA) await sleep(5);
        })(),
      );
      const b = await post(proxy.url, callBody(2, 'quick'), SESSION);
      await b.body.text();
      const bRecord = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 2);
      assert.equal(bRecord.outcome, 'invalid-response');
      assert.ok(proxy.log.find((r) => r.msg === 'violation' && r.rule === 'answer-foreign-id' && r.id === 2));
      assert.equal(
        proxy.log.find((r) => r.msg === 'exchange' && r.id === 1),
        undefined,
        'A is still waiting',
      );
      releaseA!();
      const aBody = (await (await a).body.json()) as { id: number; result: { content: Array<{ text: string }>; isError?: boolean } };
      assert.deepEqual(
        [aBody.id, aBody.result.content[0]!.text, aBody.result.isError],
        [1, 'slow done', undefined],
        'A gets its own answer, untouched',
      );
      const aRecord = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 1);
      assert.deepEqual([aRecord.tool, aRecord.outcome], ['slow', 'result']);
    });
  }

  test('an id reused while in flight: each exchange judged with its own request', async () => {
    const releases: Array<() => void> = [];
    const proxy = await setup((_req, res, body) => {
      const { params } = JSON.parse(body.toString()) as { params: { name: string } };
      releases.push(() => json(res, answer(1, params.name === 'first' ? 'first done' : 'Error: second failed')));
    });
    const first = post(proxy.url, callBody(1, 'first'), SESSION);
    await within(
      2000,
      'first upstream',
      (async () => {
        while (releases.length < 1) await sleep(5);
      })(),
    );
    const second = post(proxy.url, callBody(1, 'second'), SESSION);
    await within(
      2000,
      'second upstream',
      (async () => {
        while (releases.length < 2) await sleep(5);
      })(),
    );
    releases[0]!(); // the first exchange's own answer, while the second request under the same id waits
    await (await first).body.text();
    releases[1]!();
    await (await second).body.text();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.tool === 'second' && r.outcome === 'result');
    assert.deepEqual(
      proxy.exchanges().map((r) => [r.tool, r.outcome]),
      [
        ['first', 'result'],
        ['second', 'result'],
      ],
      'each answer is logged with its own request, none as unanswered',
    );
    const silent = proxy.log.records.filter((r) => r.msg === 'violation' && r.rule === 'silent-success');
    assert.deepEqual(
      silent.map((r) => r.tool),
      ['second'],
      'the failure text is judged against the second call only',
    );
    assert.equal(proxy.exchanges().filter((r) => r.tool === 'second' && r.outcome === 'result').length, 1);
    assert.ok(
      !proxy.exchanges().some((r) => r.tool === 'second' && r.outcome === 'invalid-response'),
      'the first answer did not end the second request',
    );
  });

  test('many POSTs reusing one id at once (what a load generator sends): every answer logged as its own result', async () => {
    // Held until all twenty have reached the server (each then open at the proxy), answered in
    // reverse order of arrival: no answer comes while its request is the only one open.
    const held: Array<() => void> = [];
    const proxy = await setup((_req, res, body) => {
      const { params } = JSON.parse(body.toString()) as { params: { arguments: { n: number } } };
      held.push(() => json(res, answer(7, `done ${params.arguments.n}`)));
      if (held.length === 20) for (const release of held.reverse()) release();
    });
    const bodies = await Promise.all(
      Array.from({ length: 20 }, async (_, n) => {
        const res = await post(
          proxy.url,
          JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { n } } }),
          SESSION,
        );
        return ((await res.body.json()) as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;
      }),
    );
    assert.deepEqual(
      bodies,
      Array.from({ length: 20 }, (_, n) => `done ${n}`),
    );
    await within(
      2000,
      'twenty exchange records',
      (async () => {
        while (proxy.exchanges().filter((r) => r.id === 7).length < 20) await sleep(5);
      })(),
    );
    const outcomes = proxy
      .exchanges()
      .filter((r) => r.id === 7)
      .map((r) => r.outcome);
    assert.deepEqual(outcomes, Array(20).fill('result'));
    // R3: an id still awaiting its response must not be reused; every request after the first found it in flight.
    const reused = proxy.log.records.filter((r) => r.msg === 'violation' && r.rule === 'request-id-in-flight');
    assert.equal(reused.length, 19);
    assert.equal(reused[0]!.severity, 'warning');
  });

  test('an id used again after its answer came is not in flight: no request-id-in-flight', async () => {
    const proxy = await setup((_req, res) => json(res, answer(7, 'ok')));
    for (let i = 0; i < 3; i++) await (await post(proxy.url, callBody(7, 'echo'), SESSION)).body.text();
    await within(
      2000,
      'three exchange records',
      (async () => {
        while (proxy.exchanges().length < 3) await sleep(5);
      })(),
    );
    assert.equal(proxy.log.records.filter((r) => r.rule === 'request-id-in-flight').length, 0);
  });
});

describe('an id with another type', () => {
  test('audit: "3" for 3 is matched (as the SDK client does) and flagged', async () => {
    const proxy = await setup((_req, res) => json(res, answer('3', 'ok')));
    const res = await post(proxy.url, callBody(3, 'echo'), SESSION);
    assert.equal(((await res.body.json()) as { id: unknown }).id, '3', 'audit changes nothing');
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 3);
    assert.equal(record.outcome, 'result');
    assert.ok(proxy.log.find((r) => r.msg === 'violation' && r.rule === 'answer-id-type' && r.id === 3));
  });

  for (const [sent, back] of [
    [3, '3'],
    ['12', 12],
  ] as const) {
    test(`enforce: ${JSON.stringify(back)} for ${JSON.stringify(sent)} comes back as the request's own id`, async () => {
      const proxy = await setup((_req, res) => json(res, answer(back, 'ok')), await enforcePolicy());
      const res = await post(proxy.url, callBody(sent, 'echo'), SESSION);
      const body = (await res.body.json()) as { id: unknown; result: { content: Array<{ text: string }> } };
      assert.equal(body.id, sent);
      assert.equal(body.result.content[0]!.text, 'ok');
      assert.ok(await proxy.log.waitFor((r) => r.msg === 'rewrite' && r.rule === 'answer-id-type'));
    });
  }
});

describe('a client that closes an SSE call', () => {
  test('on a legacy stream whose events carry ids: open for a resumption until the window closes, then logged client-closed', async () => {
    const upstream = await startRawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('id: ev-1\ndata: \n\n'); // the priming event: resumable, then silence
    });
    const proxy = await startProxy(new URL('/mcp', upstream.url), { limits: { resumeWindowMs: 300 } });
    closers.push(upstream, proxy);
    const { request } = await import('undici');
    const controller = new AbortController();
    const res = await request(proxy.url, {
      method: 'POST',
      body: callBody(9, 'slow'),
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...SESSION },
      signal: controller.signal,
    });
    res.body.on('error', () => {});
    await new Promise((r) => setTimeout(r, 100));
    controller.abort();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(
      proxy.log.find((r) => r.msg === 'exchange' && r.id === 9),
      undefined,
      'still resumable',
    );
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 9, 3000);
    assert.equal(record.outcome, 'client-closed');
    assert.equal(record.expired, undefined);
  });
});

describe('answers on a GET stream (resumption)', () => {
  test("enforce: a broken answer replayed on the GET with Last-Event-ID is rewritten like one on the POST's stream", async () => {
    const proxy = await setup(
      async (req, res) => {
        if (req.method === 'POST') {
          // The priming event, then the server closes the stream before answering (SEP-1699 polling).
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end('id: ev-1\nretry: 10\ndata: \n\n');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(`id: ev-2\nevent: message\ndata: ${answer(4, 'Error: could not open /srv/reports/q4.csv')}\n\n`);
      },
      await enforcePolicy(),
    );
    const first = await post(proxy.url, callBody(4, 'report'), SESSION);
    await first.body.text();
    const { request } = await import('undici');
    const resumed = await request(proxy.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'last-event-id': 'ev-1', ...SESSION },
    });
    const text = await resumed.body.text();
    const data = JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as { id: number; result: { isError?: boolean } };
    assert.equal(data.id, 4);
    assert.equal(data.result.isError, true, `the GET's answer was not rewritten: ${text}`);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 4);
    assert.deepEqual([record.transport, record.verdict], ['get-sse', 'rewrite']);
  });
});

describe('a server that ends a resumable stream before answering (#24: every request ends in one record)', () => {
  const SESSION_1125 = { 'mcp-session-id': 'sess-2', 'mcp-protocol-version': '2025-11-25' };

  for (const how of ['reset', 'end'] as const) {
    test(`${how} after an event id: no error event, then logged no-response, expired not-resumed, when no resumption came`, async () => {
      const upstream = await startRawServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('id: ev-1\ndata: \n\n');
        setTimeout(() => (how === 'reset' ? res.socket?.destroy() : res.end()), 20);
      });
      const proxy = await startProxy(new URL('/mcp', upstream.url), { limits: { resumeWindowMs: 300 } });
      closers.push(upstream, proxy);
      const res = await post(proxy.url, callBody(21, 'slow'), SESSION_1125);
      const text = await res.body.text();
      assert.equal(text.includes('"error"'), false, `an error went into a resumable stream: ${text}`);
      assert.equal(proxy.exchanges().length, 0, 'still resumable');
      const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 21, 3000);
      assert.deepEqual([record.outcome, record.expired], ['no-response', 'not-resumed']);
      assert.equal(proxy.exchanges().length, 1);
    });
  }

  test('a resumption that brings the answer gives its normal record, and no other', async () => {
    const upstream = await startRawServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (req.method === 'POST') {
        res.write('id: ev-1\ndata: \n\n');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      }
      res.end(`id: ev-2\nevent: message\ndata: ${answer(22, 'done')}\n\n`);
    });
    const proxy = await startProxy(new URL('/mcp', upstream.url), { limits: { resumeWindowMs: 300 } });
    closers.push(upstream, proxy);
    await (await post(proxy.url, callBody(22, 'slow'), SESSION_1125)).body.text();
    const { request } = await import('undici');
    const resumed = await request(proxy.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'last-event-id': 'ev-1', ...SESSION_1125 },
    });
    assert.match(await resumed.body.text(), /"done"/);
    const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 22);
    assert.deepEqual([record.outcome, record.transport], ['result', 'get-sse']);
    await sleep(500); // past the window: the deadline must have been dropped with the answer
    assert.equal(proxy.exchanges().filter((r) => r.id === 22).length, 1);
  });

  test('at shutdown, a request still waiting is logged no-response, expired shutdown', async () => {
    const upstream = await startRawServer(() => {}); // never answers
    const proxy = await startProxy(new URL('/mcp', upstream.url));
    closers.push(upstream);
    const pending = post(proxy.url, callBody(23, 'slow'), SESSION).catch(() => undefined);
    await within(
      2000,
      'the request reaches the upstream',
      (async () => {
        while (upstream.requests.length === 0) await sleep(5);
      })(),
    );
    await proxy.close();
    await pending;
    const records = proxy.exchanges().filter((r) => r.id === 23);
    assert.equal(records.length, 1);
    assert.deepEqual([records[0]!.outcome, records[0]!.expired], ['no-response', 'shutdown']);
  });
});
