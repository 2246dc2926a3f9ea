// #25: credentials in the fields nobody tried before: a tool name, a request id, a method name, a
// client's name and version (log records and exported spans), a key glued to a word (`x-AKIA…`,
// `x_sk-…`) in a capture, a rewrite's `before`, and a pass-through's query (`?access_token=`,
// `?sessionId=`). One session through the real proxy under enforce.yaml with capture and tracing
// on; every log line, the capture and every span are searched for the secrets.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { loadPolicyText } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { Tracing } from '../../src/sinks/tracing.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { post } from '../helpers/faults.ts';
import { startProxy } from '../helpers/proxy.ts';

const AWS = 'AKIAIOSFODNN7EXAMPLQ';
const GITHUB = 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const OPENAI = 'sk-Ab1Cd2Ef3Gh4Ij5Kl6Mn7';
const QUERY_TOKEN = 'cnry-query-4Tz8';
const LEGACY_SESSION = 'cnry-legacy-session-2Vb6';
const SECRETS = [AWS, GITHUB, OPENAI, QUERY_TOKEN, LEGACY_SESSION];

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

describe('credential-shaped peer strings (#25)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'warden-peer-'));
  closers.push(() => rm(dir, { recursive: true, force: true }));
  const capturePath = join(dir, 'capture.jsonl');
  const yaml = (await readFile(fileURLToPath(new URL('../../config/enforce.yaml', import.meta.url)), 'utf8')).replace(
    '# No capture: production does not write exchanges to a file (capture is opt-in).',
    `capture:\n  path: ${JSON.stringify(capturePath)}`,
  );
  const loaded = loadPolicyText(yaml, 'enforce-capture.yaml', { rewritable: REWRITABLE });
  assert.ok(loaded.ok, loaded.ok ? '' : JSON.stringify(loaded.errors));
  const policy = loaded.policy;

  const spansBodies: string[] = [];
  const receiver = await startRawServer((req, res, body) => {
    if (req.url === '/v1/traces') spansBodies.push(body.toString('utf8'));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  closers.push(() => receiver.close());
  const upstream = await startRawServer((req, res, body) => {
    if (req.method !== 'POST') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      return;
    }
    const m = JSON.parse(body.toString() || 'null') as { id: unknown; method: string; params?: { name?: string } };
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' });
    if (m.method === 'initialize') {
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: m.id,
          result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } },
        }),
      );
    } else if (m.method === 'tools/list') {
      res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] } }));
    } else {
      // An unknown tool answered as a plain result: enforce rewrites it, and the rewrite's `before` quotes it.
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: m.id,
          result: { content: [{ type: 'text', text: `Unknown tool: ${m.params?.name ?? m.method}` }] },
        }),
      );
    }
  });
  closers.push(() => upstream.close());
  const tracing = Tracing.fromOptions({ endpoint: new URL('/v1/traces', receiver.url).href, env: {}, version: '0.0.0-test' })!;
  const proxy = await startProxy(new URL('/mcp', upstream.url), { policy: () => policy, tracing });
  closers.push(() => proxy.close());

  const H = { 'mcp-session-id': 's1', 'mcp-protocol-version': '2025-06-18' };
  const send = async (message: unknown) => (await post(proxy.url, JSON.stringify(message), H)).body.text();
  await send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: `cli-${GITHUB}`, version: `v-${AWS}` } },
  });
  await send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  const rewritten = await send({ jsonrpc: '2.0', id: GITHUB, method: 'tools/call', params: { name: `x-${AWS}`, arguments: {} } });
  await send({ jsonrpc: '2.0', id: 3, method: `x_${OPENAI}`, params: {} });
  await (await request(new URL(`/other?access_token=${QUERY_TOKEN}&sessionId=${LEGACY_SESSION}`, proxy.url))).body.text();
  await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 3);
  await proxy.log.waitFor((r) => r.msg === 'passthrough');
  await proxy.close();
  await tracing.shutdown();
  const lines = proxy.log.records.map((r) => JSON.stringify(r));
  const capture = await readFile(capturePath, 'utf8');
  const spans = spansBodies.join('\n');

  test('the secrets did travel: the client got its rewrite, the log has the records, spans were exported', () => {
    assert.match(rewritten, /-32602/);
    assert.ok(proxy.log.find((r) => r.msg === 'rewrite'));
    assert.ok(proxy.exchanges().length >= 4);
    assert.ok(spans.includes('tools/call'));
    assert.ok(capture.length > 0);
  });

  for (const [where, text] of [
    ['log lines', () => lines.join('\n')],
    ['capture', () => capture],
    ['spans', () => spans],
  ] as const) {
    test(`no secret in the ${where}`, () => {
      for (const secret of SECRETS) assert.equal(text().includes(secret), false, `${secret} in the ${where}`);
    });
  }

  test('what is not secret stays readable: the glue word, the method, the masked marker', () => {
    const call = proxy.exchanges().find((r) => r.method === 'tools/call');
    assert.equal(call?.tool, 'x-[REDACTED]');
    assert.equal(call?.id, '[REDACTED]');
    assert.equal(call?.clientName, 'cli-[REDACTED]');
    assert.equal(call?.clientVersion, 'v-[REDACTED]');
    assert.ok(proxy.exchanges().some((r) => r.method === 'x_[REDACTED]'));
    assert.equal(proxy.log.find((r) => r.msg === 'passthrough')?.path, '/other?access_token=[REDACTED]&sessionId=[REDACTED]');
  });

  test('a 1 MB tool name is written cut to 1,024 characters, in the exchange and in its violation', async () => {
    const long = await startProxy(new URL('/mcp', upstream.url));
    closers.push(() => long.close());
    const name = 'n'.repeat(1_000_000);
    const sendLong = async (message: unknown) => (await post(long.url, JSON.stringify(message), H)).body.text();
    await sendLong({ jsonrpc: '2.0', id: 5, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {} } });
    await sendLong({ jsonrpc: '2.0', id: 6, method: 'tools/list', params: {} });
    await (
      await post(long.url, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: {} } }), H)
    ).body.text();
    const record = await long.log.waitFor((r) => r.msg === 'exchange' && r.id === 7);
    assert.equal(record.tool, `${'n'.repeat(1024)}…[1000000 chars]`);
    const violation = long.log.find((r) => r.msg === 'violation' && r.id === 7);
    assert.equal(violation?.rule, 'unknown-tool-as-result');
    const longest = Math.max(...long.log.records.map((r) => JSON.stringify(r).length));
    assert.ok(longest < 16_384, `a record of ${longest} characters`);
  });
});
