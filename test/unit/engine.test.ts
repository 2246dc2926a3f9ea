// The exchange engine driven through whole exchanges without a socket: what a transport would hand
// it (a client body, the upstream's answer, a body or SSE events, a stream's end, a failure, time
// passing) and the plans that come back, under the shipped audit and enforce policies.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { decodeJson } from '../../src/codec/json-body.ts';
import { DEFAULT_LIMITS } from '../../src/config/defaults.ts';
import { Engine } from '../../src/engine/engine.ts';
import type { ExchangeHttp, Judged, JudgedExchange, Plan, Reply } from '../../src/engine/plans.ts';
import type { ExchangeState } from '../../src/engine/state.ts';
import { ProxyError } from '../../src/errors.ts';
import { recordJudged } from '../../src/sinks/judged.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { Metrics } from '../../src/sinks/metrics.ts';
import { loggedArguments } from '../../src/sinks/redact.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import { loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import { runtimeFactory } from '../../src/config/runtime.ts';
import type { Policy } from '../../src/config/types.ts';
import type { ResponseHttp } from '../../src/rules/subjects.ts';

const policyFile = async (name: string): Promise<Policy> => {
  const loaded = await loadPolicyFile(fileURLToPath(new URL(`../../config/${name}.yaml`, import.meta.url)));
  assert.ok(loaded.ok);
  return loaded.policy;
};
const AUDIT = await policyFile('audit');
const ENFORCE = await policyFile('enforce');
const VERSION = '2025-06-18';
const SID = 'session-1';

/** An engine under `policy`, with a clock the test moves, and a session already initialized. */
function engineUnder(policy: Policy, limits: Partial<typeof DEFAULT_LIMITS> = {}) {
  let clock = 1_000;
  const engine = new Engine({
    limits: { ...DEFAULT_LIMITS, ...limits },
    runtime: runtimeFactory(() => {}),
    policy: () => policy,
    now: () => clock,
  });
  const headers = {
    'mcp-session-id': SID,
    'mcp-protocol-version': VERSION,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const session = engine.sessions.open(`sid:${SID}`, SID, clock);
  session.protocolVersion = VERSION;
  return {
    engine,
    advance: (ms: number) => (clock += ms),
    /** A POST of `messages` (one object, or a batch): its state and the client body's plan. */
    post(messages: unknown) {
      const body = Buffer.from(JSON.stringify(messages));
      const decoded = decodeJson(body);
      const x = engine.openPost(headers, decoded);
      return { x, plan: engine.clientBody(x, body, body.length, decoded) };
    },
    /** The upstream answered `status` with a JSON body (`text`), read whole. */
    json(x: ExchangeState, status: number, text: string, contentType = 'application/json') {
      engine.upstreamAnswered(x, status, { 'content-type': contentType });
      const http: ResponseHttp = { status, contentType, transport: 'json' };
      return engine.serverBody(x, { kind: 'complete', bytes: Buffer.from(text) }, http, Buffer.byteLength(text), undefined);
    },
  };
}

const call = (id: number | string, name = 'weather', args: unknown = { city: 'Paris' }) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const exchangesOf = (judged: readonly Judged[]): Array<{ judged: JudgedExchange; http: ExchangeHttp }> =>
  judged.flatMap((j) => (j.kind === 'exchange' ? [j] : []));
const rulesOf = (j: JudgedExchange): string[] => j.findings.map((f) => f.rule);
const sseHttp: ExchangeHttp = { status: 200, transport: 'sse' };
const sseFrame: ResponseHttp = { status: 200, contentType: 'text/event-stream', transport: 'sse' };
const event = (message: unknown) => {
  const data = JSON.stringify(message);
  const raw = Buffer.from(`event: message\ndata: ${data}\n\n`);
  return { data, size: raw.length, raw };
};
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

  test('a body that is not JSON under enforce: -32700 with id null on 400', () => {
    const t = engineUnder(ENFORCE);
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
