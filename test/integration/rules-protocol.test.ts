// Protocol rules (framing, parse errors, batches, notification POSTs, content types, headers,
// lifecycle): each fires on its one misbehaviour and stays silent on good traffic, under each
// version where it differs. The modern era's per-request rules: rules-protocol-modern.test.ts.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PROTOCOL_RULES } from '../../src/rules/protocol.ts';
import {
  assertFires,
  assertSilent,
  runScenario,
  type Reply,
  type Scenario,
  type ScenarioRequest,
  type ScenarioResult,
} from '../helpers/rule-scenario.ts';
import type { LogRecord } from '../helpers/log-capture.ts';

type Respond = Scenario['respond'];

interface Row {
  name: string;
  version: string;
  request: ScenarioRequest;
  respond: Respond;
  /** The rule that must fire, and its severity (default error). */
  fires?: string;
  severity?: 'error' | 'warning';
  /** Rules that must stay silent. */
  silent?: string[];
  check?: (v: LogRecord, r: ScenarioResult) => void;
}

const MODERN = '2026-07-28';
const ALL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25', MODERN];
const resultFor = (version: string, extra: Record<string, unknown>) => (version === MODERN ? { resultType: 'complete', ...extra } : extra);
const callResult = { content: [{ type: 'text', text: 'hi' }] };

const call: ScenarioRequest = { method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } };
const notification: ScenarioRequest = { method: 'notifications/roots/list_changed', id: null };
const broken = (raw: string): ScenarioRequest => ({ method: 'tools/list', raw });

const result =
  (value: unknown, extra: Reply = {}): Respond =>
  (req) => ({ ...extra, json: { jsonrpc: '2.0', id: req?.id, result: value } });
const error =
  (status: number, code: number, id: unknown = null): Respond =>
  () => ({ status, json: { jsonrpc: '2.0', id, error: { code, message: 'rejected' } } });
const accepted: Respond = () => ({ status: 202 });
const sse =
  (value: unknown): Respond =>
  (req) => ({ sse: [`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: req?.id, result: value })}\n\n`] });
const goodCall = (version: string): Respond => result(resultFor(version, callResult));

const batchOf = (version: string, methods: string[]): ScenarioRequest => ({
  method: 'tools/list',
  raw: JSON.stringify(
    methods.map((method, i) => ({
      jsonrpc: '2.0',
      id: `b-${i + 1}`,
      method,
      params:
        method === 'initialize'
          ? { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } }
          : version === MODERN
            ? { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } }
            : {},
    })),
  ),
});
const batchReply: Respond = () => ({ json: [1, 2].map((n) => ({ jsonrpc: '2.0', id: `b-${n}`, result: { tools: [] } })) });

const rows: Row[] = [];

// parse-error-code / parse-error-id (and request-envelope on the client's side)
for (const version of ['2025-06-18', MODERN]) {
  rows.push(
    {
      name: `parse-error-code fires on -32600 for broken JSON (${version})`,
      version,
      request: broken('{"jsonrpc":"2.0","method":'),
      respond: error(400, -32600),
      fires: 'parse-error-code',
      silent: ['parse-error-id'],
      check: (v, r) => {
        assert.equal(v.pointer, '/response/error/code');
        assertFires(r, 'request-envelope');
      },
    },
    {
      name: `parse-error-id fires on a made-up id (${version})`,
      version,
      request: broken('{"jsonrpc"'),
      respond: error(200, -32700, 0),
      fires: 'parse-error-id',
      silent: ['parse-error-code'],
    },
    {
      name: `parse errors stay silent on 400 + -32700 + null id (${version})`,
      version,
      request: broken('{"jsonrpc"'),
      respond: error(400, -32700),
      silent: ['parse-error-code', 'parse-error-id'],
    },
  );
}
rows.push(
  {
    name: 'parse-error-code fires on an empty body answered -32600',
    version: MODERN,
    request: broken(''),
    respond: error(400, -32600),
    fires: 'parse-error-code',
  },
  {
    name: 'parse-error-code fires on an HTML body answered -32603',
    version: '2025-11-25',
    request: broken('<xml/>'),
    respond: error(200, -32603),
    fires: 'parse-error-code',
  },
  {
    name: 'parse errors stay silent on a rejection before parsing (406)',
    version: '2025-06-18',
    request: broken('{'),
    respond: error(406, -32000),
    silent: ['parse-error-code', 'parse-error-id'],
  },
);

// request-envelope
rows.push(
  {
    name: 'request-envelope fires on a null request id',
    version: '2025-06-18',
    request: broken('{"jsonrpc":"2.0","id":null,"method":"tools/list"}'),
    respond: error(400, -32600),
    fires: 'request-envelope',
  },
  {
    name: 'request-envelope fires on a notification with an id',
    version: '2025-03-26',
    request: broken('{"jsonrpc":"2.0","id":"n-1","method":"notifications/initialized"}'),
    respond: accepted,
    fires: 'request-envelope',
    check: (v) => assert.equal(v.pointer, '/request/id'),
  },
);

// jsonrpc-envelope
for (const version of ['2025-06-18', MODERN]) {
  rows.push(
    {
      name: `jsonrpc-envelope fires on a response without jsonrpc (${version})`,
      version,
      request: call,
      respond: (req) => ({ json: { id: req?.id, result: resultFor(version, callResult) } }),
      fires: 'jsonrpc-envelope',
      check: (v) => assert.equal(v.pointer, '/response/jsonrpc'),
    },
    {
      name: `jsonrpc-envelope fires on result and error together (${version})`,
      version,
      request: call,
      respond: (req) => ({
        json: { jsonrpc: '2.0', id: req?.id, result: resultFor(version, callResult), error: { code: -32603, message: 'x' } },
      }),
      fires: 'jsonrpc-envelope',
    },
  );
}

// batch-not-allowed / batch-response-not-allowed
rows.push(
  {
    name: 'batch-not-allowed fires on a batch (2025-06-18)',
    version: '2025-06-18',
    request: batchOf('2025-06-18', ['tools/list', 'tools/list']),
    respond: batchReply,
    fires: 'batch-not-allowed',
    silent: ['batch-response-not-allowed'],
  },
  {
    name: 'batch-not-allowed fires on a batch (2025-11-25)',
    version: '2025-11-25',
    request: batchOf('2025-11-25', ['tools/list', 'tools/list']),
    respond: batchReply,
    fires: 'batch-not-allowed',
  },
  {
    name: 'batch-not-allowed fires on a batch (2026-07-28)',
    version: MODERN,
    request: batchOf(MODERN, ['tools/list', 'tools/list']),
    respond: batchReply,
    fires: 'batch-not-allowed',
  },
  {
    name: 'batch-not-allowed warns on a batch (2024-11-05)',
    version: '2024-11-05',
    request: batchOf('2024-11-05', ['tools/list', 'tools/list']),
    respond: batchReply,
    fires: 'batch-not-allowed',
    severity: 'warning',
  },
  {
    name: 'batches stay silent under 2025-03-26',
    version: '2025-03-26',
    request: batchOf('2025-03-26', ['tools/list', 'tools/list']),
    respond: batchReply,
    silent: ['batch-not-allowed', 'batch-response-not-allowed'],
  },
  {
    name: 'batch-not-allowed fires on initialize inside a 2025-03-26 batch',
    version: '2025-03-26',
    request: batchOf('2025-03-26', ['initialize', 'tools/list']),
    respond: batchReply,
    fires: 'batch-not-allowed',
    check: (v) => assert.equal(v.pointer, '/request/0/method'),
  },
  {
    name: 'batch-response-not-allowed fires on an array answering one request (2025-06-18)',
    version: '2025-06-18',
    request: call,
    respond: (req) => ({ json: [{ jsonrpc: '2.0', id: req?.id, result: callResult }] }),
    fires: 'batch-response-not-allowed',
  },
  {
    name: 'batch-response-not-allowed fires on an array answering one request (2025-03-26)',
    version: '2025-03-26',
    request: call,
    respond: (req) => ({ json: [{ jsonrpc: '2.0', id: req?.id, result: callResult }] }),
    fires: 'batch-response-not-allowed',
  },
);

// notification-answered-with-body
const responseOnly = broken('{"jsonrpc":"2.0","id":"srv-1","result":{}}');
rows.push(
  {
    name: 'notification-answered-with-body fires on 200 + JSON (2025-03-26)',
    version: '2025-03-26',
    request: notification,
    respond: () => ({ json: { received: true } }),
    fires: 'notification-answered-with-body',
  },
  {
    name: 'notification-answered-with-body fires on 200 without a body (2025-06-18)',
    version: '2025-06-18',
    request: notification,
    respond: () => ({ status: 200 }),
    fires: 'notification-answered-with-body',
    check: (v) => assert.equal(v.pointer, '/status'),
  },
  {
    name: 'notification-answered-with-body fires on an SSE stream (2025-11-25)',
    version: '2025-11-25',
    request: notification,
    respond: () => ({ sse: [': hi\n\n'] }),
    fires: 'notification-answered-with-body',
  },
  {
    name: 'notification-answered-with-body fires on 202 with a body (2026-07-28)',
    version: MODERN,
    request: { method: 'notifications/cancelled', id: null, params: { requestId: 'x' } },
    respond: () => ({ status: 202, headers: { 'content-type': 'text/plain' }, body: 'Accepted' }),
    fires: 'notification-answered-with-body',
  },
  {
    name: 'notification-answered-with-body fires on a response-only POST answered 200 + JSON',
    version: '2025-06-18',
    request: responseOnly,
    respond: () => ({ json: { ok: true } }),
    fires: 'notification-answered-with-body',
  },
  {
    name: 'notification-answered-with-body is silent under 2024-11-05',
    version: '2024-11-05',
    request: notification,
    respond: () => ({ json: { received: true } }),
    silent: ['notification-answered-with-body'],
  },
  {
    name: 'notification-answered-with-body is silent on 202 without a body',
    version: '2025-06-18',
    request: notification,
    respond: accepted,
    silent: ['notification-answered-with-body'],
  },
  {
    name: 'notification-answered-with-body is silent on a 400 id-less error',
    version: '2025-11-25',
    request: notification,
    respond: () => ({ status: 400, json: { jsonrpc: '2.0', error: { code: -32600, message: 'rejected' } } }),
    silent: ['notification-answered-with-body'],
  },
);

// response-content-type
const asText =
  (version: string): Respond =>
  (req) => ({
    headers: { 'content-type': 'text/plain' },
    body: JSON.stringify({ jsonrpc: '2.0', id: req?.id, result: resultFor(version, callResult) }),
  });
rows.push(
  {
    name: 'response-content-type fires on text/plain JSON-RPC (2025-06-18)',
    version: '2025-06-18',
    request: call,
    respond: asText('2025-06-18'),
    fires: 'response-content-type',
  },
  {
    name: 'response-content-type fires on text/plain JSON-RPC (2026-07-28)',
    version: MODERN,
    request: call,
    respond: asText(MODERN),
    fires: 'response-content-type',
  },
  {
    name: 'response-content-type is silent under 2024-11-05',
    version: '2024-11-05',
    request: call,
    respond: asText('2024-11-05'),
    silent: ['response-content-type'],
  },
  {
    name: 'response-content-type is silent on SSE',
    version: '2025-06-18',
    request: call,
    respond: sse(callResult),
    silent: ['response-content-type'],
  },
  {
    name: 'response-content-type leaves an HTML body to html-body',
    version: '2025-06-18',
    request: call,
    respond: () => ({ status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>oops</body></html>' }),
    silent: ['response-content-type'],
  },
);

// accept-header, legacy-version-header, session-id-invalid
rows.push(
  {
    name: 'accept-header fires without text/event-stream',
    version: '2025-06-18',
    request: { ...call, headers: { accept: 'application/json' } },
    respond: goodCall('2025-06-18'),
    fires: 'accept-header',
  },
  {
    name: 'accept-header fires on q=0',
    version: MODERN,
    request: { ...call, headers: { accept: 'application/json, text/event-stream;q=0' } },
    respond: goodCall(MODERN),
    fires: 'accept-header',
  },
  {
    name: 'accept-header is silent under 2024-11-05',
    version: '2024-11-05',
    request: { ...call, headers: { accept: 'application/json' } },
    respond: goodCall('2024-11-05'),
    silent: ['accept-header'],
  },
  {
    name: 'legacy-version-header fires without the header (2025-06-18)',
    version: '2025-06-18',
    request: { ...call, headers: { 'mcp-protocol-version': '' } },
    respond: goodCall('2025-06-18'),
    fires: 'legacy-version-header',
  },
  {
    name: 'legacy-version-header warns on another version (2025-11-25)',
    version: '2025-11-25',
    request: { ...call, headers: { 'mcp-protocol-version': '2025-03-26' } },
    respond: goodCall('2025-11-25'),
    fires: 'legacy-version-header',
    severity: 'warning',
  },
  {
    name: 'legacy-version-header is silent under 2025-03-26',
    version: '2025-03-26',
    request: call,
    respond: goodCall('2025-03-26'),
    silent: ['legacy-version-header'],
  },
  {
    name: 'session-id-invalid fires on a space in the id',
    version: '2025-06-18',
    request: call,
    respond: result(callResult, { headers: { 'mcp-session-id': 'bad id' } }),
    fires: 'session-id-invalid',
  },
  {
    name: 'session-id-invalid is silent under 2024-11-05',
    version: '2024-11-05',
    request: call,
    respond: result(callResult, { headers: { 'mcp-session-id': 'bad id' } }),
    silent: ['session-id-invalid'],
  },
);

// lifecycle: initialize-version, ping-result, result-type-legacy
const initialize: ScenarioRequest = {
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};
const initResult = (protocolVersion: string) =>
  result({ protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } });
const ping: ScenarioRequest = { method: 'ping' };
rows.push(
  {
    name: 'initialize-version warns on an undefined version',
    version: '2025-06-18',
    request: initialize,
    respond: initResult('2025-13-45'),
    fires: 'initialize-version',
    severity: 'warning',
  },
  {
    name: 'initialize-version warns on the modern version',
    version: '2025-06-18',
    request: initialize,
    respond: initResult(MODERN),
    fires: 'initialize-version',
    severity: 'warning',
  },
  {
    name: 'initialize-version is silent on a legacy version',
    version: '2025-06-18',
    request: initialize,
    respond: initResult('2025-03-26'),
    silent: ['initialize-version'],
  },
  {
    name: 'ping-result warns on a non-empty result',
    version: '2025-03-26',
    request: ping,
    respond: result({ status: 'ok' }),
    fires: 'ping-result',
    severity: 'warning',
  },
  {
    name: 'ping-result warns on an error answer',
    version: '2024-11-05',
    request: ping,
    respond: error(200, -32601, 'test-1'),
    fires: 'ping-result',
    severity: 'warning',
  },
  { name: 'ping-result is silent on {}', version: '2025-11-25', request: ping, respond: result({}), silent: ['ping-result'] },
  {
    name: 'ping-result is silent on { _meta }',
    version: '2025-06-18',
    request: ping,
    respond: result({ _meta: { 'com.example/t': 1 } }),
    silent: ['ping-result'],
  },
  {
    name: 'result-type-legacy warns on input_required in 2025-11-25',
    version: '2025-11-25',
    request: call,
    respond: result({ resultType: 'input_required', requestState: 's' }),
    fires: 'result-type-legacy',
    severity: 'warning',
  },
  {
    name: 'result-type-legacy is silent on resultType complete',
    version: '2025-11-25',
    request: call,
    respond: result({ resultType: 'complete', ...callResult }),
    silent: ['result-type-legacy'],
  },
);

// Good traffic under every version: no rule of the family says anything.
const ALL_IDS = PROTOCOL_RULES.map((r) => r.id);
for (const version of ALL_VERSIONS) {
  rows.push(
    { name: `good JSON answer is silent (${version})`, version, request: call, respond: goodCall(version), silent: ALL_IDS },
    {
      name: `good SSE answer is silent (${version})`,
      version,
      request: call,
      respond: sse(resultFor(version, callResult)),
      silent: ALL_IDS,
    },
    // The modern era's only client notification (notifications/cancelled) is itself a warning over HTTP.
    version === MODERN
      ? {
          name: `accepted notification is silent (${version})`,
          version,
          request: { method: 'notifications/cancelled', id: null, params: { requestId: 'x' } },
          respond: accepted,
          silent: ['notification-answered-with-body'],
        }
      : { name: `good notification is silent (${version})`, version, request: notification, respond: accepted, silent: ALL_IDS },
  );
}

describe('protocol rules', () => {
  for (const row of rows) {
    test(row.name, async () => {
      const r = await runScenario({ version: row.version, request: row.request, respond: row.respond });
      if (row.fires) {
        const v = assertFires(r, row.fires);
        assert.equal(v.severity, row.severity ?? 'error', `${row.fires} severity`);
        assert.ok(String(v.pointer).startsWith('/'), 'pointer');
        row.check?.(v, r);
      }
      for (const id of row.silent ?? []) assertSilent(r, id);
    });
  }
});
