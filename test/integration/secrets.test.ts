// Canary secrets in every place a client puts them (Authorization, Cookie, a query string, tool
// arguments) never reach a log line or a capture line: one whole session (initialize, tools, an SSE
// answer, findings, rewrites, a GET stream, DELETE, OAuth paths through the pass-through) under the
// shipped audit.yaml and enforce.yaml, with capture on and the log at trace; then the hostile
// requests that make the proxy quote what the client sent; then (issue 10 item 4) a distinct
// canary through every channel that once leaked, grepped in every log line, the capture, the
// replay reports of the capture and the check reports.
//
// Already covered elsewhere, not repeated here:
//   proxy-wire.test.ts 'secrets never reach the log'   (one request, default policy, debug level)
//   replay.test.ts 'the capture has one line per exchange and none of the secrets'
//       (the SDK client's session under a minimal audit policy with capture; no query string)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Command } from 'commander';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { registerCheckCommand } from '../../src/commands/check.ts';
import { runReplayCommand } from '../../src/commands/replay.ts';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { createProxy } from '../../src/proxy/server.ts';
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
const leaked = (text: string): string[] =>
  Object.entries(CANARY)
    .filter(([, v]) => text.includes(v))
    .map(([k]) => k);

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
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    [SESSION_HEADER]: SESSION,
    ...headers,
  });
  res.end(body);
};

/** A legacy-era MCP server that never echoes what it was sent, with a few findings on purpose. */
const mcpServer: RawHandler = (req, res, body) => {
  const path = (req.url ?? '').split('?')[0];
  if (path === '/.well-known/oauth-protected-resource/mcp')
    return json(res, 200, { resource: 'http://upstream.invalid/mcp', authorization_servers: ['https://auth.example.com'] });
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
  const m = JSON.parse(body.toString('utf8')) as {
    id?: string | number;
    method: string;
    params?: { name?: string; arguments?: Record<string, unknown> };
  };
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
    if (typeof m.params?.arguments?.query !== 'string')
      return reply({ content: [{ type: 'text', text: 'Invalid arguments' }], isError: true });
    return reply({ content: [{ type: 'text', text: 'Found 1 row' }] });
  }
  if (name === 'report') {
    res.writeHead(200, { 'content-type': 'text/event-stream', [SESSION_HEADER]: SESSION });
    res.write(
      'event: message\nid: r1\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2}}\n\n',
    );
    res.end(
      `event: message\nid: r2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'Report ready' }] } })}\n\n`,
    );
    return;
  }
  if (name === 'fail') {
    return json(res, 200, {
      jsonrpc: '2.0',
      id: m.id,
      error: {
        code: -32603,
        message: 'TypeError: x is undefined\n    at lookup (/srv/app/src/db.js:12:7)\n    at db-primary.internal:5432',
      },
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
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'initialize',
        params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'canary-client', version: '1' } },
      }),
    });
    assert.equal(init.headers[SESSION_HEADER], SESSION);
    await init.body.text();
    assert.equal((await send('notifications/initialized', undefined, true)).status, 202);
    assert.match((await send('tools/list', {})).text, /"lookup"/);
    assert.match((await send('tools/call', { name: 'lookup', arguments: ARGS })).text, /Found 1 row/);
    assert.match((await send('tools/call', { name: 'lookup', arguments: { ...ARGS, query: 42 } })).text, /isError/);
    assert.match(
      (await send('tools/call', { name: 'report', arguments: { note: CANARY.note, password: CANARY.password } })).text,
      /Report ready/,
    );
    await send('tools/call', { name: 'no_such_tool', arguments: ARGS });
    await send('tools/call', { name: 'fail', arguments: ARGS });
    await send('resources/list', {});
    const stream = await request(endpoint, {
      method: 'GET',
      headers: { accept: 'text/event-stream', ...credentials, [SESSION_HEADER]: SESSION, 'mcp-protocol-version': VERSION },
    });
    assert.match(await stream.body.text(), /list_changed/);
    const prm = await request(new URL(`/.well-known/oauth-protected-resource/mcp?access_token=${CANARY.query}`, proxy.url), {
      headers: credentials,
    });
    assert.equal(prm.statusCode, 200);
    await prm.body.text();
    const callback = await request(new URL(`/oauth/callback?code=${CANARY.code}&state=s1&token=${CANARY.query}`, proxy.url), {
      headers: credentials,
    });
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
      assert.ok(
        posts.every(
          (r) => r.headers.authorization === `Bearer ${CANARY.bearer}` && r.headers.cookie === `sid=${CANARY.cookie}; theme=dark`,
        ),
      );
      assert.ok(
        posts.every((r) => r.url.includes(`access_token=${CANARY.query}`)),
        'the query string is forwarded',
      );
      const sent = run.upstream.requests.map((r) => `${r.url} ${JSON.stringify(r.headers)} ${r.body.toString()}`).join('\n');
      assert.deepEqual(leaked(sent).sort(), Object.keys(CANARY).sort());
    });

    test('the run exercised what it should: exchanges, findings, pass-through, a capture line per exchange', () => {
      const exchanges = run.log.records.filter((r) => r.msg === 'exchange');
      assert.ok(exchanges.length >= 8, `${exchanges.length} exchange records`);
      assert.ok(
        run.log.records.some((r) => r.msg === 'violation'),
        'findings were logged',
      );
      assert.equal(run.log.records.filter((r) => r.msg === 'passthrough').length, 2);
      const calls = exchanges.filter((r) => r.method === 'tools/call');
      assert.ok(
        calls.some((r) => JSON.stringify(r.arguments).includes('[REDACTED]')),
        'arguments are logged, redacted',
      );
      const captured = run.captureText.split('\n').filter((l) => l !== '');
      assert.equal(captured.length, exchanges.length, 'one capture line per exchange');
      if (name === 'enforce')
        assert.ok(
          run.log.records.some((r) => r.msg === 'rewrite'),
          'enforce rewrote something',
        );
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
    const proxy = await createProxy({
      upstream: new URL('/mcp', upstream.url),
      logger: createLogger({ destination: stream, level: 'trace' }),
    }).listen(0, '127.0.0.1');
    try {
      const res = await request(proxy.url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', accept: ACCEPT, authorization: `Bearer ${CANARY.bearer}`, ...headers },
      });
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

  test('a 2026-07-28 tools/call without _meta', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'm-1', method: 'tools/call', params: { name: 'lookup', arguments: ARGS } });
    noCanary(await linesFor(body, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'lookup' }));
  });

  test('a tools/call whose id is not a string or number', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: { n: 1 }, method: 'tools/call', params: { name: 'lookup', arguments: ARGS } });
    noCanary(await linesFor(body));
  });

  test('a tools/call that is not valid JSON', async () => {
    const body = `{"jsonrpc":"2.0","id":"j-1","method":"tools/call","params":{"name":"lookup","arguments":{"pin":'${CANARY.pin}'}}}`;
    noCanary(await linesFor(body));
  });

  test('a well-formed tools/call with the same arguments: nothing quoted (the control for the three above)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: { name: 'lookup', arguments: ARGS } });
    // The answer (an error with id null) is a finding, so a violation record is written too.
    noCanary(await linesFor(body));
  });
});

// --- Issue 10 item 4: a distinct canary through every channel that leaked. -----------------------
//
// Each canary travels one channel; none is ever quoted anywhere. Free-text channels (a server's
// error text, logged arguments in full) carry the credential in a credential's shape (a
// connection-string password, a JWT): that shape is what the redaction finds. Channels that are
// redacted whatever the shape (the upstream URL's userinfo, query parameters named like
// credentials, arguments in redacted mode, members beyond a request's envelope) carry plain text.

/** Base64url of a JSON text, as in a JWT. */
const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const JWT_PAYLOAD = b64url({ sub: 'cnry-jwt-subject', scope: 'admin' });
const JWT_SIG = 'cnryJwtSig0Ab1Cd2Ef3Gh4';

const C4 = {
  upstreamPw: 'cnryUpstreamPw4Tq', // the upstream URL's userinfo (listening record)
  beforePw: 'cnryBeforePw2Xv', // a server's error text, rewritten under enforce (rewrite record's before)
  evidencePw: 'cnryEvidencePw8Jd', // a server's error text with id null (violation evidence)
  envelope: 'cnry-envelope-6Hs', // a member beyond an invalid request's envelope (request-envelope evidence)
  envelopeId: 'cnry-envelope-id-3Pk', // an invalid request's object id
  deep: 'cnry-deep40-1Qa', // a tool argument 40 levels deep (redacted arguments)
  authToken: 'cnry-q-auth-3Wd', // pass-through query parameters with less common names
  privateToken: 'cnry-q-priv-5Ke',
  amzSig: 'cnry-q-amz-7Ny',
  jwtQuery: 'cnry-q-jwt-9Bc',
  pwd: 'cnry-q-pwd-2Gm',
  jwtPayload: JWT_PAYLOAD, // log.arguments: full, a JWT ...
  jwtSig: JWT_SIG,
  fullDsnPw: 'cnryFullDsnPw6Rt', // ... and a connection-string password, at the top ...
  fullDeepPw: 'cnryFullDeepPw5Yh', // ... and 40 levels deep
  replayPw: 'cnryReplayPw7Uj', // a capture from elsewhere, unmasked, replayed
  replayToken: 'cnry-replay-token-4Ws',
  checkPw: 'cnryCheckPw1Zy', // a server's error text seen by `check`
} as const;
const JWT = `eyJhbGciOiJIUzI1NiJ9.${JWT_PAYLOAD}.${JWT_SIG}`;

/** Every item-4 canary in `text`, by name. */
const leaked4 = (text: string): string[] =>
  Object.entries(C4)
    .filter(([, v]) => text.includes(v))
    .map(([k]) => k);
const hits4 = (what: string, text: string): string[] =>
  text.split('\n').flatMap((line, i) => leaked4(line).map((k) => `${what} line ${i}: ${k}: ${line.slice(0, 300)}`));
/** Asserts that no text holds a canary; the message names every canary found, and where. */
function noCanary4(texts: Array<[what: string, text: string]>): void {
  const hits = texts.flatMap(([what, text]) => hits4(what, text));
  const names = [...new Set(hits.map((h) => h.replace(/^.* line \d+: (\w+): .*$/s, '$1')))];
  assert.deepEqual(hits, [], `canaries found: ${names.join(', ')}`);
}

/** `bottom` under `levels` objects: `{ level: { level: ... bottom } }`. */
function nest(levels: number, bottom: unknown): unknown {
  let v = bottom;
  for (let i = 0; i < levels; i++) v = { level: v };
  return v;
}

const dsn = (password: string, host: string): string => `pool error: postgres://app:${password}@${host}:5432/prod`;

const ITEM4_TOOLS = [
  {
    name: 'lookup',
    description: 'Looks something up',
    inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
  },
  { name: 'fail', description: 'Fails with the database error', inputSchema: { type: 'object' } },
  { name: 'fail_null', description: 'Fails, with id null', inputSchema: { type: 'object' } },
];

/** A legacy-era server whose errors quote its database URL, password and all (as real ones do). */
const item4Server: RawHandler = (req, res, body) => {
  if ((req.url ?? '').split('?')[0] !== '/mcp') return json(res, 200, { ok: true });
  if (req.method !== 'POST') {
    res.writeHead(req.method === 'DELETE' ? 200 : 405, { 'content-length': 0 });
    res.end();
    return;
  }
  const m = JSON.parse(body.toString('utf8')) as { id?: unknown; method: string; params?: { name?: string } };
  if (m.id === undefined) {
    res.writeHead(202, { 'content-length': 0 });
    res.end();
    return;
  }
  const reply = (result: unknown): void => json(res, 200, { jsonrpc: '2.0', id: m.id, result });
  const error = (id: unknown, message: string): void => json(res, 200, { jsonrpc: '2.0', id, error: { code: -32603, message } });
  if (m.method === 'initialize')
    return reply({ protocolVersion: VERSION, capabilities: { tools: {} }, serverInfo: { name: 'item4-server', version: '1.0.0' } });
  if (m.method === 'tools/list') return reply({ tools: ITEM4_TOOLS });
  if (m.method !== 'tools/call')
    return json(res, 200, {
      jsonrpc: '2.0',
      id: m.id,
      error: { code: -32601, message: `Method not found (${dsn(C4.checkPw, 'db-check.internal')})` },
    });
  if (m.params?.name === 'fail') return error(m.id, dsn(C4.beforePw, 'db-primary.internal'));
  if (m.params?.name === 'fail_null') return error(null, dsn(C4.evidencePw, 'db-replica.internal'));
  if (m.params?.name === 'lookup') return reply({ content: [{ type: 'text', text: 'Found 1 row' }] });
  return reply({
    content: [{ type: 'text', text: `Unknown tool: ${String(m.params?.name)} (${dsn(C4.checkPw, 'db-check.internal')})` }],
    isError: true,
  });
};

/** A shipped policy with capture on (and `arguments` in place of its log.arguments), in the temp dir; returns its path too. */
async function item4Policy(name: 'audit' | 'enforce', args: 'redacted' | 'full'): Promise<{ policy: Policy; file: string }> {
  const text = (await readFile(join(CONFIG, `${name}.yaml`), 'utf8')).replace(/^(\s+arguments:\s*)\w+/m, `$1${args}`);
  assert.match(text, new RegExp(`^\\s+arguments: ${args}$`, 'm'));
  const file = join(dir, `item4-${name}-${args}.yaml`);
  await writeFile(file, `${text}\ncapture:\n  path: ./item4-${name}-${args}.jsonl\n`);
  const loaded = await loadPolicyFile(file, { rewritable: REWRITABLE });
  if (!loaded.ok) throw new Error(`${file}: ${JSON.stringify(loaded.errors)}`);
  return { policy: loaded.policy, file };
}

interface Item4Run extends Run {
  policyFile: string;
  /** What `mcp-warden replay` printed for the capture, by format. */
  replay: { text: string; json: string };
}

/** The requests of one channel each, through a proxy whose upstream URL carries a password; replay of the capture after. */
async function runItem4(
  name: 'audit' | 'enforce',
  args: 'redacted' | 'full',
  calls: Array<{ arguments: unknown } & { name: string }>,
): Promise<Item4Run> {
  const { policy, file } = await item4Policy(name, args);
  const upstream = await startRawServer(item4Server);
  const { lines, log, stream } = rawAndParsed();
  const target = new URL('/mcp', upstream.url);
  target.username = 'app';
  target.password = C4.upstreamPw;
  const proxy = await createProxy({
    upstream: target,
    logger: createLogger({ destination: stream, level: 'trace' }),
    policy: () => policy,
  }).listen(0, '127.0.0.1');
  try {
    const headers = { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': VERSION, [SESSION_HEADER]: SESSION };
    let id = 0;
    const post = async (message: unknown): Promise<string> => {
      const res = await request(new URL('/mcp', proxy.url), { method: 'POST', body: JSON.stringify(message), headers });
      return res.body.text();
    };
    await post({
      jsonrpc: '2.0',
      id: ++id,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'item4-client', version: '1' } },
    });
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await post({ jsonrpc: '2.0', id: ++id, method: 'tools/list', params: {} });
    for (const call of calls) await post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: call });
    await post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'fail', arguments: {} } });
    await post({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name: 'fail_null', arguments: {} } });
    // Not JSON-RPC 2.0: the request-envelope rule quotes it.
    await post({
      jsonrpc: '1.0',
      id: { session: C4.envelopeId },
      method: 'tools/call',
      params: { name: 'lookup', arguments: { query: 'q' } },
      auth: C4.envelope,
    });
    const query = `auth_token=${C4.authToken}&private_token=${C4.privateToken}&X-Amz-Signature=${C4.amzSig}&jwt=${C4.jwtQuery}&pwd=${C4.pwd}&page=2`;
    await (await request(new URL(`/files/report.csv?${query}`, proxy.url))).body.text();
    await log.waitFor((r) => r.msg === 'passthrough');
    await log.waitFor((r) => r.msg === 'exchange' && r.tool === 'fail_null');
  } finally {
    await proxy.close();
    await upstream.close();
  }
  const captureFile = policy.capture!.path;
  const replay = { text: '', json: '' };
  for (const format of ['text', 'json'] as const) {
    let err = '';
    const code = await runReplayCommand(
      captureFile,
      { policy: file, format },
      { write: (t: string) => void (replay[format] += t) },
      { write: (t: string) => void (err += t) },
    );
    assert.equal(code, 0, err);
  }
  return { upstream, lines, log, captureText: await readFile(captureFile, 'utf8'), captureFile, policyFile: file, replay };
}

/** Runs `check` on `url` in this process, in every format; returns each report. */
async function checkReports(url: URL): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const format of ['table', 'json', 'sarif', 'junit', 'markdown']) {
    let text = '';
    const program = new Command('mcp-warden')
      .exitOverride()
      .configureOutput({ writeOut: () => undefined, writeErr: (t) => void (text += t) });
    registerCheckCommand(program, {
      stdout: (t) => void (text += t),
      stderr: (t) => void (text += t),
      exit: () => undefined,
      isTTY: false,
    });
    await program.parseAsync(['node', 'mcp-warden', 'check', url.href, '--probe-timeout', '2s', '--timeout', '20s', '-f', format]);
    out[format] = text;
  }
  return out;
}

describe('issue 10 item 4: a distinct canary through every channel that leaked', () => {
  let enforce: Item4Run;
  let full: Item4Run;
  before(async () => {
    // Under enforce.yaml (arguments redacted): the error-text, envelope, deep-argument and query channels.
    enforce = await runItem4('enforce', 'redacted', [
      { name: 'lookup', arguments: { query: 'weather', deep: nest(40, { note: C4.deep }) } },
    ]);
    // Under audit.yaml with log.arguments: full: a JWT and connection-string passwords, at the top and 40 levels deep.
    const args = {
      query: 'weather in Paris',
      session: JWT,
      dsn: `postgres://app:${C4.fullDsnPw}@db/x`,
      deep: nest(40, { dsn: `postgres://app:${C4.fullDeepPw}@db/x`, note: 'kept as sent' }),
    };
    full = await runItem4('audit', 'full', [{ name: 'lookup', arguments: args }]);
  });

  test('the canaries did travel: the server received or sent every one of them', () => {
    for (const run of [enforce, full]) {
      const sent = run.upstream.requests.map((r) => `${r.url} ${r.body.toString()}`).join('\n');
      // enforce.yaml answers the invalid request itself (request-envelope: block): its canaries stop at the proxy.
      const envelope = run === enforce ? [] : (['envelope', 'envelopeId'] as const);
      for (const k of [...envelope, 'authToken', 'privateToken', 'amzSig', 'jwtQuery', 'pwd'] as const) assert.ok(sent.includes(C4[k]), k);
    }
    assert.ok(!enforce.upstream.requests.some((r) => r.body.toString().includes(C4.envelope)), 'blocked under enforce');
    assert.ok(enforce.upstream.requests.some((r) => r.body.toString().includes(C4.deep)));
    const sent = full.upstream.requests.map((r) => r.body.toString()).join('\n');
    for (const k of ['jwtPayload', 'jwtSig', 'fullDsnPw', 'fullDeepPw'] as const) assert.ok(sent.includes(C4[k]), k);
  });

  test('every channel was exercised: rewrite, violations, request-envelope, deep arguments, pass-through, capture, replay', () => {
    const recs = enforce.log.records;
    assert.ok(
      recs.some((r) => r.msg === 'rewrite' && String(r.before).includes('postgres://app:[REDACTED]@db-primary.internal')),
      'a rewrite whose before copy quotes the error',
    );
    assert.ok(
      recs.some((r) => r.msg === 'violation' && String(r.evidence).includes('postgres://app:[REDACTED]@db-replica.internal')),
      'violation evidence quoting the error',
    );
    assert.ok(
      recs.some((r) => r.msg === 'violation' && r.rule === 'request-envelope' && String(r.evidence).includes('"auth":"[REDACTED]"')),
      'request-envelope evidence',
    );
    const deep = recs.find((r) => r.msg === 'exchange' && r.tool === 'lookup' && typeof r.arguments === 'object');
    assert.match(
      JSON.stringify(deep?.arguments),
      new RegExp(`^\\{"query":"\\[REDACTED\\]","deep":${'\\{"level":'.repeat(40)}\\{"note":"\\[REDACTED\\]"\\}`),
    );
    const pass = recs.find((r) => r.msg === 'passthrough');
    assert.equal(
      pass?.path,
      '/files/report.csv?auth_token=[REDACTED]&private_token=[REDACTED]&X-Amz-Signature=[REDACTED]&jwt=[REDACTED]&pwd=[REDACTED]&page=2',
    );
    const logged = full.log.records.find((r) => r.msg === 'exchange' && r.tool === 'lookup') as
      | { arguments?: Record<string, unknown> }
      | undefined;
    assert.equal(logged?.arguments?.query, 'weather in Paris', 'full is full');
    assert.equal(logged?.arguments?.session, '[REDACTED]');
    assert.equal(logged?.arguments?.dsn, 'postgres://app:[REDACTED]@db/x');
    assert.match(JSON.stringify(logged?.arguments?.deep), /"dsn":"postgres:\/\/app:\[REDACTED\]@db\/x","note":"kept as sent"/);
    for (const run of [enforce, full]) {
      assert.equal(run.captureText.split('\n').filter((l) => l !== '').length, 5, 'initialize, tools/list and the three calls');
      assert.match(run.replay.text, /summary: \d+ exchanges, [1-9]\d* findings?/);
      assert.ok((JSON.parse(run.replay.json) as { summary: { findings: number } }).summary.findings > 0);
    }
    assert.match(enforce.replay.text, /would rewrite [1-9]/);
  });

  test('no canary in any log line (the listening record aside: see below)', () => {
    noCanary4([enforce, full].map((run, i) => [`log ${i}`, run.lines.filter((l) => !l.includes('"msg":"listening"')).join('\n')]));
  });

  test('the listening record shows the upstream without its password', () => {
    const listening = [enforce, full].flatMap((run) => run.lines.filter((l) => l.includes('"msg":"listening"')));
    assert.equal(listening.length, 2);
    noCanary4([['listening', listening.join('\n')]]);
    for (const line of listening) assert.match(line, /"upstream":"http:\/\/app:\[REDACTED\]@127\.0\.0\.1:\d+\/mcp"/);
  });

  test('no canary in the capture', () => {
    noCanary4([enforce, full].map((run) => [run.captureFile, run.captureText]));
  });

  test('no canary in the replay reports of the capture, text and json', () => {
    noCanary4(
      [enforce, full].flatMap(
        (run, i): Array<[string, string]> => [
          [`replay text ${i}`, run.replay.text],
          [`replay json ${i}`, run.replay.json],
        ],
      ),
    );
  });

  test('no canary in the replay reports of a capture written elsewhere, unmasked', async () => {
    // The enforce run's capture of `fail`, with the server's error put back as it was, and more.
    const line = enforce.captureText.split('\n').find((l) => l.includes('"method":"tools/call","params":{"name":"fail"'));
    assert.ok(line);
    const record = JSON.parse(line) as { response: { message: { error: Record<string, unknown> } } };
    record.response.message.error.message = dsn(C4.replayPw, 'db-primary.internal');
    record.response.message.error.data = { token: C4.replayToken, detail: `retry with ${dsn(C4.replayPw, 'db-primary.internal')}` };
    const file = join(dir, 'unmasked.jsonl');
    await writeFile(file, `${JSON.stringify(record)}\nnot json: postgres://app:${C4.replayPw}@db\n`);
    const outs: Array<[string, string]> = [];
    for (const format of ['text', 'json'] as const) {
      let out = '';
      assert.equal(
        await runReplayCommand(
          file,
          { policy: enforce.policyFile, format },
          { write: (t: string) => void (out += t) },
          { write: () => undefined },
        ),
        0,
      );
      assert.match(out, format === 'text' ? /would rewrite 1/ : /"rewrite": 1/);
      outs.push([`replay ${format}`, out]);
    }
    noCanary4(outs);
  });

  test('no canary in any check report (table, json, sarif, junit, markdown) of a server whose errors quote a password', async () => {
    const server = await startRawServer(item4Server);
    try {
      const reports = await checkReports(new URL('/mcp', server.url));
      assert.ok(
        server.requests.some((r) => r.body.toString().includes('"method":"mcp-warden/')) || server.requests.length > 3,
        'check probed the server',
      );
      assert.match(reports.json!, /postgres:\/\/app:\[REDACTED\]@db-check\.internal/, 'the report quotes the error, masked');
      noCanary4(Object.entries(reports).map(([format, text]) => [`check ${format}`, text]));
    } finally {
      await server.close();
    }
  });
});
