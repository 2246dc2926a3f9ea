// One rule scenario on real sockets: a scripted MCP server (initialize, tools/list, then the
// request under test answered as the scenario says), the real proxy in front, and an undici client
// that runs a session of the scenario's protocol version through it. Returns what the proxy logged
// about the request under test and what the client received.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { request } from 'undici';
import { closeServer, listen } from './net.ts';
import { startProxy } from './proxy.ts';
import type { LogRecord } from './log-capture.ts';
import type { ProxyOptions } from '../../src/proxy/server.ts';

export interface ScenarioRequest {
  method: string;
  params?: Record<string, unknown>;
  /** The id (default 'test-1'); `null` sends a notification (no id). */
  id?: string | number | null;
  /** A body sent as-is instead of a JSON-RPC message built from the fields above. */
  raw?: string;
  /** Extra or replacing request headers (a value of '' removes a default header). */
  headers?: Record<string, string>;
  /** Modern era: leave `_meta` out of params. */
  noMeta?: boolean;
}

/** How the server answers the request under test. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  /** A JSON body (application/json unless headers say otherwise). */
  json?: unknown;
  /** A raw body. */
  body?: string;
  /** SSE events, each written as given (include the blank line). */
  sse?: string[];
  /** Drop the connection after the head (and `body`, if any). */
  reset?: boolean;
}

export interface Scenario {
  version: string;
  /** Tools the server lists; default: one `echo` tool with a required string `text`. */
  tools?: Array<Record<string, unknown>>;
  /** Server capabilities; default { tools: {} }. */
  capabilities?: Record<string, unknown>;
  request: ScenarioRequest;
  /** The answer to the request under test; `req` is the parsed body (undefined if it was not JSON). */
  respond: (req: { id?: unknown; method?: string; params?: Record<string, unknown> } | undefined) => Reply;
  proxy?: Omit<ProxyOptions, 'upstream' | 'logger'>;
}

export interface ScenarioResult {
  /** `msg:"violation"` records logged for the request under test. */
  violations: LogRecord[];
  /** The `msg:"exchange"` record of the request under test, if one was logged. */
  exchange: LogRecord | undefined;
  /** What the client received. */
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Every record the proxy logged. */
  records: LogRecord[];
}

export const ECHO_TOOL = {
  name: 'echo',
  description: 'Echoes text',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

export const MODERN = '2026-07-28';
const SESSION = 'session-under-test';

const metaFor = (version: string) => ({
  'io.modelcontextprotocol/protocolVersion': version,
  'io.modelcontextprotocol/clientCapabilities': {},
});

export async function runScenario(s: Scenario): Promise<ScenarioResult> {
  const modern = s.version === MODERN;
  const tools = s.tools ?? [ECHO_TOOL];
  const capabilities = s.capabilities ?? { tools: {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let msg: { id?: unknown; method?: string; params?: Record<string, unknown> } | undefined;
      try {
        msg = JSON.parse(text);
      } catch {
        msg = undefined;
      }
      const setup = msg && !Array.isArray(msg) && msg.id !== 'test-setup' ? undefined : msg;
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      const result = (extra: Record<string, unknown>) => (modern ? { resultType: 'complete', ...extra } : extra);
      if (setup?.method === 'initialize') {
        return json(
          200,
          {
            jsonrpc: '2.0',
            id: setup.id,
            result: { protocolVersion: s.version, capabilities, serverInfo: { name: 'scenario', version: '1' } },
          },
          { 'mcp-session-id': SESSION },
        );
      }
      if (setup?.method === 'tools/list') {
        return json(200, {
          jsonrpc: '2.0',
          id: setup.id,
          result: result({ tools, ...(modern ? { ttlMs: 0, cacheScope: 'private' } : {}) }),
        });
      }
      if (msg && !Array.isArray(msg) && msg.method === 'notifications/initialized') {
        res.writeHead(202).end();
        return;
      }
      const reply = s.respond(Array.isArray(msg) ? undefined : msg);
      const headers: Record<string, string> = { ...reply.headers };
      if (reply.sse) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', ...headers });
        for (const e of reply.sse) res.write(e);
        if (reply.reset) res.socket?.destroy();
        else res.end();
        return;
      }
      const body = reply.json !== undefined ? JSON.stringify(reply.json) : (reply.body ?? '');
      if (reply.json !== undefined && !headers['content-type']) headers['content-type'] = 'application/json';
      if (reply.reset) {
        res.writeHead(reply.status ?? 200, headers);
        res.write(body.slice(0, Math.floor(body.length / 2)));
        res.socket?.destroy();
        return;
      }
      res.writeHead(reply.status ?? 200, headers);
      res.end(body);
    });
  });
  const upstream = new URL('/mcp', await listen(server));
  const proxy = await startProxy(upstream, s.proxy);
  try {
    const baseHeaders: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const send = async (body: string, headers: Record<string, string>) => {
      const merged = Object.fromEntries(Object.entries({ ...baseHeaders, ...headers }).filter(([, v]) => v !== ''));
      const res = await request(proxy.url, { method: 'POST', body, headers: merged });
      return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
    };
    const setupHeaders: Record<string, string> = {};
    if (modern) {
      Object.assign(setupHeaders, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' });
      await send(
        JSON.stringify({ jsonrpc: '2.0', id: 'test-setup', method: 'tools/list', params: { _meta: metaFor(MODERN) } }),
        setupHeaders,
      );
    } else {
      const init = await send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'test-setup',
          method: 'initialize',
          params: { protocolVersion: s.version, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
        {},
      );
      assert.equal(init.status, 200, `scenario initialize failed: ${init.body}`);
      setupHeaders['mcp-session-id'] = SESSION;
      if (s.version >= '2025-06-18') setupHeaders['mcp-protocol-version'] = s.version;
      await send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), setupHeaders);
      await send(JSON.stringify({ jsonrpc: '2.0', id: 'test-setup', method: 'tools/list', params: {} }), setupHeaders);
    }
    const mark = proxy.log.records.length;
    const { method, id = 'test-1' } = s.request;
    const params =
      modern && !s.request.noMeta
        ? { ...s.request.params, _meta: { ...metaFor(MODERN), ...(s.request.params?._meta as object) } }
        : s.request.params;
    const message: Record<string, unknown> = { jsonrpc: '2.0', method };
    if (id !== null) message.id = id;
    if (params !== undefined) message.params = params;
    const headers = { ...setupHeaders };
    if (modern) {
      headers['mcp-method'] = method;
      const name =
        method === 'tools/call' || method === 'prompts/get' ? params?.name : method === 'resources/read' ? params?.uri : undefined;
      if (typeof name === 'string') headers['mcp-name'] = name;
    }
    const got = await send(s.request.raw ?? JSON.stringify(message), { ...headers, ...s.request.headers });
    // Records of the request under test are written before the client gets its last byte, but the
    // POST-level ones come right after: give the proxy a moment to finish its bookkeeping.
    await new Promise((r) => setTimeout(r, 20));
    const records = proxy.log.records.slice(mark);
    return {
      violations: records.filter((r) => r.msg === 'violation'),
      exchange: records.find((r) => r.msg === 'exchange' && r.from === 'client'),
      status: got.status,
      headers: got.headers,
      body: got.body,
      records: proxy.log.records,
    };
  } finally {
    await proxy.close();
    await closeServer(server);
  }
}

/** Asserts that `rule` fired on the request under test, and returns its record. */
export function assertFires(result: ScenarioResult, rule: string): LogRecord {
  const found = result.violations.find((v) => v.rule === rule);
  assert.ok(found, `${rule} should fire; violations logged: ${JSON.stringify(result.violations.map((v) => v.rule))}`);
  for (const field of ['severity', 'message', 'pointer', 'evidence', 'fix'])
    assert.equal(typeof found[field], 'string', `${rule}: ${field}`);
  return found;
}

/** Asserts that `rule` stayed silent on the request under test. */
export function assertSilent(result: ScenarioResult, rule: string): void {
  const found = result.violations.filter((v) => v.rule === rule);
  assert.equal(found.length, 0, `${rule} should stay silent; it said: ${JSON.stringify(found.map((v) => v.message))}`);
}
