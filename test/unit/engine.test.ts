// The exchange engine driven through whole exchanges without a socket: what a transport would hand
// it (a client body, the upstream's answer, a body or SSE events, a stream's end, a failure, time
// passing) and the plans that come back, under the shipped audit and enforce policies.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJson } from '../../src/codec/json-body.ts';
import { DEFAULT_LIMITS } from '../../src/config/defaults.ts';
import type { Engine } from '../../src/engine/engine.ts';
import type { Judged, Plan, Reply } from '../../src/engine/plans.ts';
import type { ExchangeState } from '../../src/engine/state.ts';
import { ProxyError } from '../../src/errors.ts';
import { recordJudged } from '../../src/sinks/judged.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { Metrics } from '../../src/sinks/metrics.ts';
import { loggedArguments } from '../../src/sinks/redact.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import {
  AUDIT,
  call,
  ENFORCE,
  engineUnder,
  event,
  exchangesOf,
  rulesOf,
  SID,
  sseFrame,
  sseHttp,
  VERSION,
} from '../helpers/engine-driver.ts';
import { loadPolicyText } from '../../src/config/load.ts';
import type { ResponseHttp } from '../../src/rules/subjects.ts';
import { viaKey, type Via } from '../../src/exchange/flow.ts';
import { shippedWith } from '../helpers/shipped-policy.ts';

/** enforce.yaml with a client body that is not JSON forwarded, so that the server's answer to it is what enforce judges. */
const ENVELOPE_LOGGED = await shippedWith('enforce', { 'request-envelope': 'log' });

const streamEnded = {
  clientGone: false,
  canAnswer: true,
  sawEventId: false,
  unaudited: 0,
  withheld: 0,
  unreadCoding: false,
  error: undefined,
  undecodable: undefined,
  decoded: false,
};
const replyJson = (plan: Plan<{ kind: string } | Reply>): unknown => {
  assert.ok('body' in plan.deliver, `a reply, not ${plan.deliver.kind}`);
  return JSON.parse(plan.deliver.body.toString('utf8'));
};

describe('judging put off (the transport judges audit bodies after the poll phase)', () => {
  const answer = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: '18 C' }] } });

  test('a body judged later is judged as of its arrival: its duration does not grow while it waits', () => {
    const t = engineUnder(AUDIT);
    const { x, plan } = t.post(call(1));
    plan.judged();
    t.advance(30);
    const body = t.json(x, 200, answer(1));
    t.advance(500);
    const [done] = exchangesOf(body.judged());
    assert.equal(done?.judged.exchange.durationMs, 30);
  });

  test("an audited body's plan changes nothing until judged() (so the transport need not settle before it)", () => {
    const t = engineUnder(AUDIT);
    const { x, plan } = t.post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    plan.judged();
    const session = t.engine.sessions.find(`sid:${SID}`, 0)!;
    const list = t.json(
      x,
      200,
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'weather', inputSchema: { type: 'object' } }] } }),
    );
    assert.equal(t.engine.openRequests, 1, 'the request is still open');
    assert.equal(session.tools.size, 0, 'the catalogue is not learned yet');
    list.judged();
    assert.equal(t.engine.openRequests, 0);
    assert.deepEqual([...session.tools.keys()], ['weather']);
  });
});

describe('the engine under audit: delivered first, judged after', () => {
  test('a POST is forwarded before the client rules run; its request opens only when judged() is called', () => {
    const { engine, post } = engineUnder(AUDIT);
    const { plan } = post(call(1));
    assert.deepEqual(plan.deliver, { kind: 'forward', headers: undefined });
    assert.equal(engine.openRequests, 0, 'nothing judged yet');
    plan.judged();
    assert.equal(engine.openRequests, 1);
  });

  test('an HTML error page is written as it came; the exchange is judged html-body, decided pass', () => {
    const t = engineUnder(AUDIT);
    const { x, plan } = t.post(call(1));
    plan.judged();
    const body = t.json(x, 500, '<html><body>Internal Server Error</body></html>', 'text/html');
    assert.deepEqual(body.deliver, { kind: 'as-is' });
    const [done] = exchangesOf(body.judged());
    assert.ok(done);
    assert.equal(done.judged.exchange.outcome, 'invalid-response');
    assert.ok(rulesOf(done.judged).includes('html-body'));
    assert.equal(done.judged.decision.kind, 'pass');
    assert.equal(done.http.status, 500);
    assert.equal(t.engine.openRequests, 0);
  });

  test('a correct answer: delivered as it came, logged as a result with no finding', () => {
    const t = engineUnder(AUDIT);
    const { x, plan } = t.post(call(1));
    plan.judged();
    const body = t.json(x, 200, JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: '18 C' }] } }));
    assert.deepEqual(body.deliver, { kind: 'as-is' });
    const [done] = exchangesOf(body.judged());
    assert.equal(done?.judged.exchange.outcome, 'result');
    assert.deepEqual(
      done?.judged.findings.filter((f) => f.severity !== 'info'),
      [],
    );
  });
});

describe('the engine under enforce: judged first, the plan delivers what the policy decided', () => {
  test('a POST opens its request before the plan comes back', () => {
    const { engine, post } = engineUnder(ENFORCE);
    const { plan } = post(call(1));
    assert.equal(plan.deliver.kind, 'forward');
    assert.equal(engine.openRequests, 1);
  });

  test('an HTML error page becomes a JSON-RPC error with the request id', () => {
    const t = engineUnder(ENFORCE);
    const { x, plan } = t.post(call('a-7'));
    plan.judged();
    const body = t.json(x, 502, '<html><body>Bad Gateway</body></html>', 'text/html');
    const reply = replyJson(body) as { id: unknown; error: { code: number } };
    assert.equal(reply.id, 'a-7');
    assert.equal(typeof reply.error.code, 'number');
    const [done] = exchangesOf(body.judged());
    assert.equal(done?.judged.decision.kind, 'mutate');
    assert.ok(rulesOf(done!.judged).includes('html-body'));
  });

  test('a correct answer passes untouched', () => {
    const t = engineUnder(ENFORCE);
    const { x, plan } = t.post(call(1));
    plan.judged();
    const body = t.json(x, 200, JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }] } }));
    assert.deepEqual(body.deliver, { kind: 'as-is' });
    assert.equal(exchangesOf(body.judged())[0]?.judged.decision.kind, 'pass');
  });

  test('a batch: the correct answer kept byte for byte, the wrong one rewritten in its place', () => {
    const t = engineUnder(ENFORCE);
    const { x, plan } = t.post([call(1), call(2)]);
    plan.judged();
    const answered = '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"one"}]}}';
    const wrong = '{"jsonrpc":"2.0","id":2,"error":{"code":-32050,"message":"quota"}}';
    const body = t.json(x, 200, `[${answered},${wrong}]`);
    assert.equal(body.deliver.kind, 'reply');
    const text = (body.deliver as { body: Buffer }).body.toString('utf8');
    assert.ok(text.startsWith(`[${answered},`), text);
    const batch = JSON.parse(text) as Array<{ id: number; error?: { code: number } }>;
    assert.deepEqual(
      batch.map((m) => m.id),
      [1, 2],
    );
    assert.notEqual(batch[1]?.error?.code, -32050);
    const decisions = exchangesOf(body.judged()).map((e) => [e.judged.exchange.outcome, e.judged.decision.kind]);
    assert.deepEqual(decisions, [
      ['result', 'pass'],
      ['error:-32050', 'mutate'],
    ]);
  });

  test('a request the client rules block is answered by the plan and never forwarded', () => {
    const t = engineUnder(ENFORCE);
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200; i++) deep = { d: deep };
    const { plan } = t.post(call(9, 'weather', deep));
    const reply = replyJson(plan) as { id: number; error: { data: { rule: string } } };
    assert.equal(reply.id, 9);
    assert.equal(reply.error.data.rule, 'unreadable-request');
    const judged = plan.judged();
    assert.ok(judged.some((j) => j.kind === 'decision' && j.decision.kind === 'reject'));
    assert.equal(exchangesOf(judged)[0]?.judged.exchange.outcome, 'blocked');
    assert.equal(t.engine.openRequests, 0);
  });
});

describe('SSE through the engine', () => {
  test('enforce: notifications pass as they came; an error with id null is rewritten in place with the request id', () => {
    const t = engineUnder(ENFORCE);
    const { x, plan } = t.post(call(3));
    plan.judged();
    t.engine.upstreamAnswered(x, 200, { 'content-type': 'text/event-stream' });
    assert.deepEqual(t.engine.streamPlan(x, 'identity'), { readAfterWrite: false, decode: false, withholdOversize: false });
    const note = t.engine.serverEvent(
      x,
      event({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } }),
      sseHttp,
      sseFrame,
      undefined,
    );
    assert.equal(note.rewritten, undefined);
    assert.deepEqual(exchangesOf(note.judged), []);
    const broken = t.engine.serverEvent(
      x,
      event({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'boom' } }),
      sseHttp,
      sseFrame,
      undefined,
    );
    assert.ok(broken.rewritten, 'the message is rewritten');
    assert.equal((JSON.parse(broken.rewritten) as { id: number }).id, 3);
    const end = t.engine.streamEnd(x, streamEnded, sseHttp, sseFrame);
    assert.deepEqual(end.answers, []);
  });

  test('audit: events are written before they are read', () => {
    const t = engineUnder(AUDIT);
    const { x, plan } = t.post(call(3));
    plan.judged();
    assert.equal(t.engine.streamPlan(x, 'known').readAfterWrite, true);
    assert.equal(t.engine.streamPlan(x, 'known').decode, false, 'a compressed stream goes as it came');
    const done = t.engine.serverEvent(x, event({ jsonrpc: '2.0', id: 3, result: { content: [] } }), sseHttp, sseFrame, undefined);
    assert.equal(done.rewritten, undefined);
    assert.equal(exchangesOf(done.judged)[0]?.judged.exchange.outcome, 'result');
  });

  test('the client aborts mid-stream: the request ends client-closed, nothing is written', () => {
    const t = engineUnder(ENFORCE);
    const { x, plan } = t.post(call(4));
    plan.judged();
    t.engine.upstreamAnswered(x, 200, { 'content-type': 'text/event-stream' });
    const end = t.engine.streamEnd(x, { ...streamEnded, clientGone: true, canAnswer: false }, sseHttp, sseFrame);
    assert.deepEqual(end.answers, []);
    assert.equal(exchangesOf(end.judged())[0]?.judged.exchange.outcome, 'client-closed');
    assert.equal(t.engine.openRequests, 0);
  });

  test('the upstream breaks the stream: audit answers with the proxy error, enforce with the policy rewrite', () => {
    for (const [policy, kind] of [
      [AUDIT, 'error'],
      [ENFORCE, 'message'],
    ] as const) {
      const t = engineUnder(policy);
      const { x, plan } = t.post(call(5));
      plan.judged();
      t.engine.upstreamAnswered(x, 200, { 'content-type': 'text/event-stream' });
      const end = t.engine.streamEnd(x, { ...streamEnded, error: new ProxyError('WARDEN_UPSTREAM_RESET') }, sseHttp, sseFrame);
      assert.equal(end.answers.length, 1, policy.mode);
      assert.ok(kind in end.answers[0]!, `${policy.mode}: ${JSON.stringify(end.answers)}`);
      const [done] = exchangesOf(end.judged());
      assert.equal(done?.judged.exchange.outcome, 'no-response');
      assert.equal(done?.http.proxyError, 'WARDEN_UPSTREAM_RESET');
    }
  });

  test('a legacy stream with event ids dropped by its client waits for a resumption, then expires client-closed', () => {
    const t = engineUnder(AUDIT, { resumeWindowMs: 500 });
    const { x, plan } = t.post(call(6));
    plan.judged();
    t.engine.upstreamAnswered(x, 200, { 'content-type': 'text/event-stream' });
    const end = t.engine.streamEnd(x, { ...streamEnded, clientGone: true, canAnswer: false, sawEventId: true }, sseHttp, sseFrame);
    assert.deepEqual(exchangesOf(end.judged()), []);
    assert.equal(t.engine.openRequests, 1, 'still waiting for a resumption');
    t.advance(600);
    const expired = exchangesOf(t.engine.tick(2_000));
    assert.equal(expired[0]?.judged.exchange.outcome, 'client-closed');
    assert.equal(t.engine.openRequests, 0);
  });
});

describe('failures and time', () => {
  test('the upstream fails: audit gets the proxy error with the ids, enforce the policy rewrite of a dropped connection', () => {
    const audit = engineUnder(AUDIT);
    const a = audit.post([call(1), call(2)]);
    a.plan.judged();
    const failed = audit.engine.failure(a.x, new ProxyError('WARDEN_UPSTREAM_UNREACHABLE'), false, undefined);
    assert.deepEqual(failed.deliver, {
      kind: 'proxy-error',
      error: failed.deliver.kind === 'proxy-error' ? failed.deliver.error : undefined,
      ids: [1, 2],
      batch: true,
    });
    assert.deepEqual(
      exchangesOf(failed.judged).map((e) => [e.judged.exchange.outcome, e.http.proxyError]),
      [
        ['no-response', 'WARDEN_UPSTREAM_UNREACHABLE'],
        ['no-response', 'WARDEN_UPSTREAM_UNREACHABLE'],
      ],
    );

    const enforce = engineUnder(ENFORCE);
    const e = enforce.post(call(1));
    e.plan.judged();
    const rewritten = enforce.engine.failure(e.x, new ProxyError('WARDEN_UPSTREAM_RESET'), false, undefined);
    assert.equal(rewritten.deliver.kind, 'reply');
    assert.equal(exchangesOf(rewritten.judged)[0]?.judged.decision.kind, 'mutate');
  });

  test('the client leaves before the answer: client-closed, nothing to deliver', () => {
    const t = engineUnder(ENFORCE);
    const { x, plan } = t.post(call(1));
    plan.judged();
    const gone = t.engine.failure(x, new ProxyError('WARDEN_UPSTREAM_RESET'), true, undefined);
    assert.deepEqual(gone.deliver, { kind: 'none' });
    assert.equal(exchangesOf(gone.judged)[0]?.judged.exchange.outcome, 'client-closed');
  });

  test('a request never answered expires when time passes, reported as a value', () => {
    const t = engineUnder(AUDIT, { requestIdleMs: 1_000 });
    const { plan } = t.post(call(1));
    plan.judged();
    assert.deepEqual(t.engine.tick(1_500), []);
    t.advance(5_000);
    const [expired] = exchangesOf(t.engine.tick(7_000));
    assert.equal(expired?.judged.exchange.outcome, 'no-response');
    assert.equal(expired?.http.expired, 'idle');
    assert.equal(t.engine.openRequests, 0);
  });

  test('a body that is not JSON, forwarded (request-envelope logged), answered an empty 400: enforce makes it -32700 with id null on 400', () => {
    const t = engineUnder(ENVELOPE_LOGGED);
    const body = Buffer.from('{"jsonrpc": "2.0", "id": 1, "method": ');
    const decoded = decodeJson(body);
    const x = t.engine.openPost({ 'mcp-session-id': SID }, decoded);
    const plan = t.engine.clientBody(x, body, body.length, decoded);
    assert.equal(plan.deliver.kind, 'forward');
    plan.judged();
    const answer = t.json(x, 400, '');
    const reply = replyJson(answer) as { id: unknown; error: { code: number } };
    assert.equal(answer.deliver.kind === 'reply' && answer.deliver.status, 400);
    assert.equal(reply.id, null);
    assert.equal(reply.error.code, -32700);
  });

  test('enforce.yaml answers a client body that is no JSON-RPC itself, never forwarded: -32700 for one not JSON, -32600 for an invalid request (its id when readable)', () => {
    for (const [text, code, id] of [
      ['{"jsonrpc": "2.0", "id": 1, "method": ', -32700, null],
      ['{"jsonrpc":"2.0","id":"x","method":42}', -32600, 'x'],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":42}', -32600, null],
      ['[]', -32600, null],
    ] as const) {
      const t = engineUnder(ENFORCE);
      const body = Buffer.from(text);
      const decoded = decodeJson(body);
      const x = t.engine.openPost({ 'mcp-session-id': SID }, decoded);
      const plan = t.engine.clientBody(x, body, body.length, decoded);
      assert.equal(plan.deliver.kind, 'reply', text);
      if (plan.deliver.kind !== 'reply') continue;
      assert.equal(plan.deliver.status, 400, text);
      const reply = JSON.parse(plan.deliver.body.toString()) as { id: unknown; error: { code: number; data: { rule: string } } };
      assert.deepEqual([reply.id, reply.error.code, reply.error.data.rule], [id, code, 'request-envelope'], text);
    }
    // Audit forwards it, as it came.
    const t = engineUnder(AUDIT);
    const body = Buffer.from('not json');
    const decoded = decodeJson(body);
    const x = t.engine.openPost({ 'mcp-session-id': SID }, decoded);
    assert.equal(t.engine.clientBody(x, body, body.length, decoded).deliver.kind, 'forward');
  });
});

describe('records the engine hands the sinks', () => {
  test('an expired request is logged detached: its arguments redacted whatever the policy of the plan that carries it', () => {
    const loaded = loadPolicyText('mode: audit\nlog: { arguments: full }\n', 'full.yaml');
    assert.ok(loaded.ok);
    const t = engineUnder(loaded.policy, { requestIdleMs: 1_000 });
    const args = { city: 'Paris', token: 'abc' };
    const { x, plan } = t.post(call(1, 'weather', args));
    plan.judged();
    t.advance(5_000);
    const capture = createLogCapture();
    const sinks = {
      logger: createLogger({ destination: capture.stream as never, level: 'info' }),
      metrics: new Metrics({ sessions: () => 0, openRequests: () => 0 }),
      capture: () => assert.fail('no capture'),
    };
    recordJudged(sinks, loaded.policy, x.flow.session, t.engine.tick(7_000));
    const record = capture.find((r) => r.msg === 'exchange');
    assert.equal(record?.outcome, 'no-response');
    assert.deepEqual(record?.arguments, loggedArguments({ name: 'weather', arguments: args }, 'redacted'));
    assert.notDeepEqual(record?.arguments, loggedArguments({ name: 'weather', arguments: args }, 'full'));
  });
});

describe('sessions a transport names (stdio children, legacy SSE sessions)', () => {
  const STDIO_FRAME: ResponseHttp = { status: undefined, contentType: undefined, transport: 'stdio' };
  const child = (session: string): Via => ({ wire: 'stdio', session, sessionId: undefined });
  const legacySession = (id: string): Via => ({ wire: 'sse', session: `/message?sessionId=${id}`, sessionId: id });
  /** A client message in the session `via` names (a stdio line, a legacy POST), judged. */
  const postVia = (engine: Engine, via: Via, message: unknown): ExchangeState => rawVia(engine, via, JSON.stringify(message));
  /** The same, sent as `text` as it is (not JSON, or no request); the exchange it opened. */
  const rawVia = (engine: Engine, via: Via, text: string): ExchangeState => {
    const body = Buffer.from(text);
    const decoded = decodeJson(body);
    const x = engine.openPost({}, decoded, via);
    const plan = engine.clientBody(x, body, body.length, decoded);
    assert.equal(plan.deliver.kind, 'forward');
    plan.judged();
    return x;
  };
  /** A line of the child's stdout, as the stdio relay hands it in. */
  const lineOf = (data: string, lines = 1) => ({ data, size: Buffer.byteLength(data) + 1, raw: Buffer.from(data), lines });
  const findingsOf = (judged: readonly Judged[]) => judged.flatMap((j) => (j.kind === 'findings' ? j.findings : []));
  const EXITED = new ProxyError('WARDEN_UPSTREAM_EXITED', 'MCP server process exited (code 1) before responding');

  test('sessionGone (audit): each open client request of the session gets the error with its id; other sessions keep theirs', () => {
    const t = engineUnder(AUDIT);
    postVia(t.engine, child('a'), call(1));
    postVia(t.engine, child('a'), call('two'));
    postVia(t.engine, child('b'), call(1));
    postVia(t.engine, legacySession('s1'), call(1));
    t.post(call(1)).plan.judged();
    assert.equal(t.engine.openRequests, 5);
    const x = t.engine.openBodiless('get', {}, child('a'));
    const gone = t.engine.sessionGone(x, EXITED, STDIO_FRAME, true);
    assert.deepEqual(gone.answers, [
      { error: EXITED, id: 1 },
      { error: EXITED, id: 'two' },
    ]);
    const ended = exchangesOf(gone.judged());
    assert.deepEqual(
      ended.map((e) => [e.judged.exchange.request.id, e.judged.exchange.outcome, e.http.proxyError, e.http.transport]),
      [
        [1, 'no-response', 'WARDEN_UPSTREAM_EXITED', 'stdio'],
        ['two', 'no-response', 'WARDEN_UPSTREAM_EXITED', 'stdio'],
      ],
    );
    assert.equal(t.engine.openRequests, 3, "the other child's, the legacy session's and the HTTP session's requests stay open");
    // The same ids in the other sessions still get their answers.
    const other = t.engine.serverLine(
      t.engine.openBodiless('get', {}, child('b')),
      lineOf(JSON.stringify({ jsonrpc: '2.0', id: 1, result: {} })),
    );
    assert.equal(exchangesOf(other.judged())[0]?.judged.exchange.outcome, 'result');
    assert.equal(t.engine.openRequests, 2);
  });

  test('sessionGone (enforce): the policy answers in place of the proxy error, with each id', () => {
    const t = engineUnder(ENFORCE);
    postVia(t.engine, child('a'), call(1));
    postVia(t.engine, child('a'), call(2));
    const gone = t.engine.sessionGone(t.engine.openBodiless('get', {}, child('a')), EXITED, STDIO_FRAME, true);
    assert.deepEqual(
      gone.answers.map((a) => ('message' in a ? (a.message as { id: unknown; error?: unknown }).id : 'not a message')),
      [1, 2],
    );
    assert.ok(gone.answers.every((a) => 'message' in a && (a.message as { error?: unknown }).error !== undefined));
    assert.deepEqual(
      exchangesOf(gone.judged()).map((e) => [e.judged.exchange.outcome, e.judged.decision.kind]),
      [
        ['no-response', 'mutate'],
        ['no-response', 'mutate'],
      ],
    );
  });

  test('serverExited: audit answers nothing (the client sees the pipe close), enforce answers each; both record no-response', () => {
    for (const [policy, answered] of [
      [AUDIT, 0],
      [ENFORCE, 2],
    ] as const) {
      const t = engineUnder(policy);
      postVia(t.engine, child('a'), call(1));
      postVia(t.engine, child('a'), call(2));
      const gone = t.engine.serverExited(t.engine.openBodiless('get', {}, child('a')), EXITED, STDIO_FRAME, false);
      assert.equal(gone.answers.length, answered, policy.mode);
      assert.deepEqual(
        exchangesOf(gone.judged()).map((e) => [e.judged.exchange.outcome, e.http.proxyError]),
        [
          ['no-response', 'WARDEN_UPSTREAM_EXITED'],
          ['no-response', 'WARDEN_UPSTREAM_EXITED'],
        ],
        policy.mode,
      );
    }
    // The client left first: nothing is answered, the requests end client-closed.
    const t = engineUnder(ENFORCE);
    postVia(t.engine, child('a'), call(1));
    const gone = t.engine.serverExited(t.engine.openBodiless('get', {}, child('a')), EXITED, STDIO_FRAME, true);
    assert.deepEqual(gone.answers, []);
    assert.equal(exchangesOf(gone.judged())[0]?.judged.exchange.outcome, 'client-closed');
  });

  test('sessionGone with canAnswer false: the requests end client-closed, nothing is answered', () => {
    for (const policy of [AUDIT, ENFORCE]) {
      const t = engineUnder(policy);
      postVia(t.engine, legacySession('s1'), call(1));
      postVia(t.engine, legacySession('s1'), call(2));
      const gone = t.engine.sessionGone(t.engine.openBodiless('get', {}, legacySession('s1')), EXITED, STDIO_FRAME, false);
      assert.deepEqual(gone.answers, [], policy.mode);
      assert.deepEqual(
        exchangesOf(gone.judged()).map((e) => e.judged.exchange.outcome),
        ['client-closed', 'client-closed'],
        policy.mode,
      );
      assert.equal(t.engine.openRequests, 0);
    }
  });

  test("sessionGone: a request the server sent the client is ended, never answered to the client; the session's state is forgotten", () => {
    const t = engineUnder(AUDIT);
    const via = child('a');
    postVia(t.engine, via, {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    });
    const init = t.engine.serverLine(
      t.engine.openBodiless('get', {}, via),
      lineOf(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          result: { protocolVersion: VERSION, capabilities: {}, serverInfo: { name: 's', version: '1' } },
        }),
      ),
    );
    init.judged();
    assert.equal(t.engine.sessions.find(viaKey(via), 0)?.protocolVersion, VERSION, 'the child negotiated a version');
    const ask = t.engine.serverLine(
      t.engine.openBodiless('get', {}, via),
      lineOf(JSON.stringify({ jsonrpc: '2.0', id: 's-1', method: 'roots/list' })),
    );
    ask.judged();
    postVia(t.engine, via, call(5));
    assert.equal(t.engine.openRequests, 2);
    const gone = t.engine.sessionGone(t.engine.openBodiless('get', {}, via), EXITED, STDIO_FRAME, true);
    assert.deepEqual(gone.answers, [{ error: EXITED, id: 5 }]);
    assert.deepEqual(
      exchangesOf(gone.judged())
        .map((e) => [e.judged.exchange.request.from, e.judged.exchange.request.id])
        .sort(),
      [
        ['client', 5],
        ['server', 's-1'],
      ],
    );
    assert.equal(t.engine.openRequests, 0);
    assert.equal(t.engine.sessions.find(viaKey(via), 0), undefined, 'the session is forgotten');
  });

  test('legacyPostAccepted (202): the requests stay open, and the answer on the session stream completes them', () => {
    const t = engineUnder(AUDIT);
    const via = legacySession('s1');
    const x = postVia(t.engine, via, call(7));
    t.engine.upstreamAnswered(x, 202, {});
    assert.deepEqual(exchangesOf(t.engine.legacyPostAccepted(x)), []);
    assert.equal(t.engine.openRequests, 1);
    const stream = t.engine.openBodiless('get', {}, via);
    const answered = t.engine.serverEvent(stream, event({ jsonrpc: '2.0', id: 7, result: { content: [] } }), sseHttp, sseFrame, undefined);
    assert.deepEqual(
      exchangesOf(answered.judged).map((e) => [e.judged.exchange.request.id, e.judged.exchange.outcome]),
      [[7, 'result']],
    );
    assert.equal(t.engine.openRequests, 0);
  });

  test("legacyPostAccepted (202): an answer on another session's stream does not complete the request", () => {
    const t = engineUnder(AUDIT);
    const x = postVia(t.engine, legacySession('s1'), call(7));
    t.engine.legacyPostAccepted(x);
    const elsewhere = t.engine.serverEvent(
      t.engine.openBodiless('get', {}, legacySession('s2')),
      event({ jsonrpc: '2.0', id: 7, result: { content: [] } }),
      sseHttp,
      sseFrame,
      undefined,
    );
    assert.deepEqual(exchangesOf(elsewhere.judged), []);
    assert.equal(t.engine.openRequests, 1);
  });

  const stdioAnswer = (engine: Engine, message: unknown) =>
    findingsOf(engine.serverLine(engine.openBodiless('get', {}, child('a')), lineOf(JSON.stringify(message))).judged()).map((f) => f.rule);
  const error = (id: unknown, code: number) => ({ jsonrpc: '2.0', id, error: { code, message: 'no' } });

  test('stdio: the answer to a line that is no request comes on stdout, and is judged as the HTTP answer would be (invalid-request-code, parse-error-code)', () => {
    for (const [line, answer, expected] of [
      ['{"jsonrpc":"2.0","id":"x","method":42}', error('x', -32603), ['invalid-request-code']],
      ['{"jsonrpc":"2.0","id":"x","method":42}', error(null, -32603), ['invalid-request-code']],
      ['{"jsonrpc":"2.0","id":"x","method":42}', error('x', -32600), []],
      ['{"jsonrpc":"2.0","id":"x","method":42}', error(null, -32600), []],
      ['this is not json', error(null, -32603), ['parse-error-code']],
      ['this is not json', error(null, -32700), []],
    ] as const) {
      const t = engineUnder(AUDIT);
      rawVia(t.engine, child('a'), line);
      const rules = stdioAnswer(t.engine, answer);
      assert.deepEqual(rules, expected, `${line} answered ${JSON.stringify(answer)}`);
      // Answered: nothing is left waiting.
      t.advance(60_000);
      assert.deepEqual(findingsOf(t.engine.tick(t.advance(0))), [], line);
    }
  });

  test('stdio: an error for another request is no answer to a waiting line; an error with an id the line did not carry is none either', () => {
    const t = engineUnder(AUDIT);
    postVia(t.engine, child('a'), call(1));
    rawVia(t.engine, child('a'), '{"jsonrpc":"2.0","id":"x","method":42}');
    assert.ok(!stdioAnswer(t.engine, error(1, -32603)).includes('invalid-request-code'), 'the answer to request 1');
    assert.deepEqual(stdioAnswer(t.engine, error('y', -32603)), [], 'an id nobody sent');
    // Another session's line waits in that session only.
    rawVia(t.engine, child('b'), 'not json');
    assert.deepEqual(stdioAnswer(t.engine, error('x', -32600)), []);
  });

  test('malformed-unanswered: a line that is not JSON, or no request, with no answer on stdout within the window; none for an answered one or a notification', () => {
    const t = engineUnder(AUDIT);
    rawVia(t.engine, child('a'), 'this is not json');
    rawVia(t.engine, child('a'), '{"jsonrpc":"2.0","id":"x","method":42}');
    rawVia(t.engine, child('a'), '{"jsonrpc":"2.0","method":"notifications/initialized"}');
    rawVia(t.engine, child('b'), 'not json either');
    stdioAnswer(t.engine, error(null, -32700));
    const window = DEFAULT_LIMITS.malformedAnswerMs;
    assert.deepEqual(findingsOf(t.engine.tick(t.advance(window - 1))), [], 'not yet');
    const found = findingsOf(t.engine.tick(t.advance(1)));
    assert.deepEqual(
      found.map((f) => f.rule),
      ['malformed-unanswered', 'malformed-unanswered'],
    );
    assert.match(String(found[0]?.message), /no valid request.*5000 ms/);
    assert.match(String(found[1]?.message), /not JSON/);
    assert.deepEqual(findingsOf(t.engine.tick(t.advance(window))), [], 'reported once');
  });

  test('malformed-unanswered: the child exits before answering a line that is not JSON', () => {
    const t = engineUnder(AUDIT);
    rawVia(t.engine, child('a'), 'this is not json');
    const gone = t.engine.sessionGone(t.engine.openBodiless('get', {}, child('a')), EXITED, STDIO_FRAME, true);
    assert.deepEqual(
      findingsOf(gone.judged()).map((f) => f.rule),
      ['malformed-unanswered'],
    );
    assert.deepEqual(findingsOf(t.engine.tick(t.advance(DEFAULT_LIMITS.malformedAnswerMs))), [], 'reported once');
  });

  test('legacy SSE: a POST that is no request, accepted (202), waits for its answer on the stream; one refused in its own answer does not', () => {
    const t = engineUnder(AUDIT);
    const accepted = rawVia(t.engine, legacySession('s1'), '{"jsonrpc":"2.0","id":7,"method":42}');
    t.engine.upstreamAnswered(accepted, 202, {});
    t.engine.legacyPostAccepted(accepted);
    rawVia(t.engine, legacySession('s1'), 'not json');
    const stream = t.engine.openBodiless('get', {}, legacySession('s1'));
    const { judged } = t.engine.serverEvent(stream, event(error(7, -32601)), sseHttp, sseFrame, undefined);
    assert.deepEqual(
      findingsOf(judged).map((f) => f.rule),
      ['invalid-request-code'],
    );
    assert.deepEqual(findingsOf(t.engine.tick(t.advance(DEFAULT_LIMITS.malformedAnswerMs))), [], 'the refused POST is not waited for');
  });

  test('deliversFirst: audit writes a line before judging it, enforce judges first', () => {
    assert.equal(engineUnder(AUDIT).engine.deliversFirst(), true);
    assert.equal(engineUnder(ENFORCE).engine.deliversFirst(), false);
  });

  test('serverLine: a line that is not JSON is dropped under enforce (stdio-not-a-message: block), relayed as-is under audit', () => {
    for (const [policy, deliver, action] of [
      [ENFORCE, { kind: 'drop' }, 'block'],
      [AUDIT, { kind: 'as-is' }, 'log'],
    ] as const) {
      const t = engineUnder(policy);
      const plan = t.engine.serverLine(t.engine.openBodiless('get', {}, child('a')), lineOf('Server listening on stdio'));
      assert.deepEqual(plan.deliver, deliver, policy.mode);
      const found = findingsOf(plan.judged()).filter((f) => f.rule === 'stdio-not-a-message');
      assert.deepEqual(
        found.map((f) => f.action),
        [action],
        policy.mode,
      );
    }
  });

  test('serverLine: a message over several lines goes out on one line under enforce, as it came under audit', () => {
    const message = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'hi' } };
    const data = JSON.stringify(message, null, 2);
    const lines = data.split('\n').length;
    const enforce = engineUnder(ENFORCE);
    const plan = enforce.engine.serverLine(enforce.engine.openBodiless('get', {}, child('a')), lineOf(data, lines));
    assert.equal(plan.deliver.kind, 'replace');
    const text = plan.deliver.kind === 'replace' ? plan.deliver.text : '';
    assert.ok(!text.includes('\n'), text);
    assert.deepEqual(JSON.parse(text), message);
    assert.deepEqual(
      findingsOf(plan.judged()).map((f) => [f.rule, f.action]),
      [['stdio-embedded-newline', 'rewrite']],
    );
    const audit = engineUnder(AUDIT);
    assert.deepEqual(audit.engine.serverLine(audit.engine.openBodiless('get', {}, child('a')), lineOf(data, lines)).deliver, {
      kind: 'as-is',
    });
  });

  test('serverLine: a correct one-line message passes with no stdio finding', () => {
    const t = engineUnder(ENFORCE);
    const plan = t.engine.serverLine(
      t.engine.openBodiless('get', {}, child('a')),
      lineOf(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })),
    );
    assert.deepEqual(plan.deliver, { kind: 'as-is' });
    assert.deepEqual(findingsOf(plan.judged()), []);
  });

  test('serverLine under enforce: JSON over several lines that is no JSON-RPC message is dropped, not relayed', () => {
    const t = engineUnder(ENFORCE);
    const plan = t.engine.serverLine(t.engine.openBodiless('get', {}, child('a')), lineOf('{\n  "a": 1\n}', 3));
    assert.deepEqual(plan.deliver, { kind: 'drop' });
  });
});
