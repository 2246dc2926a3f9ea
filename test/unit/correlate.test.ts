import { NO_VERDICT } from '../../src/verdicts.ts';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { classify, type JsonRpcId, type Message } from '../../src/codec/jsonrpc.ts';
import { Correlator, declaredVersion, outcomeOf, toolName, type Flow } from '../../src/exchange/correlate.ts';
import { ClaimBook } from '../../src/exchange/claims.ts';
import { resolveFlow } from '../../src/exchange/flow.ts';
import { SessionStore, sessionKey } from '../../src/exchange/sessions.ts';
import { RequestTable, requestKey, type OpenRequest, type Unanswered } from '../../src/exchange/table.ts';

type Request = Extract<Message, { kind: 'request' }>;

function request(id: JsonRpcId, method: string, params?: unknown): Request {
  const m = classify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
  if (m.kind !== 'request') throw new Error(`not a request: ${m.kind}`);
  return m;
}
const result = (id: JsonRpcId | null, res: unknown): Message => classify({ jsonrpc: '2.0', id, result: res });
const error = (id: JsonRpcId | null, code: unknown, message = 'x'): Message => classify({ jsonrpc: '2.0', id, error: { code, message } });
const notification = (method: string, params?: unknown): Message => classify({ jsonrpc: '2.0', method, params });

function setup(opts: { maxOpen?: number; idleMs?: number } = {}) {
  const unanswered: Array<{ req: OpenRequest; why: Unanswered }> = [];
  const table = new RequestTable(opts.maxOpen ?? 100, opts.idleMs ?? 60_000, (req, why) => unanswered.push({ req, why }));
  const sessions = new SessionStore({ maxSessions: 100, sessionIdleMs: 600_000, maxToolsPerSession: 1000 });
  const correlator = new Correlator(table, sessions);
  const flowOf = (headers: IncomingHttpHeaders = {}, seq = 1, messages: Message[] = [], now = 0): Flow =>
    resolveFlow(headers, messages, sessions, seq, now);
  return { table, sessions, correlator, unanswered, flowOf };
}

describe('Correlator: client requests answered by the server', () => {
  test('a result completes the request with outcome "result", its duration and sizes', () => {
    const { correlator, table, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'tools/call', { name: 'echo', arguments: {} }), 'client', flow, 120, 1000);
    assert.equal(table.size, 1);
    const resp = result(1, { content: [] });
    const done = correlator.response(resp, 'server', flow, 340, 1250);
    assert.ok(done);
    assert.equal(done.outcome, 'result');
    assert.equal(done.durationMs, 250);
    assert.equal(done.responseBytes, 340);
    assert.equal(done.response, resp);
    assert.equal(done.request.method, 'tools/call');
    assert.equal(done.request.tool, 'echo');
    assert.equal(done.request.id, 1);
    assert.equal(done.request.from, 'client');
    assert.equal(done.request.scope, flow.scope);
    assert.equal(done.request.startedAt, 1000);
    assert.equal(done.request.requestBytes, 120);
    assert.equal(done.request.verdict, NO_VERDICT);
    assert.equal(table.size, 0);
  });

  test('a second response to the same id finds nothing', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'ping'), 'client', flow, 10, 0);
    assert.ok(correlator.response(result(1, {}), 'server', flow, 10, 5));
    assert.equal(correlator.response(result(1, {}), 'server', flow, 10, 6), undefined);
  });

  test('isError: true gives outcome "isError"', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request('c1', 'tools/call', { name: 'fail' }), 'client', flow, 10, 0);
    const done = correlator.response(result('c1', { isError: true, content: [{ type: 'text', text: 'boom' }] }), 'server', flow, 10, 3);
    assert.equal(done?.outcome, 'isError');
  });

  test('an error response gives outcome "error:<code>"', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(2, 'tools/call', { name: 'x' }), 'client', flow, 10, 0);
    const done = correlator.response(error(2, -32602, 'Invalid params'), 'server', flow, 10, 7);
    assert.equal(done?.outcome, 'error:-32602');
    assert.equal(done?.durationMs, 7);
  });

  test('an invalid response that still carries the id completes the request as "invalid-response"', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(3, 'ping'), 'client', flow, 10, 0);
    const bad = classify({ jsonrpc: '2.0', id: 3, result: {}, error: { code: 1, message: 'x' } });
    assert.equal(bad.kind, 'invalid');
    assert.equal(correlator.response(bad, 'server', flow, 10, 1)?.outcome, 'invalid-response');
  });

  test('an unknown id is an orphan: undefined, nothing thrown, open requests untouched', () => {
    const { correlator, table, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'ping'), 'client', flow, 10, 0);
    assert.equal(correlator.response(result(99, {}), 'server', flow, 10, 1), undefined);
    assert.equal(correlator.response(error(null, -32700), 'server', flow, 10, 1), undefined);
    assert.equal(
      correlator.response(classify({ jsonrpc: '2.0', error: { code: -32700, message: 'x' } }), 'server', flow, 10, 1),
      undefined,
    );
    assert.equal(correlator.response(result(null, {}), 'server', flow, 10, 1), undefined);
    assert.equal(table.size, 1);
  });

  test('requests and notifications passed as responses match nothing', () => {
    const { correlator, table, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'ping'), 'client', flow, 10, 0);
    assert.equal(correlator.response(request(1, 'ping'), 'server', flow, 10, 1), undefined);
    assert.equal(correlator.response(notification('notifications/progress'), 'server', flow, 10, 1), undefined);
    assert.equal(table.size, 1);
  });

  test('ids 1 and "1" are kept apart: the exact id wins', () => {
    const { correlator, table, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'numeric'), 'client', flow, 10, 0);
    correlator.request(request('1', 'string'), 'client', flow, 10, 0);
    assert.equal(table.size, 2);
    assert.equal(correlator.response(result('1', {}), 'server', flow, 10, 1)?.request.method, 'string');
    assert.equal(correlator.response(result(1, {}), 'server', flow, 10, 1)?.request.method, 'numeric');
    assert.equal(table.size, 0);
  });

  test('"3" answers 3 when no "3" is open, as a client matching Number(id) takes it (the rules flag the type)', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(3, 'numeric'), 'client', flow, 10, 0);
    correlator.request(request('7', 'string'), 'client', flow, 10, 0);
    assert.equal(correlator.response(result('3', {}), 'server', flow, 10, 1)?.request.method, 'numeric');
    assert.equal(correlator.response(result(7, {}), 'server', flow, 10, 1)?.request.method, 'string');
    assert.equal(correlator.response(result('x3', {}), 'server', flow, 10, 1), undefined);
  });

  test("on a POST's response only that POST's requests are answered; a GET stream answers any of the session", () => {
    const { correlator, flowOf, sessions } = setup();
    const headers = { 'mcp-session-id': 's' };
    const postA = resolveFlow(headers, [], sessions, 1, 0, true);
    const postB = resolveFlow(headers, [], sessions, 2, 0, true);
    correlator.request(request(1, 'a'), 'client', postA, 10, 0);
    correlator.request(request(2, 'b'), 'client', postB, 10, 0);
    assert.equal(correlator.response(result(1, {}), 'server', postB, 10, 1), undefined, "B's response cannot answer A");
    assert.equal(correlator.abandon(postB.scope, 'client', 1, 1, 'invalid-response', postB.exchange), undefined, 'nor end it');
    const get = flowOf(headers);
    assert.equal(correlator.response(result(1, {}), 'server', get, 10, 2)?.request.method, 'a');
    assert.equal(correlator.response(result(2, {}), 'server', postB, 10, 2)?.request.method, 'b');
  });

  test('ids 0 and "" are real ids', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(0, 'zero'), 'client', flow, 10, 0);
    correlator.request(request('', 'empty'), 'client', flow, 10, 0);
    assert.equal(correlator.response(result(0, {}), 'server', flow, 10, 1)?.request.method, 'zero');
    assert.equal(correlator.response(result('', {}), 'server', flow, 10, 1)?.request.method, 'empty');
  });

  test('the same id in two scopes is two requests', () => {
    const { correlator, flowOf } = setup();
    const f1 = flowOf({}, 1);
    const f2 = flowOf({}, 2);
    assert.notEqual(f1.scope, f2.scope);
    correlator.request(request(1, 'first'), 'client', f1, 10, 0);
    correlator.request(request(1, 'second'), 'client', f2, 10, 0);
    assert.equal(correlator.response(result(1, {}), 'server', f2, 10, 1)?.request.method, 'second');
    assert.equal(correlator.response(result(1, {}), 'server', f1, 10, 1)?.request.method, 'first');
  });

  test('a response on another stream of the same session finds the request', () => {
    const { correlator, flowOf } = setup();
    const post = flowOf({ 'mcp-session-id': 's1' }, 1);
    const get = flowOf({ 'mcp-session-id': 's1' }, 2);
    correlator.request(request(5, 'tools/call', { name: 'slow' }), 'client', post, 10, 0);
    assert.equal(correlator.response(result(5, {}), 'server', get, 10, 4)?.request.tool, 'slow');
  });

  test('a response from the same side that sent the request matches nothing', () => {
    const { correlator, table, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(5, 'ping'), 'client', flow, 10, 0);
    assert.equal(correlator.response(result(5, {}), 'client', flow, 10, 1), undefined);
    assert.equal(table.size, 1);
  });
});

describe('Correlator: server requests answered by the client', () => {
  test('a server request is completed by the client response', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf({ 'mcp-session-id': 's1' });
    correlator.request(request(0, 'sampling/createMessage', { messages: [] }), 'server', flow, 50, 100);
    assert.equal(correlator.response(result(0, {}), 'server', flow, 10, 110), undefined, 'the server does not answer itself');
    const done = correlator.response(result(0, { role: 'assistant', content: { type: 'text', text: 'hi' } }), 'client', flow, 80, 130);
    assert.ok(done);
    assert.equal(done.request.from, 'server');
    assert.equal(done.request.method, 'sampling/createMessage');
    assert.equal(done.outcome, 'result');
    assert.equal(done.durationMs, 30);
    assert.equal(done.responseBytes, 80);
  });

  test('client and server requests with the same id in one scope are distinct', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf({ 'mcp-session-id': 's1' });
    correlator.request(request(1, 'from-client'), 'client', flow, 10, 0);
    correlator.request(request(1, 'from-server'), 'server', flow, 10, 0);
    assert.equal(correlator.response(result(1, {}), 'client', flow, 10, 1)?.request.method, 'from-server');
    assert.equal(correlator.response(result(1, {}), 'server', flow, 10, 1)?.request.method, 'from-client');
  });

  test('a client response does not teach the session anything', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf({ 'mcp-session-id': 's1' });
    correlator.request(request(1, 'tools/list'), 'server', flow, 10, 0);
    correlator.response(result(1, { tools: [{ name: 'x' }] }), 'client', flow, 10, 1);
    assert.equal(flow.session.tools.size, 0);
  });
});

describe('Correlator.abandon', () => {
  test('ends an open request with the given outcome and no response', () => {
    const { correlator, table, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'ping'), 'client', flow, 10, 1000);
    const done = correlator.abandon(flow.scope, 'client', 1, 1500, 'client-closed');
    assert.ok(done);
    assert.equal(done.outcome, 'client-closed');
    assert.equal(done.response, undefined);
    assert.equal(done.responseBytes, 0);
    assert.equal(done.durationMs, 500);
    assert.equal(done.request.method, 'ping');
    assert.equal(table.size, 0);
  });

  test('abandoning twice, an unknown id, or the wrong sender gives undefined', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'ping'), 'client', flow, 10, 0);
    assert.equal(correlator.abandon(flow.scope, 'server', 1, 1, 'no-response'), undefined);
    assert.equal(correlator.abandon(flow.scope, 'client', '1', 1, 'no-response'), undefined);
    assert.equal(correlator.abandon('x:other', 'client', 1, 1, 'no-response'), undefined);
    assert.equal(correlator.abandon(flow.scope, 'client', 1, 1, 'no-response')?.outcome, 'no-response');
    assert.equal(correlator.abandon(flow.scope, 'client', 1, 2, 'no-response'), undefined);
  });

  test('a late response after abandon is an orphan', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'ping'), 'client', flow, 10, 0);
    correlator.abandon(flow.scope, 'client', 1, 1, 'invalid-response');
    assert.equal(correlator.response(result(1, {}), 'server', flow, 10, 2), undefined);
  });
});

describe('Correlator learns session facts', () => {
  const initParams = {
    protocolVersion: '2025-06-18',
    capabilities: { sampling: {}, roots: { listChanged: true } },
    clientInfo: { name: 'test', version: '1' },
  };
  const initResult = {
    protocolVersion: '2025-06-18',
    capabilities: { tools: { listChanged: true }, logging: {} },
    serverInfo: { name: 'srv', version: '1' },
  };

  test('initialize with a newly issued session id creates the sid: session', () => {
    const { correlator, sessions, flowOf } = setup();
    const flow = flowOf({ authorization: 'Bearer t' }, 1, [request(1, 'initialize', initParams)]);
    assert.equal(flow.scope, 'x:1');
    assert.equal(flow.protocolVersion, '2025-06-18', 'initialize declares its proposal');
    correlator.request(request(1, 'initialize', initParams), 'client', flow, 200, 0);
    const done = correlator.response(result(1, initResult), 'server', flow, 300, 40, 'sess-1');
    assert.ok(done);
    assert.equal(done.outcome, 'result');
    assert.equal(done.request.sessionId, 'sess-1');
    assert.equal(done.request.protocolVersion, '2025-06-18');

    const session = sessions.find('sid:sess-1', 41);
    assert.ok(session);
    assert.equal(session.sessionId, 'sess-1');
    assert.equal(session.protocolVersion, '2025-06-18');
    assert.equal(session.era, 'legacy');
    assert.deepEqual(session.serverCapabilities, initResult.capabilities);
    assert.deepEqual(session.clientCapabilities, initParams.capabilities);
    assert.equal(flow.session.protocolVersion, undefined, 'the pre-session entry is not the session');

    // the next request of that session is judged by the negotiated version
    const next = flowOf({ 'mcp-session-id': 'sess-1', 'mcp-protocol-version': '2025-03-26' }, 2, [], 50);
    assert.equal(next.session, session);
    assert.equal(next.protocolVersion, '2025-06-18');
  });

  test('the negotiated version replaces the proposed one on the completed record', () => {
    const { correlator, sessions, flowOf } = setup();
    const proposal = { ...initParams, protocolVersion: '2026-07-28' };
    const flow = flowOf({}, 1, [request(1, 'initialize', proposal)]);
    assert.equal(flow.protocolVersion, '2026-07-28');
    correlator.request(request(1, 'initialize', proposal), 'client', flow, 10, 0);
    const done = correlator.response(result(1, initResult), 'server', flow, 10, 1, 'sess-2');
    assert.equal(done?.request.protocolVersion, '2025-06-18');
    assert.equal(sessions.find('sid:sess-2', 2)?.protocolVersion, '2025-06-18');
  });

  test("initialize without a session id (stateless server) teaches the credential's entry", () => {
    const { correlator, sessions, flowOf } = setup();
    const flow = flowOf({ authorization: 'Bearer t' }, 1);
    correlator.request(request(1, 'initialize', initParams), 'client', flow, 10, 0);
    const done = correlator.response(result(1, { ...initResult, protocolVersion: '2026-07-28' }), 'server', flow, 10, 1);
    assert.equal(done?.request.sessionId, undefined);
    assert.equal(done?.request.protocolVersion, '2026-07-28');
    const anon = sessions.find(sessionKey(undefined, 'Bearer t'), 2);
    assert.equal(anon, flow.session);
    assert.equal(anon?.protocolVersion, '2026-07-28');
    assert.equal(anon?.era, 'modern');
    assert.deepEqual(anon?.serverCapabilities, initResult.capabilities);
  });

  test('an initialize error teaches nothing', () => {
    const { correlator, sessions, flowOf } = setup();
    const flow = flowOf({}, 1);
    correlator.request(request(1, 'initialize', initParams), 'client', flow, 10, 0);
    const done = correlator.response(error(1, -32602, 'Unsupported protocol version'), 'server', flow, 10, 1, 'sess-x');
    assert.equal(done?.outcome, 'error:-32602');
    assert.equal(sessions.find('sid:sess-x', 2), undefined);
    assert.equal(flow.session.protocolVersion, undefined);
  });

  test('tools/list: the first page then a cursor page fill the catalogue; a new first page replaces it', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf({ 'mcp-session-id': 's1' });
    correlator.request(request(1, 'tools/list'), 'client', flow, 10, 0);
    correlator.response(
      result(1, {
        tools: [
          { name: 'a', inputSchema: { type: 'object' } },
          { name: 'b', inputSchema: {} },
        ],
        nextCursor: 'c1',
      }),
      'server',
      flow,
      10,
      1,
    );
    assert.deepEqual([...flow.session.tools.keys()], ['a', 'b']);
    assert.equal(flow.session.toolsComplete, false, 'a nextCursor means more pages');
    correlator.request(request(2, 'tools/list', { cursor: 'c1' }), 'client', flow, 10, 2);
    correlator.response(result(2, { tools: [{ name: 'c', inputSchema: { type: 'object' } }] }), 'server', flow, 10, 3);
    assert.deepEqual([...flow.session.tools.keys()], ['a', 'b', 'c']);
    assert.deepEqual(flow.session.tools.get('a')?.inputSchema, { type: 'object' });
    assert.equal(flow.session.toolsComplete, true, 'the page without nextCursor was the last');

    correlator.request(request(3, 'tools/list', {}), 'client', flow, 10, 4);
    correlator.response(result(3, { tools: [{ name: 'z' }] }), 'server', flow, 10, 5);
    assert.deepEqual([...flow.session.tools.keys()], ['z']);
  });

  test('a tools/list error leaves the catalogue alone', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf({ 'mcp-session-id': 's1' });
    correlator.request(request(1, 'tools/list'), 'client', flow, 10, 0);
    correlator.response(result(1, { tools: [{ name: 'a' }] }), 'server', flow, 10, 1);
    correlator.request(request(2, 'tools/list'), 'client', flow, 10, 2);
    correlator.response(error(2, -32603), 'server', flow, 10, 3);
    assert.deepEqual([...flow.session.tools.keys()], ['a']);
  });

  test('server/discover records the server capabilities', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf({ authorization: 'Bearer t' });
    correlator.request(request(1, 'server/discover'), 'client', flow, 10, 0);
    correlator.response(
      result(1, { capabilities: { tools: {}, prompts: { listChanged: true } }, supportedVersions: ['2026-07-28'] }),
      'server',
      flow,
      10,
      1,
    );
    assert.deepEqual(flow.session.serverCapabilities, { tools: {}, prompts: { listChanged: true } });
  });

  test('other methods teach nothing', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf();
    correlator.request(request(1, 'resources/list'), 'client', flow, 10, 0);
    correlator.response(
      result(1, { tools: [{ name: 'a' }], capabilities: { x: {} }, protocolVersion: '2025-06-18' }),
      'server',
      flow,
      10,
      1,
    );
    assert.equal(flow.session.tools.size, 0);
    assert.equal(flow.session.serverCapabilities, undefined);
    assert.equal(flow.session.protocolVersion, undefined);
  });
});

describe('Correlator.request records the flow', () => {
  test('session id, protocol version and tool name are copied onto the open request', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf({ 'mcp-session-id': 's9', 'mcp-protocol-version': '2025-11-25' });
    correlator.request(request(1, 'tools/call', { name: 'search', arguments: { q: 1 } }), 'client', flow, 77, 10);
    const done = correlator.abandon(flow.scope, 'client', 1, 20, 'no-response');
    assert.ok(done);
    assert.equal(done.request.sessionId, 's9');
    assert.equal(done.request.protocolVersion, '2025-11-25');
    assert.equal(done.request.tool, 'search');
    assert.deepEqual(done.request.params, { name: 'search', arguments: { q: 1 } });
    assert.equal(done.request.requestBytes, 77);
  });
});

describe('Correlator.request keeps the HTTP request headers', () => {
  test('a client request carries the headers of its HTTP request; a server request carries none', () => {
    const { correlator, flowOf } = setup();
    const headers: IncomingHttpHeaders = { 'mcp-session-id': 's1', authorization: 'Bearer t', 'user-agent': 'ua' };
    const flow = flowOf(headers);
    assert.equal(flow.requestHeaders, headers);
    correlator.request(request(1, 'ping'), 'client', flow, 10, 0);
    correlator.request(request(2, 'roots/list'), 'server', flow, 10, 0);
    assert.equal(correlator.abandon(flow.scope, 'client', 1, 1, 'no-response')?.request.headers, headers);
    assert.deepEqual(correlator.abandon(flow.scope, 'server', 2, 1, 'no-response')?.request.headers, {});
  });
});

describe('RequestTable', () => {
  const open = (id: JsonRpcId, scope = 'x:1', from: 'client' | 'server' = 'client'): OpenRequest => ({
    scope,
    from,
    id,
    method: `m${String(id)}`,
    tool: undefined,
    params: undefined,
    sessionId: undefined,
    protocolVersion: undefined,
    startedAt: 0,
    requestBytes: 0,
    headers: {},
    verdict: NO_VERDICT,
  });

  test('requestKey keeps scope, sender and id type apart', () => {
    const keys = new Set([
      requestKey('x:1', 'client', 1),
      requestKey('x:1', 'client', '1'),
      requestKey('x:1', 'server', 1),
      requestKey('x:2', 'client', 1),
    ]);
    assert.equal(keys.size, 4);
  });

  test('one id in flight on two POSTs: each POST takes its own; a stream of the session takes the oldest; the same POST twice replaces', () => {
    const { table, unanswered } = setup({});
    const onA = { ...open(7), exchange: 1, method: 'a' };
    const onB = { ...open(7), exchange: 2, method: 'b' };
    table.add(onA, 0);
    table.add(onB, 1);
    assert.equal(unanswered.length, 0, 'another POST reusing the id replaces nothing');
    assert.equal(table.size, 2);
    assert.equal(table.peek('x:1', 'client', 7, undefined, 2), onB);
    assert.equal(table.peek('x:1', 'client', 7, undefined, 3), undefined, 'a third POST answers neither');
    assert.equal(table.take('x:1', 'client', 7), onA, 'a GET stream answers the oldest');
    assert.equal(table.take('x:1', 'client', 7, undefined, 2), onB);
    assert.equal(table.size, 0);
    table.add({ ...open(8), exchange: 3 }, 2);
    table.add({ ...open(8), exchange: 3, method: 'again' }, 3);
    assert.deepEqual(
      unanswered.map((u) => u.why),
      ['replaced'],
      'an id twice in one POST (a batch) replaces',
    );
    assert.equal(table.take('x:1', 'client', 8, undefined, 3)?.method, 'again');
  });

  test('past capacity the oldest open request is reported unanswered with "capacity"', () => {
    const { table, unanswered } = setup({ maxOpen: 2 });
    const a = open(1);
    table.add(a, 0);
    table.add(open(2), 1);
    assert.equal(unanswered.length, 0);
    table.add(open(3), 2);
    assert.equal(unanswered.length, 1);
    assert.equal(unanswered[0]!.req, a);
    assert.equal(unanswered[0]!.why, 'capacity');
    assert.equal(table.size, 2);
    assert.equal(table.take('x:1', 'client', 1), undefined);
    assert.equal(table.take('x:1', 'client', 2)?.method, 'm2');
  });

  test("past its own bound a session loses its oldest request, and nobody else's", () => {
    const unanswered: OpenRequest[] = [];
    const table = new RequestTable(100, 60_000, (req) => unanswered.push(req), 3);
    const other = { ...open(1, 'sid:calm'), owner: 'sid:calm' };
    table.add(other, 0);
    for (let i = 0; i < 10; i++) table.add({ ...open(i, 'sid:flood'), owner: 'sid:flood' }, i);
    assert.deepEqual(
      unanswered.map((r) => r.id),
      [0, 1, 2, 3, 4, 5, 6],
    );
    assert.equal(table.size, 4);
    assert.equal(table.take('sid:calm', 'client', 1), other);
  });

  test('a deadline gives a request up as client-closed unless it is answered first', () => {
    const { table, unanswered } = setup();
    table.add(open(1), 0);
    table.add(open(2), 0);
    table.deadline('x:1', 'client', 1, 100, 'client-closed');
    table.deadline('x:1', 'client', 2, 100, 'client-closed');
    assert.ok(table.take('x:1', 'client', 2), 'answered in time');
    table.sweep(99);
    assert.equal(unanswered.length, 0);
    table.sweep(100);
    assert.deepEqual(
      unanswered.map((u) => [u.req.id, u.why]),
      [[1, 'client-closed']],
    );
    assert.equal(table.size, 0);
  });

  test('a full table evicts from the busiest owner first', () => {
    const unanswered: OpenRequest[] = [];
    const table = new RequestTable(5, 60_000, (req) => unanswered.push(req));
    const calm = { ...open('c', 'sid:calm'), owner: 'sid:calm' };
    table.add(calm, 0);
    for (let i = 0; i < 8; i++) table.add({ ...open(i, 'sid:flood'), owner: 'sid:flood' }, i + 1);
    assert.equal(table.size, 5);
    assert.ok(!unanswered.includes(calm));
    assert.equal(table.take('sid:calm', 'client', 'c'), calm);
    assert.deepEqual(
      unanswered.map((r) => r.id),
      [0, 1, 2, 3],
    );
  });

  test('an id reused while its request is still open reports the old request as "replaced"', () => {
    const { table, unanswered } = setup();
    const first = open(1);
    table.add(first, 0);
    table.add(open(1), 1);
    assert.deepEqual(
      unanswered.map((u) => [u.req, u.why]),
      [[first, 'replaced']],
    );
    assert.equal(table.size, 1);
  });

  test('the Correlator reports requests evicted for capacity, and their late answers are orphans', () => {
    const { correlator, unanswered, flowOf } = setup({ maxOpen: 1 });
    const flow = flowOf();
    correlator.request(request(1, 'first'), 'client', flow, 10, 0);
    correlator.request(request(2, 'second'), 'client', flow, 10, 1);
    assert.deepEqual(
      unanswered.map((u) => [u.req.method, u.why]),
      [['first', 'capacity']],
    );
    assert.equal(correlator.response(result(1, {}), 'server', flow, 10, 2), undefined);
  });

  test('sweep reports idle requests with "idle"', () => {
    const { table, unanswered } = setup({ idleMs: 100 });
    table.add(open(1), 0);
    table.add(open(2), 80);
    table.sweep(150);
    assert.deepEqual(
      unanswered.map((u) => [u.req.id, u.why]),
      [[1, 'idle']],
    );
    assert.equal(table.size, 1);
  });

  test('take removes exactly the matching request', () => {
    const { table } = setup();
    table.add(open(1, 'x:1', 'client'), 0);
    table.add(open(1, 'x:1', 'server'), 0);
    assert.equal(table.take('x:1', 'server', 1)?.from, 'server');
    assert.equal(table.take('x:1', 'server', 1), undefined);
    assert.equal(table.take('x:1', 'client', 1)?.from, 'client');
    assert.equal(table.size, 0);
  });
});

describe('outcomeOf', () => {
  test('every kind of response', () => {
    assert.equal(outcomeOf(undefined), 'no-response');
    assert.equal(outcomeOf(result(1, {})), 'result');
    assert.equal(outcomeOf(result(1, null)), 'result');
    assert.equal(outcomeOf(result(1, [{ isError: true }])), 'result');
    assert.equal(outcomeOf(result(1, { isError: false })), 'result');
    assert.equal(outcomeOf(result(1, { isError: 'true' })), 'result');
    assert.equal(outcomeOf(result(1, { isError: true })), 'isError');
    assert.equal(outcomeOf(error(1, -32602)), 'error:-32602');
    assert.equal(outcomeOf(error(1, 0)), 'error:0');
    assert.equal(outcomeOf(error(1, 'E_BAD')), 'error:E_BAD');
    assert.match(outcomeOf(classify({ jsonrpc: '2.0', id: 1, error: {} })), /^error:/);
    assert.equal(outcomeOf(classify({ jsonrpc: '2.0', id: 1, error: 'x' })), 'invalid-response');
    assert.equal(outcomeOf(classify('garbage')), 'invalid-response');
  });
});

describe('declaredVersion', () => {
  const META_KEY = 'io.modelcontextprotocol/protocolVersion';

  test('a modern request declares its version in _meta', () => {
    assert.equal(declaredVersion(request(1, 'tools/list', { _meta: { [META_KEY]: '2026-07-28' } })), '2026-07-28');
    assert.equal(declaredVersion(notification('notifications/cancelled', { _meta: { [META_KEY]: '2026-07-28' } })), '2026-07-28');
  });

  test('initialize declares its proposal in params.protocolVersion', () => {
    assert.equal(declaredVersion(request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {} })), '2025-06-18');
  });

  test('_meta wins over the initialize proposal', () => {
    assert.equal(
      declaredVersion(request(1, 'initialize', { protocolVersion: '2025-06-18', _meta: { [META_KEY]: '2026-07-28' } })),
      '2026-07-28',
    );
  });

  test('nothing declared gives undefined', () => {
    assert.equal(declaredVersion(request(1, 'tools/list')), undefined);
    assert.equal(declaredVersion(request(1, 'tools/list', { protocolVersion: '2025-06-18' })), undefined, 'only initialize proposes');
    assert.equal(
      declaredVersion(request(1, 'tools/list', { _meta: { protocolVersion: '2026-07-28' } })),
      undefined,
      'the key is namespaced',
    );
    assert.equal(declaredVersion(request(1, 'tools/list', { _meta: { [META_KEY]: 20260728 } })), undefined);
    assert.equal(declaredVersion(request(1, 'tools/list', { _meta: [] })), undefined);
    assert.equal(declaredVersion(request(1, 'initialize', { protocolVersion: 1 })), undefined);
    assert.equal(declaredVersion(request(1, 'initialize', ['2025-06-18'])), undefined);
    assert.equal(declaredVersion(notification('initialize', null)), undefined);
  });

  test('responses declare nothing, even when they carry a version', () => {
    assert.equal(declaredVersion(result(1, { protocolVersion: '2025-06-18', _meta: { [META_KEY]: '2026-07-28' } })), undefined);
    assert.equal(declaredVersion(error(1, -1)), undefined);
    assert.equal(declaredVersion(classify(null)), undefined);
  });
});

describe('toolName', () => {
  test('only tools/call with a string name has one', () => {
    assert.equal(toolName('tools/call', { name: 'echo', arguments: {} }), 'echo');
    assert.equal(toolName('tools/call', { name: '' }), '');
    assert.equal(toolName('tools/list', { name: 'echo' }), undefined);
    assert.equal(toolName('tools/call', { name: 5 }), undefined);
    assert.equal(toolName('tools/call', {}), undefined);
    assert.equal(toolName('tools/call', null), undefined);
    assert.equal(toolName('tools/call', undefined), undefined);
    assert.equal(toolName('tools/call', ['echo']), undefined);
  });
});

describe('resolveFlow', () => {
  const META_KEY = 'io.modelcontextprotocol/protocolVersion';
  const modern = (id: JsonRpcId, v = '2026-07-28') => request(id, 'tools/list', { _meta: { [META_KEY]: v } });

  test("without Mcp-Session-Id the scope is the exchange and the session is the credential's", () => {
    const { sessions } = setup();
    const flow = resolveFlow({ authorization: 'Bearer a' }, [], sessions, 7, 0);
    assert.equal(flow.scope, 'x:7');
    assert.equal(flow.sessionId, undefined);
    assert.equal(flow.session.key, sessionKey(undefined, 'Bearer a'));
    assert.equal(flow.protocolVersion, undefined);
    // Remembered once the server answered on it; then the same credential finds it again.
    assert.equal(sessions.size, 0);
    sessions.keep(flow.session, 0);
    assert.equal(resolveFlow({ authorization: 'Bearer a' }, [], sessions, 8, 1).session, flow.session);
    assert.notEqual(resolveFlow({ authorization: 'Bearer b' }, [], sessions, 9, 1).session, flow.session);
  });

  test("with Mcp-Session-Id the scope and the session are the session's", () => {
    const { sessions } = setup();
    const flow = resolveFlow({ 'mcp-session-id': 'abc', authorization: 'Bearer a' }, [], sessions, 7, 0);
    assert.equal(flow.scope, 'sid:abc');
    assert.equal(flow.sessionId, 'abc');
    assert.equal(flow.session.key, 'sid:abc');
    assert.equal(flow.session.sessionId, 'abc');
    // A session id the server never issued is not remembered.
    assert.equal(sessions.find('sid:abc', 1), undefined);
  });

  test("a session is remembered only from a server's answer on it, never from a client's id", () => {
    const { sessions, correlator } = setup();
    for (let i = 0; i < 50; i++) resolveFlow({ 'mcp-session-id': `forged-${i}` }, [], sessions, i, 0);
    assert.equal(sessions.size, 0);
    const flow = resolveFlow({ 'mcp-session-id': 'issued' }, [], sessions, 99, 0);
    correlator.request(request(1, 'tools/list'), 'client', flow, 10, 0);
    correlator.response(result(1, { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }), 'server', flow, 10, 1);
    assert.equal(sessions.size, 1);
    assert.ok(resolveFlow({ 'mcp-session-id': 'issued' }, [], sessions, 100, 2).session.tools.has('echo'));
  });

  test("1: a legacy session's negotiated version beats the message and the header", () => {
    const { sessions } = setup();
    sessions.setVersion(sessions.open('sid:abc', 'abc', 0), '2025-06-18');
    const flow = resolveFlow({ 'mcp-session-id': 'abc', 'mcp-protocol-version': '2025-03-26' }, [modern(1)], sessions, 1, 1);
    assert.equal(flow.protocolVersion, '2025-06-18');
  });

  test('2: a session not (yet) negotiated falls back to what the message declares', () => {
    const { sessions } = setup();
    const flow = resolveFlow({ 'mcp-session-id': 'new', 'mcp-protocol-version': '2025-03-26' }, [modern(1)], sessions, 1, 1);
    assert.equal(flow.protocolVersion, '2026-07-28');
  });

  test("2: without a session, the message beats the header and the credential's entry", () => {
    const { sessions } = setup();
    sessions.setVersion(sessions.open(sessionKey(undefined, 'Bearer a'), undefined, 0), '2025-06-18');
    const flow = resolveFlow({ authorization: 'Bearer a', 'mcp-protocol-version': '2025-11-25' }, [modern(1)], sessions, 1, 1);
    assert.equal(flow.protocolVersion, '2026-07-28');
  });

  test('2: the first message that declares a version counts', () => {
    const { sessions } = setup();
    const flow = resolveFlow(
      {},
      [request(1, 'ping'), notification('notifications/initialized'), modern(2, '2026-07-28'), modern(3, '2099-01-01')],
      sessions,
      1,
      0,
    );
    assert.equal(flow.protocolVersion, '2026-07-28');
    const init = resolveFlow({}, [request(1, 'initialize', { protocolVersion: '2025-03-26' })], sessions, 2, 0);
    assert.equal(init.protocolVersion, '2025-03-26');
  });

  test("3: the MCP-Protocol-Version header beats the credential's negotiated version", () => {
    const { sessions } = setup();
    sessions.setVersion(sessions.open(sessionKey(undefined, 'Bearer a'), undefined, 0), '2025-06-18');
    const flow = resolveFlow({ authorization: 'Bearer a', 'mcp-protocol-version': '2025-11-25' }, [request(1, 'ping')], sessions, 1, 1);
    assert.equal(flow.protocolVersion, '2025-11-25');
  });

  test('3: the header counts for a session that has not negotiated', () => {
    const { sessions } = setup();
    const flow = resolveFlow({ 'mcp-session-id': 'new', 'mcp-protocol-version': '2025-11-25' }, [request(1, 'ping')], sessions, 1, 1);
    assert.equal(flow.protocolVersion, '2025-11-25');
  });

  test('4: with nothing else, what a stateless server negotiated for this credential', () => {
    const { sessions } = setup();
    sessions.setVersion(sessions.open(sessionKey(undefined, 'Bearer a'), undefined, 0), '2025-06-18');
    assert.equal(resolveFlow({ authorization: 'Bearer a' }, [request(1, 'ping')], sessions, 1, 1).protocolVersion, '2025-06-18');
    assert.equal(resolveFlow({ authorization: 'Bearer b' }, [request(1, 'ping')], sessions, 2, 1).protocolVersion, undefined);
  });

  test('a repeated header counts by its first value', () => {
    const { sessions } = setup();
    const flow = resolveFlow({ 'mcp-protocol-version': ['2025-11-25', '2025-03-26'] } as IncomingHttpHeaders, [], sessions, 1, 0);
    assert.equal(flow.protocolVersion, '2025-11-25');
  });
});

describe('Correlator: notifications', () => {
  test('tools/list_changed from the server makes the catalogue stale', () => {
    const { correlator, flowOf } = setup();
    const flow = flowOf({ 'mcp-session-id': 'S' });
    flow.session.toolsComplete = true;
    correlator.notification(notification('notifications/tools/list_changed') as Extract<Message, { kind: 'notification' }>, 'client', flow);
    assert.equal(flow.session.toolsComplete, true, "a client cannot change the server's list");
    correlator.notification(notification('notifications/tools/list_changed') as Extract<Message, { kind: 'notification' }>, 'server', flow);
    assert.equal(flow.session.toolsComplete, false);
  });
});

describe("Correlator: a fleet's claims on request ids (exchange/claims.ts)", () => {
  /** A book whose store answers each key with `answer(key)`, and the keys it was asked and released. */
  function fleet(answer: (key: string) => 'mine' | 'theirs') {
    const asked: string[] = [];
    const released: string[] = [];
    const book = new ClaimBook(async (keys) =>
      keys.map((key) => {
        asked.push(key);
        return answer(key) === 'theirs'
          ? { taken: true, release: undefined }
          : { taken: false, release: async () => void released.push(key) };
      }),
    );
    return { book, asked, released };
  }
  const SESSION = { 'mcp-session-id': 's-1' };

  test('an id another replica holds is in flight; one this replica claims is released once, when its request leaves the table', async () => {
    const { correlator, flowOf, unanswered } = setup({ idleMs: 100 });
    const { book, asked, released } = fleet((key) => (key === requestKey('sid:s-1', 'client', 2) ? 'theirs' : 'mine'));
    correlator.claims = book;
    const messages = [request(1, 'tools/call', { name: 'a' }), request(2, 'tools/call', { name: 'b' }), notification('notifications/x')];
    await book.claim('s-1', messages);
    assert.deepEqual(
      asked,
      [requestKey('sid:s-1', 'client', 1), requestKey('sid:s-1', 'client', 2)],
      'requests only, in the session scope',
    );
    const flow = flowOf(SESSION);
    const one = correlator.open(correlator.draft(messages[0] as Request, 'client', flow, 10, 0), NO_VERDICT, 0);
    const two = correlator.open(correlator.draft(messages[1] as Request, 'client', flow, 10, 0), NO_VERDICT, 0);
    assert.equal(one.idInFlight, false);
    assert.equal(two.idInFlight, true, 'held by another replica');
    assert.ok(correlator.response(result(1, {}), 'server', flow, 10, 5));
    assert.deepEqual(released, [requestKey('sid:s-1', 'client', 1)], 'released with its answer');
    assert.ok(correlator.response(result(2, {}), 'server', flow, 10, 5));
    assert.deepEqual(released, [requestKey('sid:s-1', 'client', 1)], 'what was not claimed here is not released');
    assert.deepEqual(unanswered, []);
  });

  test('a claimed request given up (idle) releases its claim; a message drafted again finds no claim left', async () => {
    const { correlator, table, flowOf, unanswered } = setup({ idleMs: 100 });
    const { book, released } = fleet(() => 'mine');
    correlator.claims = book;
    const msg = request(9, 'ping');
    await book.claim('s-1', [msg]);
    correlator.open(correlator.draft(msg, 'client', flowOf(SESSION), 10, 0), NO_VERDICT, 0);
    table.sweep(1000);
    assert.equal(unanswered[0]?.why, 'idle');
    assert.deepEqual(released, [requestKey('sid:s-1', 'client', 9)]);
    assert.equal(book.take(msg), undefined, 'taken by its draft');
  });
});

test("a fleet's claim stays held while another request of this process under the same id is open", async () => {
  const { correlator, flowOf } = setup();
  let claims = 0;
  const released: number[] = [];
  // The first claim is this process's; the second finds it taken (by the first, here).
  const book = new ClaimBook(async (keys) =>
    keys.map(() => {
      const n = ++claims;
      return n === 1 ? { taken: false, release: async () => void released.push(n) } : { taken: true, release: undefined };
    }),
  );
  correlator.claims = book;
  const first = request(5, 'tools/call', { name: 'a' });
  const second = request(5, 'tools/call', { name: 'a' });
  await book.claim('s-1', [first]);
  await book.claim('s-1', [second]);
  const one = flowOf({ 'mcp-session-id': 's-1' }, 1);
  const two = flowOf({ 'mcp-session-id': 's-1' }, 2);
  one.exchange = 1;
  two.exchange = 2;
  correlator.open(correlator.draft(first, 'client', one, 10, 0), NO_VERDICT, 0);
  const dup = correlator.open(correlator.draft(second, 'client', two, 10, 0), NO_VERDICT, 0);
  assert.equal(dup.idInFlight, true);
  assert.ok(correlator.response(result(5, {}), 'server', one, 10, 5));
  assert.deepEqual(released, [], 'the second is still open: the claim holds');
  assert.ok(correlator.response(result(5, {}), 'server', two, 10, 6));
  assert.deepEqual(released, [1], 'released with the last of them');
});

test("a request replacing one of the same POST under the same id takes over that one's claim", async () => {
  const { correlator, flowOf, unanswered } = setup();
  const released: string[] = [];
  let claims = 0;
  const book = new ClaimBook(async (keys) =>
    keys.map(() =>
      ++claims === 1 ? { taken: false, release: async () => void released.push('first') } : { taken: true, release: undefined },
    ),
  );
  correlator.claims = book;
  const batch = [request(6, 'ping'), request(6, 'ping')];
  await book.claim('s-1', batch);
  const flow = flowOf({ 'mcp-session-id': 's-1' }, 1);
  flow.exchange = 1;
  for (const msg of batch) correlator.open(correlator.draft(msg as Request, 'client', flow, 10, 0), NO_VERDICT, 0);
  assert.equal(unanswered[0]?.why, 'replaced');
  assert.deepEqual(released, [], 'the claim went to the request that replaced it');
  assert.ok(correlator.response(result(6, {}), 'server', flow, 10, 5));
  assert.deepEqual(released, ['first']);
});
