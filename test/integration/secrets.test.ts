// Canary secrets in every place a client puts them (Authorization, Cookie, a query string, tool
// arguments) never reach a log line or a capture line: one whole session (initialize, tools, an SSE
// answer, findings, rewrites, a GET stream, DELETE, OAuth paths through the pass-through) under the
// shipped audit.yaml and enforce.yaml, with capture on and the log at trace; then the hostile
// requests that make the proxy quote what the client sent.
//
// Already covered elsewhere, not repeated here:
//   proxy-wire.test.ts 'secrets never reach the log'   (one request, default policy, debug level)
//   replay.test.ts 'the capture has one line per exchange and none of the secrets'
//       (the SDK client's session under a minimal audit policy with capture; no query string)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { loadPolicyFile } from '../../src/policy/load.ts';
import type { Policy } from '../../src/policy/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { createProxy } from '../../src/server.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { startRawServer, type RawHandler, type RawServer } from '../fixtures/raw-server.ts';
import { createLogCapture, type LogCapture } from '../helpers/log-capture.ts';

const CONFIG = fileURLToPath(new URL('../../config/', import.meta.url));
const ACCEPT = 'application/json, text/event-stream';
const VERSION = '2025-11-25';
const SESSION = 'sess-canary-session';
const SESSION_HEADER = 'mcp-session-id';

// Distinct and unlikely to occur by chance; short enough to fit whole in any excerpt.
const CANARY = {
  bearer: 'cnry-bearer-7Qx2',
  cookie: 'cnry-cookie-9Lw4',
  query: 'cnry-query-3Vt8',
  code: 'cnry-code-5Hp1',
  password: 'cnry-pass-6Rk3',
  note: 'cnry-note-2Mz5',
  /** A short one (a PIN, an OTP): a prefix of a longer secret leaks the same way. */
  pin: 'K7q2Zx',
} as const;
// The canaries come first: an excerpt cut at 160 characters must not hide a leak by luck.
const ARGS = { note: CANARY.note, pin: CANARY.pin, password: CANARY.password, query: 'weather in Paris' };

/** Every canary found in `text`, by name. */
const leaked = (text: string): string[] => Object.entries(CANARY).filter(([, v]) => text.includes(v)).map(([k]) => k);

const TOOLS = [
  {
    name: 'lookup',
    description: 'Looks something up',
    inputSchema: {
      type: 'object',
      properties: { note: { type: 'string' }, pin: { type: 'string' }, password: { type: 'string' }, query: { type: 'string' } },
      required: ['query'],
    },
  },
  { name: 'report', description: 'A slow report, streamed', inputSchema: { type: 'object', properties: { note: { type: 'string' } } } },
  { name: 'fail', description: 'Always fails', inputSchema: { type: 'object' } },
];

const json = (res: Parameters<RawHandler>[1], status: number, value: unknown, headers: Record<string, string> = {}): void => {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), [SESSION_HEADER]: SESSION, ...headers });
  res.end(body);
};

/** A legacy-era MCP server that never echoes what it was sent, with a few findings on purpose. */
const mcpServer: RawHandler = (req, res, body) => {
  const path = (req.url ?? '').split('?')[0];
  if (path === '/.well-known/oauth-protected-resource/mcp') return json(res, 200, { resource: 'http://upstream.invalid/mcp', authorization_servers: ['https://auth.example.com'] });
  if (path !== '/mcp') return json(res, 200, { ok: true });
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/event-stream', [SESSION_HEADER]: SESSION });
    res.end('id: g1\ndata: {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n\n');
    return;
  }
  if (req.method === 'DELETE') {
    res.writeHead(200, { 'content-length': 0 });
    res.end();
    return;
  }
  const m = JSON.parse(body.toString('utf8')) as { id?: string | number; method: string; params?: { name?: string; arguments?: Record<string, unknown> } };
  if (m.id === undefined) {
    res.writeHead(202, { 'content-length': 0 });
    res.end();
    return;
  }
  const reply = (result: unknown): void => json(res, 200, { jsonrpc: '2.0', id: m.id, result });
  switch (m.method) {
    case 'initialize':
      return reply({ protocolVersion: VERSION, capabilities: { tools: {} }, serverInfo: { name: 'canary-server', version: '1.0.0' } });
    case 'tools/list':
      return reply({ tools: TOOLS });
    case 'resources/list':
      return json(res, 200, { jsonrpc: '2.0', id: m.id, error: { code: -32000, message: 'Not supported' } });
    case 'tools/call':
      break;
    default:
      return json(res, 200, { jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
  }
  const name = m.params?.name;
  if (name === 'lookup') {
    if (typeof m.params?.arguments?.query !== 'string') return reply({ content: [{ type: 'text', text: 'Invalid arguments' }], isError: true });
    return reply({ content: [{ type: 'text', text: 'Found 1 row' }] });
  }
  if (name === 'report') {
    res.writeHead(200, { 'content-type': 'text/event-stream', [SESSION_HEADER]: SESSION });
    res.write('event: message\nid: r1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2}}\n\n');
    res.end(`event: message\nid: r2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'Report ready' }] } })}\n\n`);
    return;
  }
  if (name === 'fail') {
    return json(res, 200, {
      jsonrpc: '2.0',
      id: m.id,
      error: { code: -32603, message: 'TypeError: x is undefined\n    at lookup (/srv/app/src/db.js:12:7)\n    at db-primary.internal:5432' },
    });
  }
  return reply({ content: [{ type: 'text', text: `Tool ${String(name)} not found` }], isError: true });
};

interface Run {
  upstream: RawServer;
  /** Every log line exactly as the proxy wrote it. */
  lines: string[];
  log: LogCapture;
  captureText: string;
  captureFile: string;
}

/** A log destination that keeps the raw lines and parses them too. */
function rawAndParsed(): { lines: string[]; log: LogCapture; stream: { write(s: string): void } } {
  const lines: string[] = [];
  const log = createLogCapture();
  return {
    lines,
    log,
    stream: {
      write(s: string): void {
        lines.push(...s.split('\n').filter((l) => l !== ''));
        log.stream.write(s);
      },
    },
  };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-secrets-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The shipped policy file with capture turned on, in the temp dir. */
async function shippedWithCapture(name: 'audit' | 'enforce'): Promise<Policy> {
  const text = await readFile(join(CONFIG, `${name}.yaml`), 'utf8');
  assert.ok(!/^capture:/m.test(text), `${name}.yaml already sets capture`);
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, `${text}\ncapture:\n  path: ./capture-${name}.jsonl\n`);
  const loaded = await loadPolicyFile(file, { rewritable: REWRITABLE });
  if (!loaded.ok) throw new Error(`${file}: ${JSON.stringify(loaded.errors)}`);
  assert.equal(loaded.policy.mode, name);
  assert.equal(loaded.policy.capture?.path, join(dir, `capture-${name}.jsonl`));
  return loaded.policy;
}

/** The whole session through a proxy under `policy`, log at trace; the proxy is closed (capture flushed) before this returns. */
async function runSession(policy: Policy): Promise<Run> {
  const upstream = await startRawServer(mcpServer);
  const { lines, log, stream } = rawAndParsed();
  const logger = createLogger({ destination: stream, level: 'trace' });
  const proxy = await createProxy({ upstream: new URL('/mcp', upstream.url), logger, policy: () => policy }).listen(0, '127.0.0.1');
  try {
    const endpoint = new URL(`?access_token=${CANARY.query}&lang=en`, proxy.url);
    const credentials = { authorization: `Bearer ${CANARY.bearer}`, cookie: `sid=${CANARY.cookie}; theme=dark` };
    const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
      'content-type': 'application/json',
      accept: ACCEPT,
      ...credentials,
      'mcp-protocol-version': VERSION,
      [SESSION_HEADER]: SESSION,
      ...extra,
    });
    let id = 0;
    const send = async (method: string, params?: unknown, notification = false): Promise<{ status: number; text: string }> => {
      const message = notification ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id: ++id, method, params };
      const res = await request(endpoint, { method: 'POST', body: JSON.stringify(message), headers: headers() });
      return { status: res.statusCode, text: await res.body.text() };
    };

    const init = await request(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, ...credentials },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'canary-client', version: '1' } } }),
    });
    assert.equal(init.headers[SESSION_HEADER], SESSION);
    await init.body.text();
    assert.equal((await send('notifications/initialized', undefined, true)).status, 202);
    assert.match((await send('tools/list', {})).text, /"lookup"/);
    assert.match((await send('tools/call', { name: 'lookup', arguments: ARGS })).text, /Found 1 row/);
    assert.match((await send('tools/call', { name: 'lookup', arguments: { ...ARGS, query: 42 } })).text, /isError/);
    assert.match((await send('tools/call', { name: 'report', arguments: { note: CANARY.note, password: CANARY.password } })).text, /Report ready/);
    await send('tools/call', { name: 'no_such_tool', arguments: ARGS });
    await send('tools/call', { name: 'fail', arguments: ARGS });
    await send('resources/list', {});
    const stream = await request(endpoint, { method: 'GET', headers: { accept: 'text/event-stream', ...credentials, [SESSION_HEADER]: SESSION, 'mcp-protocol-version': VERSION } });
    assert.match(await stream.body.text(), /list_changed/);
    const prm = await request(new URL(`/.well-known/oauth-protected-resource/mcp?access_token=${CANARY.query}`, proxy.url), { headers: credentials });
    assert.equal(prm.statusCode, 200);
    await prm.body.text();
    const callback = await request(new URL(`/oauth/callback?code=${CANARY.code}&state=s1&token=${CANARY.query}`, proxy.url), { headers: credentials });
    await callback.body.text();
    const end = await request(endpoint, { method: 'DELETE', headers: headers() });
    assert.equal(end.statusCode, 200);
    await end.body.text();
    await log.waitFor((r) => r.msg === 'session end');
  } finally {
    await proxy.close();
    await upstream.close();
  }
  const captureFile = policy.capture!.path;
  return { upstream, lines, log, captureText: await readFile(captureFile, 'utf8'), captureFile };
}

for (const name of ['audit', 'enforce'] as const) {
  describe(`one session under config/${name}.yaml, capture on, log level trace`, () => {
    let run: Run;
    before(async () => {
      run = await runSession(await shippedWithCapture(name));
    });

    test('the canaries did travel: the server received every one of them', () => {
      const posts = run.upstream.requests.filter((r) => r.method === 'POST');
      assert.ok(posts.length >= 9);
      assert.ok(posts.every((r) => r.headers.authorization === `Bearer ${CANARY.bearer}` && r.headers.cookie === `sid=${CANARY.cookie}; theme=dark`));
      assert.ok(posts.every((r) => r.url.includes(`access_token=${CANARY.query}`)), 'the query string is forwarded');
      const sent = run.upstream.requests.map((r) => `${r.url} ${JSON.stringify(r.headers)} ${r.body.toString()}`).join('\n');
      assert.deepEqual(leaked(sent).sort(), Object.keys(CANARY).sort());
    });

    test('the run exercised what it should: exchanges, findings, pass-through, a capture line per exchange', () => {
      const exchanges = run.log.records.filter((r) => r.msg === 'exchange');
      assert.ok(exchanges.length >= 8, `${exchanges.length} exchange records`);
      assert.ok(run.log.records.some((r) => r.msg === 'violation'), 'findings were logged');
      assert.equal(run.log.records.filter((r) => r.msg === 'passthrough').length, 2);
      const calls = exchanges.filter((r) => r.method === 'tools/call');
      assert.ok(calls.some((r) => JSON.stringify(r.arguments).includes('[REDACTED]')), 'arguments are logged, redacted');
      const captured = run.captureText.split('\n').filter((l) => l !== '');
      assert.equal(captured.length, exchanges.length, 'one capture line per exchange');
      if (name === 'enforce') assert.ok(run.log.records.some((r) => r.msg === 'rewrite'), 'enforce rewrote something');
    });

    test('no canary in any log line', () => {
      const hits = run.lines.flatMap((line, i) => leaked(line).map((k) => `line ${i}: ${k}: ${line.slice(0, 300)}`));
      assert.deepEqual(hits, []);
    });

    test('no canary in any capture line', () => {
      assert.ok(run.captureText.length > 0, `${run.captureFile} is empty`);
      const hits = run.captureText.split('\n').flatMap((line, i) => leaked(line).map((k) => `line ${i}: ${k}: ${line.slice(0, 300)}`));
      assert.deepEqual(hits, []);
    });
  });
}

// --- Hostile requests: the proxy quotes what the client sent in findings and log records. --------

describe('requests the proxy quotes back in its findings', () => {
  /** Sends one body through a proxy at trace (default policy) and returns every log line. */
  async function linesFor(body: string, headers: Record<string, string> = {}): Promise<string[]> {
    const upstream = await startRawServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}');
    });
    const { lines, log, stream } = rawAndParsed();
    const proxy = await createProxy({ upstream: new URL('/mcp', upstream.url), logger: createLogger({ destination: stream, level: 'trace' }) }).listen(0, '127.0.0.1');
    try {
      const res = await request(proxy.url, { method: 'POST', body, headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${CANARY.bearer}`, ...headers } });
      await res.body.text();
      await log.waitFor((r) => r.msg === 'violation');
    } finally {
      await proxy.close();
      await upstream.close();
    }
    return lines;
  }
  const noCanary = (lines: string[]): void => {
    const hits = lines.flatMap((line) => leaked(line).map((k) => `${k}: ${line.slice(0, 400)}`));
    assert.deepEqual(hits, []);
  };

  test(
    'a 2026-07-28 tools/call without _meta',
    async () => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 'm-1', method: 'tools/call', params: { name: 'lookup', arguments: ARGS } });
      noCanary(await linesFor(body, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'lookup' }));
    },
  );

  test(
    'a tools/call whose id is not a string or number',
    async () => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: { n: 1 }, method: 'tools/call', params: { name: 'lookup', arguments: ARGS } });
      noCanary(await linesFor(body));
    },
  );

  test(
    'a tools/call that is not valid JSON',
    async () => {
      const body = `{"jsonrpc":"2.0","id":"j-1","method":"tools/call","params":{"name":"lookup","arguments":{"pin":'${CANARY.pin}'}}}`;
      noCanary(await linesFor(body));
    },
  );

  test('a well-formed tools/call with the same arguments: nothing quoted (the control for the three above)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: { name: 'lookup', arguments: ARGS } });
    // The answer (an error with id null) is a finding, so a violation record is written too.
    noCanary(await linesFor(body));
  });
});
