// A tool schema's regular expressions cannot stall the proxy (issue #25): a server whose
// tools/list carries `^(a+)+$` (in an inputSchema, an outputSchema, patternProperties, a $defs
// schema) gets its tools/call judged, with the right verdict, and another session's ping answered.
// The proxy runs as a child process, so a stalled event loop fails the test within its bounds
// instead of hanging the runner; under V8's backtracking each of these calls would take hours.
// A pattern RE2 cannot run (lookaround, a backreference) leaves the exchange unjudged
// (`unsafe-schema`): one warn record per schema, the metric counted, the answer relayed unchanged.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startRawServer, type RawHandler } from '../fixtures/raw-server.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { post, within } from '../helpers/faults.ts';
import { createLogCapture, type LogCapture, type LogRecord } from '../helpers/log-capture.ts';
import { startProxy } from '../helpers/proxy.ts';

const CLI = await cliArgs();
const ENFORCE = fileURLToPath(new URL('../../config/enforce.yaml', import.meta.url));
const VERSION = '2025-11-25';
/** Far past what any step takes; a stalled proxy would hold each of them for hours. */
const BOUND = 20_000;

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const EVIL = '^(a+)+$';
const POISON = `${'a'.repeat(40)}!`;
const TOOLS = [
  { name: 'evil_input', inputSchema: { type: 'object', properties: { q: { type: 'string', pattern: EVIL } } } },
  {
    name: 'evil_nested',
    inputSchema: { type: 'object', properties: { q: { $ref: '#/$defs/word' } }, $defs: { word: { type: 'string', pattern: EVIL } } },
  },
  { name: 'evil_keys', inputSchema: { type: 'object', patternProperties: { [EVIL]: { type: 'integer' } } } },
  {
    name: 'evil_output',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', properties: { r: { type: 'string', pattern: EVIL } } },
  },
  // A lookahead as catastrophic as EVIL: RE2 cannot run it, and V8 never gets to.
  { name: 'lookahead', inputSchema: { type: 'object', properties: { q: { type: 'string', pattern: '^(?=(a+)+$)a' } } } },
  { name: 'backreference', inputSchema: { type: 'object', properties: { q: { type: 'string', pattern: '^(a)\\1$' } } } },
  {
    name: 'lookbehind_output',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', properties: { r: { type: 'string', pattern: '(?<=a)b' } } },
  },
  { name: 'plain', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } },
];

/** What the upstream answers each call with, by tool: a protocol error for bad arguments, or a result. */
const CALL_ANSWERS: Record<string, unknown> = {
  evil_output: { content: [{ type: 'text', text: 'done' }], structuredContent: { r: POISON } },
  lookbehind_output: { content: [{ type: 'text', text: 'done' }], structuredContent: { r: 'ab' } },
  plain: { content: [{ type: 'text', text: 'done' }] },
};

/** An MCP server over raw HTTP: sessions, the tools above, ping, and the scripted calls. */
const server: RawHandler = (_req, res, body) => {
  const msg = JSON.parse(body.toString()) as { id?: number; method: string; params?: { name?: string } };
  if (msg.id === undefined) return void res.writeHead(202).end();
  const answer = (member: Record<string, unknown>, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, ...member }));
  };
  if (msg.method === 'initialize') {
    const result = { protocolVersion: VERSION, capabilities: { tools: {} }, serverInfo: { name: 'patterns', version: '1' } };
    return answer({ result }, { 'mcp-session-id': `session-${msg.id}` });
  }
  if (msg.method === 'tools/list') return answer({ result: { tools: TOOLS } });
  if (msg.method === 'ping') return answer({ result: {} });
  const result = CALL_ANSWERS[msg.params?.name ?? ''];
  answer(result ? { result } : { error: { code: -32602, message: 'Invalid params' } });
};

interface Client {
  /** Sends a request in the session; the parsed answer. */
  request(id: number, method: string, params?: unknown): Promise<{ text: string; body: Record<string, unknown> }>;
}

/** A session through the proxy at `url`, initialized; `id` names it (session-<id>). */
async function session(url: URL, id: number): Promise<Client> {
  const send = async (headers: Record<string, string>, message: Record<string, unknown>) => {
    const res = await post(url, JSON.stringify({ jsonrpc: '2.0', ...message }), headers);
    const text = await res.body.text();
    return { text, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };
  await send(
    {},
    { id, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } } },
  );
  const headers = { 'mcp-session-id': `session-${id}`, 'mcp-protocol-version': VERSION };
  await send(headers, { method: 'notifications/initialized' });
  return { request: (rid, method, params) => send(headers, { id: rid, method, ...(params === undefined ? {} : { params }) }) };
}

/** The proxy CLI in a child process, its log read from stdout. */
async function childProxy(upstream: URL, args: string[]): Promise<{ url: URL; log: LogCapture }> {
  const child = spawn(process.execPath, [...CLI, 'proxy', '--upstream', upstream.href, '--listen', '127.0.0.1:0', '--no-pretty', ...args], {
    cwd: new URL('../../', import.meta.url),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  closers.push(async () => void child.kill('SIGKILL'));
  const log = createLogCapture();
  child.stdout.on('data', (chunk: Buffer) => log.stream.write(chunk.toString()));
  const listening = await log.waitFor((r) => r.msg === 'listening', BOUND);
  return { url: new URL(String(listening.listen)), log };
}

const violationsOf = (log: LogCapture, id: number): LogRecord[] => log.records.filter((r) => r.msg === 'violation' && r.id === id);

describe('a catastrophic schema pattern is judged in linear time', () => {
  for (const mode of ['audit', 'enforce'] as const) {
    test(`${mode}: each call is judged with the right verdict, and another session's ping is answered`, {
      timeout: 8 * BOUND,
    }, async () => {
      const upstream = await startRawServer(server);
      closers.push(() => upstream.close());
      const proxy = await childProxy(new URL('/mcp', upstream.url), mode === 'enforce' ? ['--policy', ENFORCE] : []);
      const a = await session(proxy.url, 1);
      const b = await session(proxy.url, 2);
      await a.request(3, 'tools/list');
      const cases: Array<[tool: string, args: Record<string, unknown>, rule: string, says: RegExp]> = [
        ['evil_input', { q: POISON }, 'input-validation-as-protocol-error', /\/q must match pattern/],
        ['evil_nested', { q: POISON }, 'input-validation-as-protocol-error', /\/q must match pattern/],
        ['evil_keys', { [POISON]: 'x', [POISON.slice(0, -1)]: 'x' }, 'input-validation-as-protocol-error', /\/a+ must be integer/],
        ['evil_output', {}, 'structured-output', /\/r must match pattern/],
      ];
      let id = 10;
      for (const [tool, args, rule, says] of cases) {
        const callId = ++id;
        const pingId = ++id;
        const [call, ping] = await within(
          BOUND,
          `${tool}: the call and the ping`,
          Promise.all([a.request(callId, 'tools/call', { name: tool, arguments: args }), b.request(pingId, 'ping')]),
        );
        assert.equal(call.body.id, callId, call.text);
        assert.deepEqual(ping.body, { jsonrpc: '2.0', id: pingId, result: {} });
        const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === callId, BOUND);
        assert.equal(record.unjudged, undefined, `${tool} was judged in full`);
        const found = violationsOf(proxy.log, callId).filter((v) => v.rule === rule);
        assert.equal(found.length, 1, `${tool}: ${rule}`);
        assert.match(String(found[0]!.message), says);
      }
      // The same schemas with arguments that pass: judged, and nothing found.
      const passId = ++id;
      await within(BOUND, 'a passing call', a.request(passId, 'tools/call', { name: 'evil_input', arguments: { q: 'aaaa' } }));
      await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === passId, BOUND);
      assert.deepEqual(
        violationsOf(proxy.log, passId).map((v) => v.rule),
        [],
      );
      // A lookahead RE2 cannot run: never handed to V8 (it would not return), the exchange unjudged.
      const lookId = ++id;
      await within(BOUND, 'the lookahead call', a.request(lookId, 'tools/call', { name: 'lookahead', arguments: { q: POISON } }));
      const looked = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === lookId, BOUND);
      assert.equal(looked.unjudged, 'unsafe-schema');
      assert.deepEqual(
        violationsOf(proxy.log, lookId).map((v) => v.rule),
        [],
      );
    });
  }
});

describe('a schema whose pattern RE2 cannot run is not judged, and says so', () => {
  test('enforce: one warn record per schema, each exchange unjudged and counted, the answer relayed unchanged', async () => {
    const upstream = await startRawServer(server);
    closers.push(() => upstream.close());
    const loaded = await loadPolicyFile(ENFORCE, { rewritable: REWRITABLE });
    assert.ok(loaded.ok);
    const { policy } = loaded;
    const proxy = await startProxy(new URL('/mcp', upstream.url), { policy: () => policy });
    closers.push(() => proxy.close());
    const a = await session(proxy.url, 1);
    const b = await session(proxy.url, 2);
    await a.request(3, 'tools/list');
    await b.request(4, 'tools/list');
    const expected = JSON.stringify({ jsonrpc: '2.0', id: 5, error: { code: -32602, message: 'Invalid params' } });
    const first = await a.request(5, 'tools/call', { name: 'backreference', arguments: { q: 'ab' } });
    assert.equal(first.text, expected, 'relayed as the server sent it');
    await b.request(6, 'tools/call', { name: 'backreference', arguments: { q: 'ab' } });
    const output = await a.request(7, 'tools/call', { name: 'lookbehind_output', arguments: {} });
    assert.equal(output.text, JSON.stringify({ jsonrpc: '2.0', id: 7, result: CALL_ANSWERS.lookbehind_output }));
    // A call no rule validates against the schema (a plain result) is judged in full.
    await a.request(8, 'tools/call', { name: 'plain', arguments: { q: 'x' } });
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 8);

    const exchanges = new Map(proxy.exchanges().map((r) => [r.id, r]));
    assert.deepEqual(
      [5, 6, 7, 8].map((id) => [exchanges.get(id)?.unjudged, exchanges.get(id)?.level]),
      [
        ['unsafe-schema', 40],
        ['unsafe-schema', 40],
        ['unsafe-schema', 40],
        [undefined, 30],
      ],
    );
    const notices = proxy.log.records.filter((r) => r.msg === 'schema not judged');
    const shown = ({ level, tool, schema, pattern, why, session }: LogRecord) => ({ level, tool, schema, pattern, why, session });
    assert.deepEqual(
      notices.map(shown),
      [
        { level: 40, tool: 'backreference', schema: 'inputSchema', pattern: '^(a)\\1$', why: 'a backreference', session: 'session-1' },
        {
          level: 40,
          tool: 'lookbehind_output',
          schema: 'outputSchema',
          pattern: '(?<=a)b',
          why: 'a lookaround assertion',
          session: 'session-1',
        },
      ],
      'once per schema, across calls and sessions',
    );
    assert.equal(notices[0]!.protocolVersion, VERSION);
    assert.match(await proxy.metrics.registry.metrics(), /mcp_warden_unjudged_total\{reason="unsafe-schema"\} 3\b/);
    // Nothing was found about the calls: the check that could not run found nothing either.
    assert.equal(proxy.log.records.filter((r) => r.msg === 'violation' && [5, 6, 7].includes(r.id as number)).length, 0);
  });
});
