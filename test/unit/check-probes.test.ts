// The check's probes as data: ids and rules that exist, requests built the way each era's client
// sends them, argument plans that never call a destructive tool nor send arguments that could
// succeed, and expectations that say what differs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argumentPlans, type ArgumentPlan } from '../../src/check/arguments.ts';
import { fixOf } from '../../src/check/exec.ts';
import { gotText, wantError, wantRejected, type Answer } from '../../src/check/expect.ts';
import { rpc, type ProbeContext } from '../../src/check/probe.ts';
import { DISCOVER, INITIALIZE, PROBES } from '../../src/check/probes.ts';
import { classify } from '../../src/codec/jsonrpc.ts';
import type { Tool } from '../../src/exchange/sessions.ts';
import { RULES } from '../../src/rules/index.ts';
import { validateArguments } from '../../src/rules/tool-arguments.ts';

const TOOL_LIST = [
  {
    name: 'wipe',
    annotations: { destructiveHint: true },
    inputSchema: { type: 'object', properties: { what: { type: 'string' }, force: { type: 'boolean' } }, required: ['what'] },
  },
  {
    name: 'search',
    annotations: { readOnlyHint: true },
    inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  },
  {
    name: 'send',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, body: { type: 'string' }, cc: { type: ['string', 'null'] } },
      required: ['to', 'body'],
    },
  },
  { name: 'now', annotations: { readOnlyHint: true }, inputSchema: { type: 'object', properties: { tz: { type: 'string' } } } },
];

function context(over: Partial<ProbeContext> = {}): ProbeContext {
  const list = over.toolList ?? TOOL_LIST;
  const tools = new Map<string, Tool>(
    list.map((t) => [(t as Tool).name, { name: (t as Tool).name, inputSchema: (t as Tool).inputSchema }]),
  );
  return {
    version: '2025-11-25',
    era: 'legacy',
    sessionId: 'sid-1',
    capabilities: { tools: {} },
    tools,
    toolList: list,
    toolCalls: true,
    safeTools: [],
    tag: 'abcd1234',
    id: 7,
    clientVersion: '9.9.9',
    ...over,
  };
}

test('probe ids are unique and every rule a probe names is in the catalogue', () => {
  const all = [DISCOVER, INITIALIZE, ...PROBES];
  assert.equal(new Set(all.map((p) => p.id)).size, all.length);
  const ids = new Set(RULES.map((r) => r.id));
  for (const p of all) for (const r of p.rules) assert.ok(ids.has(r), `${p.id}: unknown rule ${r}`);
});

test('a 2026-07-28 request: _meta in the body, the headers mirroring it', () => {
  const req = rpc(context({ version: '2026-07-28', era: 'modern', sessionId: undefined }), 'tools/call', {
    name: 'search',
    arguments: { q: 'x' },
  });
  const body = JSON.parse(req.body) as { id: number; params: { _meta: Record<string, unknown> } };
  assert.equal(body.id, 7);
  assert.deepEqual(body.params._meta, {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-warden', version: '9.9.9' },
  });
  assert.deepEqual(req.headers, {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'tools/call',
    'mcp-name': 'search',
  });
  const note = rpc(context({ version: '2026-07-28', era: 'modern' }), 'notifications/cancelled', { requestId: 1 }, { notification: true });
  assert.deepEqual([JSON.parse(note.body).id, JSON.parse(note.body).params._meta, note.id], [undefined, undefined, undefined]);
});

test('a legacy request: the session id, and MCP-Protocol-Version from 2025-06-18 on; a header can be dropped', () => {
  assert.deepEqual(rpc(context(), 'ping').headers, {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
    'mcp-session-id': 'sid-1',
    'mcp-protocol-version': '2025-11-25',
  });
  assert.equal(rpc(context({ version: '2025-03-26' }), 'ping').headers['mcp-protocol-version'], undefined);
  assert.equal(rpc(context(), 'ping', {}, { headers: { 'Mcp-Session-Id': '' } }).headers['mcp-session-id'], undefined);
  assert.equal(rpc(context(), 'ping', {}, { headers: { Accept: 'text/html' } }).headers.accept, 'text/html');
});

const plan = (p: ArgumentPlan | { skip: string }): ArgumentPlan => {
  assert.ok(!('skip' in p), 'skip' in p ? p.skip : '');
  return p;
};

test('argument plans: read-only first, never a destructive tool, a required argument always left out', () => {
  // The read-only tool first: its lone required property may be sent with the wrong type.
  const { type, missing } = argumentPlans(context());
  assert.deepEqual([plan(type).tool, plan(missing).tool], ['search', 'search']);
  assert.deepEqual([plan(type).arguments, plan(missing).arguments], [{ q: { 'mcp-warden': 'deliberately the wrong type' } }, {}]);
  // Any other tool: the wrong type on one property, another required one left out.
  const other = argumentPlans(context({ toolList: [TOOL_LIST[0]!, TOOL_LIST[2]!] }));
  assert.deepEqual(plan(other.type).arguments, { to: { 'mcp-warden': 'deliberately the wrong type' } });
  assert.match(plan(other.type).why, /^"to" is not of type "string"; required "body" missing$/);
  for (const p of [plan(type), plan(missing), plan(other.type), plan(other.missing)])
    assert.equal(validateArguments(p.inputSchema, p.arguments, '2025-11-25')?.valid, false);
  // No tool with a required property to leave out, none read-only: nothing is called.
  const none = argumentPlans(context({ toolList: [TOOL_LIST[0]!, TOOL_LIST[3]!] }));
  assert.ok('skip' in none.type && /--safe-tool/.test(none.type.skip));
});

test('--safe-tool: only those tools, destructive ones included; --no-tool-calls: none', () => {
  const safe = argumentPlans(context({ safeTools: ['wipe'] }));
  assert.deepEqual([plan(safe.type).tool, plan(safe.missing).tool], ['wipe', 'wipe']);
  const unknown = argumentPlans(context({ safeTools: ['nope'] }));
  assert.ok('skip' in unknown.type && /--safe-tool \(nope\)/.test(unknown.type.skip));
  const off = argumentPlans(context({ toolCalls: false }));
  assert.deepEqual(off, {
    type: { skip: 'tool calls are off (--no-tool-calls)' },
    missing: { skip: 'tool calls are off (--no-tool-calls)' },
  });
});

function answer(over: Partial<Answer> = {}): Answer {
  return {
    status: 200,
    contentType: 'application/json',
    headers: {},
    bytes: 10,
    truncated: false,
    failure: undefined,
    response: undefined,
    error: undefined,
    result: undefined,
    bodyProblem: undefined,
    messages: [],
    ...over,
  };
}
const error = (code: number, message = 'x', id: number | null = 1) =>
  classify({ jsonrpc: '2.0', id, error: { code, message } }) as Extract<ReturnType<typeof classify>, { kind: 'error' }>;

test('expectations: what differs, how severe', () => {
  const x = wantError({ codes: [-32601], statuses: [404], text: 't', fix: 'f' });
  assert.deepEqual(x.check(answer({ status: 404, error: error(-32601) })), []);
  assert.deepEqual(
    x.check(answer({ status: 200, error: error(-32601) })).map((r) => [r.pointer, r.severity ?? 'error']),
    [['/status', 'error']],
  );
  assert.deepEqual(
    x.check(answer({ status: 200, error: error(-32000) })).map((r) => r.pointer),
    ['/response/error/code', '/status'],
  );
  const resultOnly = x.check(answer({ result: { content: [] } }));
  assert.deepEqual(
    resultOnly.map((r) => r.pointer),
    ['/response/result'],
    'no error at all: one finding, not one per field',
  );
  const rejected = wantRejected({ text: 't', fix: 'f', preferred: 403 });
  assert.deepEqual(rejected.check(answer({ status: 403 })), []);
  assert.deepEqual(
    rejected.check(answer({ status: 400 })).map((r) => r.severity),
    ['warning'],
  );
  assert.deepEqual(
    rejected.check(answer({ status: 200 })).map((r) => r.severity ?? 'error'),
    ['error'],
  );
});

test('what came back, in one line', () => {
  assert.equal(
    gotText(answer({ status: 404, error: error(-32601, 'Method not found'), response: undefined })),
    'HTTP 404, error -32601 "Method not found" (id null)',
  );
  assert.equal(gotText(answer({ status: 202, bytes: 0 })), 'HTTP 202, no body');
  assert.equal(
    gotText(answer({ status: 500, contentType: 'text/html', bodyProblem: { problem: 'html', excerpt: '<html>' } })),
    'HTTP 500, an HTML page (text/html)',
  );
  assert.equal(gotText(answer({ status: undefined, failure: { reason: 'timeout', detail: 'x' } })), 'no answer (timed out)');
  assert.equal(
    gotText(answer({ status: 302, headers: { location: 'https://login.example/' } })),
    'HTTP 302, redirect to https://login.example/ (not followed)',
  );
});

test('the one-line fix: an error of a rule aimed at the probe first', () => {
  const f = (rule: string, severity: 'error' | 'warning', fix: string) => ({ rule, severity, message: '', pointer: '', evidence: '', fix });
  assert.equal(
    fixOf(
      [f('legacy-range-code', 'warning', 'w'), f('reserved-code', 'error', 'e1'), f('unknown-method-status', 'error', 'e2')],
      ['unknown-method-status'],
    ),
    'e2',
  );
  assert.equal(fixOf([f('legacy-range-code', 'warning', 'w')], []), 'w');
  assert.equal(fixOf([], []), undefined);
});
