// Error-code rules through the real proxy: each case is one scenario server answering the request
// under test in one way, and says which code rules must fire (with which severity) and which must
// stay silent. Every rule has a bad answer that fires it and a good answer from the same server
// that does not, under each version where the rule differs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertFires, assertSilent, runScenario, type Reply, type ScenarioRequest } from '../helpers/rule-scenario.ts';
import { CODE_RULES } from '../../src/rules/codes.ts';

type Req = { id?: unknown } | undefined;
type Severity = 'error' | 'warning';

interface Case {
  name: string;
  version: string;
  request: ScenarioRequest;
  respond: (req: Req) => Reply;
  capabilities?: Record<string, unknown>;
  /** Rules that must fire, with the severity of their finding. */
  fires?: Record<string, Severity>;
  /** Rules that must stay silent; 'all' = every code rule not in `fires`. */
  silent: string[] | 'all';
}

const V1 = '2024-11-05';
const V3 = '2025-06-18';
const V4 = '2025-11-25';
const M = '2026-07-28';

const call: ScenarioRequest = { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };
const read: ScenarioRequest = { method: 'resources/read', params: { uri: 'file:///missing.txt' } };
const custom: ScenarioRequest = { method: 'vendor/frobnicate', params: {} };
const nosuch: ScenarioRequest = { method: 'no/such_method', params: {} };
const RESOURCES = { tools: {}, resources: {} };

/** An error answer: `id` undefined = the request's id; `null`/'omit' = a null or missing id. */
const error =
  (code: unknown, message: unknown, opts: { status?: number; data?: unknown; id?: null | 'omit'; sse?: boolean } = {}) =>
  (req: Req): Reply => {
    const msg: Record<string, unknown> = {
      jsonrpc: '2.0',
      error: { code, message, ...(opts.data === undefined ? {} : { data: opts.data }) },
    };
    if (opts.id === null) msg.id = null;
    else if (opts.id !== 'omit') msg.id = req?.id;
    if (opts.sse) return { status: opts.status, sse: [`event: message\ndata: ${JSON.stringify(msg)}\n\n`] };
    return { status: opts.status, json: msg };
  };

const result =
  (value: Record<string, unknown>) =>
  (req: Req): Reply => ({ json: { jsonrpc: '2.0', id: req?.id, result: value } });

const unknownTool = error(-32602, 'Unknown tool: nope');
const elicitations = { elicitations: [{ mode: 'url', elicitationId: 'e1', url: 'https://example.com/auth', message: 'Sign in' }] };

const cases: Case[] = [
  // Good answers: every code rule stays silent.
  { name: 'unknown tool -32602', version: V4, request: call, respond: unknownTool, silent: 'all' },
  { name: 'unknown tool -32602', version: M, request: call, respond: unknownTool, silent: 'all' },
  { name: 'application code -1', version: V3, request: call, respond: error(-1, 'User rejected'), silent: 'all' },

  // invalid-params-code: an unknown prompt, a log level RFC 5424 does not define (issue 43)
  {
    name: 'prompts/get of an unknown prompt answered -32603 "Prompt not found"',
    version: V4,
    request: { method: 'prompts/get', params: { name: 'nope' } },
    respond: error(-32603, 'Prompt not found: nope'),
    capabilities: { prompts: {} },
    fires: { 'invalid-params-code': 'warning' },
    silent: ['reserved-code'],
  },
  {
    name: 'prompts/get of an unknown prompt answered -32602',
    version: V4,
    request: { method: 'prompts/get', params: { name: 'nope' } },
    respond: error(-32602, 'Prompt not found: nope'),
    capabilities: { prompts: {} },
    silent: 'all',
  },
  {
    name: 'prompts/get failing inside a known prompt (-32603, words not about the name)',
    version: V4,
    request: { method: 'prompts/get', params: { name: 'summary' } },
    respond: error(-32603, 'Template rendering failed'),
    capabilities: { prompts: {} },
    silent: ['invalid-params-code'],
  },
  {
    name: 'logging/setLevel "verbose" answered -32603',
    version: V3,
    request: { method: 'logging/setLevel', params: { level: 'verbose' } },
    respond: error(-32603, 'Internal error'),
    capabilities: { logging: {} },
    fires: { 'invalid-params-code': 'warning' },
    silent: ['reserved-code'],
  },
  {
    name: 'logging/setLevel "verbose" answered -32602',
    version: V3,
    request: { method: 'logging/setLevel', params: { level: 'verbose' } },
    respond: error(-32602, 'Invalid log level: verbose'),
    capabilities: { logging: {} },
    silent: 'all',
  },
  {
    name: 'logging/setLevel "warning" (valid) answered -32603: the server failed, the params are fine',
    version: V3,
    request: { method: 'logging/setLevel', params: { level: 'warning' } },
    respond: error(-32603, 'Internal error'),
    capabilities: { logging: {} },
    silent: ['invalid-params-code'],
  },

  // reserved-code
  {
    name: '-32050 (spec-owned, undefined)',
    version: M,
    request: call,
    respond: error(-32050, 'Boom'),
    fires: { 'reserved-code': 'error' },
    silent: ['legacy-range-code'],
  },
  {
    name: '-32050 (spec-owned, undefined)',
    version: V4,
    request: call,
    respond: error(-32050, 'Boom'),
    fires: { 'reserved-code': 'warning' },
    silent: ['legacy-range-code'],
  },
  {
    name: '-32650 (JSON-RPC reserved)',
    version: V3,
    request: call,
    respond: error(-32650, 'Boom'),
    fires: { 'reserved-code': 'error' },
    silent: ['legacy-range-code'],
  },
  {
    name: '-32022 is a 2026-07-28 code',
    version: V4,
    request: call,
    respond: error(-32022, 'Unsupported protocol version'),
    fires: { 'reserved-code': 'warning' },
    silent: ['error-data-required', 'error-id-null'],
  },
  {
    name: 'a modern-only server turns legacy initialize away (400, -32022)',
    version: V4,
    request: {
      method: 'initialize',
      params: { protocolVersion: V4, capabilities: {}, clientInfo: { name: 't', version: '1' } },
      id: 'init-2',
    },
    respond: error(-32022, 'Unsupported protocol version', { status: 400, data: { supported: [M], requested: V4 } }),
    silent: 'all',
  },
  {
    name: '-32020 with 400',
    version: M,
    request: call,
    respond: error(-32020, 'Mcp-Name does not match params.name', { status: 400 }),
    silent: 'all',
  },

  // legacy-range-code
  {
    name: '-32000 from a handler',
    version: M,
    request: call,
    respond: error(-32000, 'Something failed'),
    fires: { 'legacy-range-code': 'warning' },
    silent: ['reserved-code', 'retired-code'],
  },
  {
    name: 'SDK session not found (404, -32001, id null)',
    version: V3,
    request: call,
    respond: error(-32001, 'Session not found', { status: 404, id: null }),
    fires: { 'legacy-range-code': 'warning' },
    silent: ['error-id-null', 'reserved-code'],
  },
  {
    name: 'a legacy server rejects a modern probe (400, -32000, id null)',
    version: M,
    request: call,
    respond: error(-32000, 'Bad Request: Unsupported protocol version', { status: 400, id: null }),
    silent: 'all',
  },
  {
    name: 'a legacy server rejects a modern probe (400, -32000, its id)',
    version: M,
    request: custom,
    respond: error(-32000, 'Bad Request: No valid session ID provided', { status: 400 }),
    silent: 'all',
  },
  {
    name: '-32000 with 400',
    version: V4,
    request: call,
    respond: error(-32000, 'Bad Request: No valid session ID provided', { status: 400 }),
    fires: { 'legacy-range-code': 'warning' },
    silent: ['reserved-code'],
  },

  // resource-not-found-code and retired-code on -32002
  {
    name: 'resources/read -32002',
    version: M,
    request: read,
    respond: error(-32002, 'Resource not found', { data: { uri: 'file:///missing.txt' } }),
    fires: { 'resource-not-found-code': 'error' },
    silent: ['retired-code', 'legacy-range-code', 'reserved-code'],
  },
  {
    name: 'resources/read -32002',
    version: V4,
    request: read,
    capabilities: RESOURCES,
    respond: error(-32002, 'Resource not found', { data: { uri: 'file:///missing.txt' } }),
    silent: 'all',
  },
  {
    name: 'resources/read -32602',
    version: M,
    request: read,
    respond: error(-32602, 'Resource not found: file:///missing.txt'),
    silent: 'all',
  },
  {
    name: 'resources/read -32602 (the SDK)',
    version: V3,
    request: read,
    capabilities: RESOURCES,
    respond: error(-32602, 'Resource file:///missing.txt not found'),
    silent: 'all',
  },
  {
    name: 'resources/read -32603 "not found"',
    version: V3,
    request: read,
    capabilities: RESOURCES,
    respond: error(-32603, 'Resource file:///missing.txt not found'),
    fires: { 'resource-not-found-code': 'warning' },
    silent: ['unknown-method-wrong-code'],
  },
  {
    name: 'resources/read -32603 "not found"',
    version: M,
    request: read,
    respond: error(-32603, 'No such resource'),
    fires: { 'resource-not-found-code': 'warning' },
    silent: ['retired-code'],
  },
  {
    name: 'resources/read -32603 internal failure',
    version: V3,
    request: read,
    capabilities: RESOURCES,
    respond: error(-32603, 'Disk unavailable'),
    silent: 'all',
  },
  {
    name: 'tools/call -32002',
    version: M,
    request: call,
    respond: error(-32002, 'Not found'),
    fires: { 'retired-code': 'error' },
    silent: ['resource-not-found-code', 'legacy-range-code'],
  },
  { name: 'tools/call -32002', version: V4, request: call, respond: error(-32002, 'Not found'), silent: 'all' },

  // retired-code on -32042, error-data-required
  {
    name: '-32042 with elicitations',
    version: V4,
    request: call,
    respond: error(-32042, 'URL elicitation required', { data: elicitations }),
    silent: 'all',
  },
  {
    name: '-32042 with elicitations',
    version: V3,
    request: call,
    respond: error(-32042, 'URL elicitation required', { data: elicitations }),
    fires: { 'retired-code': 'error' },
    silent: ['reserved-code', 'error-data-required'],
  },
  {
    name: '-32042 with elicitations',
    version: M,
    request: call,
    respond: error(-32042, 'URL elicitation required', { data: elicitations }),
    fires: { 'retired-code': 'error' },
    silent: ['reserved-code', 'error-data-required'],
  },
  {
    name: '-32042 without data',
    version: V4,
    request: call,
    respond: error(-32042, 'URL elicitation required'),
    fires: { 'error-data-required': 'error' },
    silent: ['retired-code', 'reserved-code'],
  },
  {
    name: '-32042 entry without elicitationId',
    version: V4,
    request: call,
    respond: error(-32042, 'URL elicitation required', { data: { elicitations: [{ mode: 'url', url: 'https://example.com' }] } }),
    fires: { 'error-data-required': 'error' },
    silent: ['retired-code'],
  },
  {
    name: '-32022 without data',
    version: M,
    request: call,
    respond: error(-32022, 'Unsupported protocol version', { status: 400 }),
    fires: { 'error-data-required': 'error' },
    silent: ['error-status-pairing', 'reserved-code'],
  },
  {
    name: '-32022 with supported and requested',
    version: M,
    request: call,
    respond: error(-32022, 'Unsupported protocol version', { status: 400, data: { supported: ['2026-07-28'], requested: '2099-01-01' } }),
    silent: 'all',
  },
  {
    name: '-32021 without data',
    version: M,
    request: call,
    respond: error(-32021, 'Elicitation capability required', { status: 400, data: { needs: 'elicitation' } }),
    fires: { 'error-data-required': 'error' },
    silent: ['error-status-pairing'],
  },
  {
    name: '-32021 with requiredCapabilities',
    version: M,
    request: call,
    respond: error(-32021, 'Elicitation capability required', { status: 400, data: { requiredCapabilities: { elicitation: {} } } }),
    silent: 'all',
  },

  // unknown-method-wrong-code
  {
    name: 'prompts/list without prompts capability, -32602',
    version: V3,
    request: { method: 'prompts/list', params: {} },
    respond: error(-32602, 'Prompts are not supported'),
    fires: { 'unknown-method-wrong-code': 'warning' },
    silent: ['unknown-method-status'],
  },
  {
    name: 'prompts/list without prompts capability, -32601',
    version: V3,
    request: { method: 'prompts/list', params: {} },
    respond: error(-32601, 'Method not found'),
    silent: 'all',
  },
  {
    name: 'prompts/list with prompts capability, -32602',
    version: V3,
    request: { method: 'prompts/list', params: {} },
    capabilities: { tools: {}, prompts: {} },
    respond: error(-32602, 'Invalid cursor'),
    silent: 'all',
  },
  {
    name: 'completion/complete without completions, -32602',
    version: V3,
    request: { method: 'completion/complete', params: {} },
    respond: error(-32602, 'Capability not supported'),
    fires: { 'unknown-method-wrong-code': 'warning' },
    silent: [],
  },
  {
    name: 'completion/complete without completions, -32602',
    version: V1,
    request: { method: 'completion/complete', params: {} },
    respond: error(-32602, 'Invalid ref'),
    silent: 'all',
  },
  {
    name: 'custom method "not implemented", -32603',
    version: M,
    request: custom,
    respond: error(-32603, 'Method not implemented'),
    fires: { 'unknown-method-wrong-code': 'error' },
    silent: ['unknown-method-status'],
  },
  {
    name: 'custom method "not implemented", -32603',
    version: V4,
    request: custom,
    respond: error(-32603, 'Method not implemented'),
    fires: { 'unknown-method-wrong-code': 'error' },
    silent: [],
  },
  {
    name: 'custom method, its own -32602',
    version: V4,
    request: custom,
    respond: error(-32602, 'Missing argument: target'),
    silent: 'all',
  },
  { name: 'custom method, a result', version: M, request: custom, respond: result({ resultType: 'complete', ok: true }), silent: 'all' },

  // unknown-method-generic-error (the article's no/such_method probe)
  {
    name: 'no/such_method answered with a bare -32603 "Internal error"',
    version: V4,
    request: nosuch,
    respond: error(-32603, 'Internal error'),
    fires: { 'unknown-method-generic-error': 'warning' },
    silent: ['unknown-method-wrong-code'],
  },
  {
    name: 'no/such_method answered with -32600',
    version: M,
    request: nosuch,
    respond: error(-32600, 'Invalid Request'),
    fires: { 'unknown-method-generic-error': 'warning' },
    silent: ['unknown-method-wrong-code'],
  },
  {
    name: 'an extension method that fails and says why, -32603',
    version: V4,
    request: nosuch,
    respond: error(-32603, 'Upstream index unavailable: retry later'),
    silent: 'all',
  },
  {
    name: 'no/such_method answered with -32601 on 404',
    version: M,
    request: nosuch,
    respond: error(-32601, 'Method not found', { status: 404 }),
    silent: 'all',
  },
  {
    name: 'a spec method failing with a bare -32603',
    version: V4,
    request: call,
    respond: error(-32603, 'Internal error'),
    silent: 'all',
  },

  // method-not-found-on-404
  {
    name: 'a 2025-11-25 -32601 on HTTP 404 (reads as an expired session)',
    version: V4,
    request: nosuch,
    respond: error(-32601, 'Method not found', { status: 404 }),
    fires: { 'method-not-found-on-404': 'warning' },
    silent: ['unknown-method-wrong-code'],
  },
  {
    name: 'a 2025-11-25 session that is gone: 404 naming the session',
    version: V4,
    request: nosuch,
    respond: error(-32601, 'Session not found', { status: 404 }),
    silent: ['method-not-found-on-404'],
  },

  // unknown-method-status
  {
    name: 'custom method -32601 on HTTP 200',
    version: M,
    request: custom,
    respond: error(-32601, 'Method not found'),
    fires: { 'unknown-method-status': 'error' },
    silent: ['unknown-method-wrong-code'],
  },
  {
    name: 'custom method -32601 on HTTP 404',
    version: M,
    request: custom,
    respond: error(-32601, 'Method not found', { status: 404 }),
    silent: 'all',
  },
  {
    name: 'custom method -32601 in an SSE stream (its status, 200, went out before the error)',
    version: M,
    request: custom,
    respond: error(-32601, 'Method not found', { sse: true }),
    fires: { 'unknown-method-status': 'error' },
    silent: ['unknown-method-wrong-code'],
  },
  {
    name: 'an unknown tool answered -32601 (the code is wrong; no 404 to add)',
    version: M,
    request: call,
    respond: error(-32601, 'Tool not found'),
    capabilities: { tools: {} },
    silent: ['unknown-method-status', 'error-status-pairing'],
  },
  {
    name: 'a tool missing from tools/list answered -32601: the code is judged, not the status',
    version: M,
    request: { method: 'tools/call', params: { name: 'nope', arguments: {} } },
    respond: error(-32601, 'Method not found'),
    fires: { 'unknown-tool-wrong-code': 'error' },
    silent: ['unknown-method-status'],
  },
  { name: 'custom method -32601 on HTTP 200', version: V4, request: custom, respond: error(-32601, 'Method not found'), silent: 'all' },

  // error-status-pairing
  {
    name: '-32020 on HTTP 200',
    version: M,
    request: call,
    respond: error(-32020, 'Header mismatch'),
    fires: { 'error-status-pairing': 'error' },
    silent: ['reserved-code'],
  },
  {
    name: '-32022 on HTTP 500',
    version: M,
    request: call,
    respond: error(-32022, 'Unsupported protocol version', { status: 500, data: { supported: ['2026-07-28'], requested: '2099-01-01' } }),
    fires: { 'error-status-pairing': 'error' },
    silent: ['error-data-required'],
  },
  {
    name: '-32020 in an SSE stream',
    version: M,
    request: call,
    respond: error(-32020, 'Header mismatch', { sse: true }),
    fires: { 'error-status-pairing': 'error' },
    silent: ['reserved-code'],
  },
  {
    name: 'missing _meta, -32602 on HTTP 200',
    version: M,
    request: { ...call, noMeta: true },
    respond: error(-32602, 'Missing _meta'),
    fires: { 'error-status-pairing': 'error' },
    silent: ['unknown-method-wrong-code'],
  },
  {
    name: 'missing _meta, -32602 on HTTP 400',
    version: M,
    request: { ...call, noMeta: true },
    respond: error(-32602, 'Missing _meta', { status: 400 }),
    silent: 'all',
  },

  // error-shape
  {
    name: 'code is a string',
    version: V3,
    request: call,
    respond: error('-32602', 'Unknown tool: nope'),
    fires: { 'error-shape': 'error' },
    silent: ['reserved-code'],
  },
  {
    name: 'message is missing, code is a float',
    version: M,
    request: call,
    respond: error(-32602.5, undefined),
    fires: { 'error-shape': 'error' },
    silent: ['reserved-code'],
  },

  // error-id-null
  {
    name: 'id null on HTTP 200',
    version: V3,
    request: call,
    respond: error(-32602, 'Unknown tool: nope', { id: null }),
    fires: { 'error-id-null': 'error' },
    silent: ['error-shape'],
  },
  {
    name: 'id omitted on HTTP 200',
    version: M,
    request: call,
    respond: error(-32602, 'Unknown tool: nope', { id: 'omit' }),
    fires: { 'error-id-null': 'error' },
    silent: [],
  },
  {
    name: 'id null in an SSE stream',
    version: V4,
    request: call,
    respond: error(-32603, 'Internal error', { id: null, sse: true }),
    fires: { 'error-id-null': 'error' },
    silent: [],
  },
  {
    name: 'transport rejection with id null (400)',
    version: V1,
    request: call,
    respond: error(-32600, 'Bad Request', { status: 400, id: null }),
    fires: { 'error-id-null': 'warning' },
    silent: [],
  },
  {
    name: 'transport rejection with id null (400)',
    version: V3,
    request: call,
    respond: error(-32600, 'Bad Request', { status: 400, id: null }),
    silent: 'all',
  },

  // server-discover-missing
  {
    name: 'server/discover -32601 on 404',
    version: M,
    request: { method: 'server/discover', params: {} },
    respond: error(-32601, 'Method not found', { status: 404 }),
    fires: { 'server-discover-missing': 'error' },
    silent: ['unknown-method-status', 'unknown-method-wrong-code'],
  },
  {
    name: 'server/discover answered',
    version: M,
    request: { method: 'server/discover', params: {} },
    respond: result({ resultType: 'complete', supportedVersions: [M], capabilities: { tools: {} }, ttlMs: 0, cacheScope: 'public' }),
    silent: 'all',
  },
  {
    name: 'server/discover -32601 (not a method there)',
    version: V4,
    request: { method: 'server/discover', params: {} },
    respond: error(-32601, 'Method not found'),
    silent: 'all',
  },
];

const ALL_IDS = CODE_RULES.map((r) => r.id);

describe('code rules', () => {
  test('every rule has a case that fires it and a silent one under the same version', () => {
    for (const id of ALL_IDS) {
      const firing = cases.filter((c) => c.fires?.[id]);
      assert.ok(firing.length > 0, `${id} never fires`);
      for (const version of new Set(firing.map((c) => c.version))) {
        const quiet = cases.some((c) => c.version === version && !c.fires?.[id] && (c.silent === 'all' || c.silent.includes(id)));
        assert.ok(quiet, `${id} has no silent case under ${version}`);
      }
    }
  });

  for (const c of cases) {
    const fires = Object.entries(c.fires ?? {});
    const label = fires.length ? `fires ${fires.map(([r, s]) => `${r}(${s})`).join(', ')}` : 'silent';
    test(`${c.name} (${c.version}): ${label}`, async () => {
      const res = await runScenario({ version: c.version, request: c.request, respond: c.respond, capabilities: c.capabilities });
      assert.ok(res.exchange, 'the request under test was judged and logged');
      for (const [id, severity] of fires) {
        const v = assertFires(res, id);
        assert.equal(v.severity, severity, `${id} severity: ${String(v.message)}`);
        assert.equal(v.protocolVersion, c.version);
        assert.equal(v.method, c.request.method);
        assert.match(String(v.pointer), /^\/(response|status)(\/|$)/);
      }
      const silent = c.silent === 'all' ? ALL_IDS.filter((id) => !c.fires?.[id]) : c.silent;
      for (const id of silent) assertSilent(res, id);
    });
  }
});
