// The modern era's per-request rules (2026-07-28): each fires on its one misbehaviour, stays
// silent on good modern traffic, and stays silent on the same traffic under a legacy version.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MODERN_PROTOCOL_RULES } from '../../src/rules/protocol-modern.ts';
import {
  assertFires,
  assertSilent,
  runScenario,
  type Scenario,
  type ScenarioRequest,
  type ScenarioResult,
} from '../helpers/rule-scenario.ts';
import type { LogRecord } from '../helpers/log-capture.ts';

type Respond = Scenario['respond'];

interface Row {
  name: string;
  version?: string;
  request: ScenarioRequest;
  respond: Respond;
  fires?: string;
  severity?: 'error' | 'warning';
  /** How many findings the rule must report (default: at least one). */
  count?: number;
  silent?: string[];
  check?: (v: LogRecord, r: ScenarioResult) => void;
}

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const hints = { ttlMs: 0, cacheScope: 'private' };

const call: ScenarioRequest = { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };
const callResult = { resultType: 'complete', content: [{ type: 'text', text: 'hi' }] };
const withCaps = (req: ScenarioRequest, caps: unknown): ScenarioRequest => ({ ...req, params: { ...req.params, _meta: { [CAPS]: caps } } });
const withHeaders = (req: ScenarioRequest, headers: Record<string, string>): ScenarioRequest => ({ ...req, headers });

const result =
  (value: unknown, headers?: Record<string, string>): Respond =>
  (req) => ({ ...(headers ? { headers } : {}), json: { jsonrpc: '2.0', id: req?.id, result: value } });
const notFound: Respond = (req) => ({
  status: 404,
  json: { jsonrpc: '2.0', id: req?.id, error: { code: -32601, message: 'Method not found' } },
});
const accepted: Respond = () => ({ status: 202 });
const elicit = { method: 'elicitation/create', params: { message: 'Which?', requestedSchema: { type: 'object', properties: {} } } };

const rows: Row[] = [
  // result-type-missing / result-type-unknown
  {
    name: 'result-type-missing fires on a result without resultType',
    request: call,
    respond: result({ content: [] }),
    fires: 'result-type-missing',
  },
  {
    name: 'result-type-missing fires on a result that is not an object',
    request: call,
    respond: result(null),
    fires: 'result-type-missing',
    check: (v) => assert.equal(v.pointer, '/response/result'),
  },
  {
    name: 'result-type-unknown fires on "completed"',
    request: call,
    respond: result({ ...callResult, resultType: 'completed' }),
    fires: 'result-type-unknown',
    silent: ['result-type-missing'],
  },
  {
    name: 'result-type-unknown fires on a number',
    request: call,
    respond: result({ ...callResult, resultType: 1 }),
    fires: 'result-type-unknown',
  },
  {
    name: 'result-type-unknown is silent on a value a negotiated extension may define',
    request: withCaps(call, { extensions: { 'com.example/deferred': {} } }),
    respond: result({ ...callResult, resultType: 'com.example/deferred' }),
    silent: ['result-type-unknown'],
  },
  // input-required-not-allowed / input-requests-shape
  {
    name: 'input-required-not-allowed fires on tools/list',
    request: { method: 'tools/list' },
    respond: result({ resultType: 'input_required', requestState: 's' }),
    fires: 'input-required-not-allowed',
    silent: ['caching-hints'],
  },
  {
    name: 'input-required-not-allowed fires without inputRequests or requestState',
    request: call,
    respond: result({ resultType: 'input_required' }),
    fires: 'input-required-not-allowed',
  },
  {
    name: 'input-required rules are silent on a well-formed InputRequiredResult',
    request: call,
    respond: result({ resultType: 'input_required', inputRequests: { which: elicit }, requestState: 'opaque' }),
    silent: ['input-required-not-allowed', 'input-requests-shape', 'result-type-unknown'],
  },
  {
    name: 'input-requests-shape fires on an entry that is not an input request',
    request: { method: 'prompts/get', params: { name: 'p' } },
    respond: result({ resultType: 'input_required', inputRequests: { ok: elicit, bad: { method: 'tools/call', params: {} } } }),
    fires: 'input-requests-shape',
    check: (v) => assert.equal(v.pointer, '/response/result/inputRequests/bad'),
  },
  // caching-hints
  {
    name: 'caching-hints fires on tools/list without hints',
    request: { method: 'tools/list' },
    respond: result({ resultType: 'complete', tools: [] }),
    fires: 'caching-hints',
    count: 2,
  },
  {
    name: 'caching-hints fires on a negative ttlMs and an unknown scope',
    request: { method: 'resources/read', params: { uri: 'file:///a' } },
    respond: result({ resultType: 'complete', contents: [], ttlMs: -1, cacheScope: 'shared' }),
    fires: 'caching-hints',
    count: 2,
  },
  {
    name: 'caching-hints fires on a fractional ttlMs of server/discover',
    request: { method: 'server/discover' },
    respond: result({ resultType: 'complete', supportedVersions: [MODERN], capabilities: {}, ttlMs: 1.5, cacheScope: 'public' }),
    fires: 'caching-hints',
    count: 1,
  },
  {
    name: 'caching-hints is silent on hints',
    request: { method: 'prompts/list' },
    respond: result({ resultType: 'complete', prompts: [], ...hints }),
    silent: ['caching-hints'],
  },
  {
    name: 'caching-hints is silent on an input_required resources/read',
    request: { method: 'resources/read', params: { uri: 'file:///a' } },
    respond: result({ resultType: 'input_required', requestState: 's' }),
    silent: ['caching-hints', 'input-required-not-allowed'],
  },
  // missing-request-meta
  {
    name: 'missing-request-meta fires without _meta',
    request: { ...call, noMeta: true },
    respond: result(callResult),
    fires: 'missing-request-meta',
    count: 2,
  },
  {
    name: 'missing-request-meta fires on non-object clientCapabilities',
    request: withCaps(call, 'none'),
    respond: result(callResult),
    fires: 'missing-request-meta',
    count: 1,
  },
  // header-mismatch
  {
    name: 'header-mismatch fires without MCP-Protocol-Version',
    request: withHeaders(call, { 'mcp-protocol-version': '' }),
    respond: result(callResult),
    fires: 'header-mismatch',
    check: (v) => assert.equal(v.pointer, '/headers/mcp-protocol-version'),
  },
  {
    name: 'header-mismatch fires on another MCP-Protocol-Version',
    request: withHeaders(call, { 'mcp-protocol-version': LEGACY }),
    respond: result(callResult),
    fires: 'header-mismatch',
  },
  {
    name: 'header-mismatch fires on another Mcp-Method',
    request: withHeaders(call, { 'mcp-method': 'tools/list' }),
    respond: result(callResult),
    fires: 'header-mismatch',
    check: (v) => assert.equal(v.pointer, '/headers/mcp-method'),
  },
  {
    name: 'header-mismatch fires without Mcp-Name',
    request: withHeaders(call, { 'mcp-name': '' }),
    respond: result(callResult),
    fires: 'header-mismatch',
    check: (v) => assert.equal(v.pointer, '/headers/mcp-name'),
  },
  {
    name: 'header-mismatch fires on another Mcp-Name',
    request: withHeaders(call, { 'mcp-name': 'other' }),
    respond: result(callResult),
    fires: 'header-mismatch',
  },
  {
    name: 'header-mismatch fires on a resources/read uri mismatch',
    request: withHeaders({ method: 'resources/read', params: { uri: 'file:///a' } }, { 'mcp-name': 'file:///b' }),
    respond: result({ resultType: 'complete', contents: [], ...hints }),
    fires: 'header-mismatch',
  },
  {
    name: 'header-mismatch fires on a malformed base64 value',
    request: withHeaders(call, { 'mcp-name': '=?base64?!!?=' }),
    respond: result(callResult),
    fires: 'header-mismatch',
  },
  {
    name: 'header-mismatch decodes a base64 Mcp-Name before comparing',
    request: withHeaders(
      { method: 'tools/call', params: { name: ' héllo wörld', arguments: {} } },
      { 'mcp-name': `=?base64?${Buffer.from(' héllo wörld').toString('base64')}?=` },
    ),
    respond: result(callResult),
    silent: ['header-mismatch'],
  },
  {
    name: 'header-mismatch is silent on prompts/get',
    request: { method: 'prompts/get', params: { name: 'p' } },
    respond: result({ resultType: 'complete', messages: [] }),
    silent: ['header-mismatch'],
  },
  // removed-method
  {
    name: 'removed-method warns on ping answered with a result',
    request: { method: 'ping' },
    respond: result({ resultType: 'complete' }),
    fires: 'removed-method',
    severity: 'warning',
  },
  {
    name: 'removed-method warns on logging/setLevel answered with a result',
    request: { method: 'logging/setLevel', params: { level: 'info' } },
    respond: result({ resultType: 'complete' }),
    fires: 'removed-method',
    severity: 'warning',
  },
  {
    name: 'removed-method warns on tasks/get without the tasks extension',
    request: { method: 'tasks/get', params: { taskId: 't' } },
    respond: result({ resultType: 'complete' }),
    fires: 'removed-method',
    severity: 'warning',
  },
  {
    name: 'removed-method is silent on tasks/get with the tasks extension',
    request: withCaps({ method: 'tasks/get', params: { taskId: 't' } }, { extensions: { 'io.modelcontextprotocol/tasks': {} } }),
    respond: result({ resultType: 'complete' }),
    silent: ['removed-method'],
  },
  { name: 'removed-method is silent on 404 + -32601', request: { method: 'ping' }, respond: notFound, silent: ['removed-method'] },
  // session-id-minted, client-response-not-allowed, cancelled-over-http
  {
    name: 'session-id-minted fires on Mcp-Session-Id',
    request: call,
    respond: result(callResult, { 'mcp-session-id': 'abc-123' }),
    fires: 'session-id-minted',
  },
  {
    name: 'client-response-not-allowed fires on a POSTed response',
    request: { method: 'x', raw: '{"jsonrpc":"2.0","id":"srv-1","result":{}}' },
    respond: accepted,
    fires: 'client-response-not-allowed',
  },
  {
    name: 'cancelled-over-http warns on notifications/cancelled',
    request: { method: 'notifications/cancelled', id: null, params: { requestId: 'r-1' } },
    respond: accepted,
    fires: 'cancelled-over-http',
    severity: 'warning',
  },
];

// The same traffic under a legacy version: none of the modern rules applies.
const legacyRows: Row[] = [
  { name: 'result without resultType or hints', request: { method: 'tools/list' }, respond: result({ tools: [] }) },
  { name: 'resultType unknown', request: call, respond: result({ content: [], resultType: 'completed' }) },
  { name: 'ping answered {}', request: { method: 'ping' }, respond: result({}) },
  { name: 'Mcp-Session-Id echoed', request: call, respond: result({ content: [] }, { 'mcp-session-id': 'session-under-test' }) },
  { name: 'a POSTed response', request: { method: 'x', raw: '{"jsonrpc":"2.0","id":"srv-1","result":{}}' }, respond: accepted },
  {
    name: 'notifications/cancelled',
    request: { method: 'notifications/cancelled', id: null, params: { requestId: 'r-1' } },
    respond: accepted,
  },
];

const ALL_IDS = MODERN_PROTOCOL_RULES.map((r) => r.id);
const good: Row[] = [
  { name: 'tools/call', request: call, respond: result(callResult) },
  { name: 'tools/list', request: { method: 'tools/list' }, respond: result({ resultType: 'complete', tools: [], ...hints }) },
  {
    name: 'resources/read',
    request: { method: 'resources/read', params: { uri: 'file:///a' } },
    respond: result({ resultType: 'complete', contents: [], ...hints }),
  },
  {
    name: 'server/discover',
    request: { method: 'server/discover' },
    respond: result({
      resultType: 'complete',
      supportedVersions: [MODERN],
      capabilities: { tools: {} },
      ttlMs: 60000,
      cacheScope: 'public',
    }),
  },
  {
    name: 'tools/call over SSE',
    request: call,
    respond: (req) => ({ sse: [`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: req?.id, result: callResult })}\n\n`] }),
  },
];

async function run(row: Row): Promise<void> {
  const r = await runScenario({ version: row.version ?? MODERN, request: row.request, respond: row.respond });
  if (row.fires) {
    const v = assertFires(r, row.fires);
    assert.equal(v.severity, row.severity ?? 'error', `${row.fires} severity`);
    if (row.count !== undefined) assert.equal(r.violations.filter((x) => x.rule === row.fires).length, row.count, `${row.fires} findings`);
    row.check?.(v, r);
  }
  for (const id of row.silent ?? []) assertSilent(r, id);
}

describe('modern protocol rules', () => {
  for (const row of rows) test(row.name, () => run(row));
  for (const row of good) test(`good ${row.name} is silent`, () => run({ ...row, silent: ALL_IDS }));
  for (const row of legacyRows) test(`silent under ${LEGACY}: ${row.name}`, () => run({ ...row, version: LEGACY, silent: ALL_IDS }));
  // correlate.learn re-versions an initialize exchange by its result, even a modern one (version in _meta).
  test('removed-method warns on a modern initialize answered with a legacy InitializeResult', () =>
    run({
      name: 'modern initialize',
      request: { method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 't', version: '1' } } },
      respond: result({ protocolVersion: LEGACY, capabilities: {}, serverInfo: { name: 's', version: '1' } }),
      fires: 'removed-method',
      severity: 'warning',
    }));
});
