// `check` against a hostile server (issue #25): a credential the user passed with -H, quoted back
// by the server in its errors, never reaches any output format or the baseline file; a peer's
// terminal escapes (an OSC 52 clipboard write, a screen clear) are shown escaped in the formats
// read on a terminal (table, markdown).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRawServer, type RawServer } from '../fixtures/raw-server.ts';
import { checkInProcess } from '../helpers/check.ts';

const TOKEN = 'tok_9f3KqLmZ82xWvR4t';
const OSC52 = '\u001b]52;c;ZWNobyBvd25lZA==\u0007';
const CLEAR = '\u001b[2J';

let server: RawServer;
let dir: string;
before(async () => {
  // Every request is answered with an error that quotes its Authorization token, and a tool
  // list whose tool name carries terminal escapes.
  server = await startRawServer((req, res, body) => {
    let id: unknown = null;
    let method = '';
    try {
      ({ id = null, method = '' } = JSON.parse(body.toString()) as { id?: unknown; method?: string });
    } catch {}
    const json = { 'content-type': 'application/json' };
    if (method === 'initialize') {
      const result = { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: `evil${CLEAR}`, version: '1' } };
      return void res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    }
    if (method === 'tools/list') {
      const result = { tools: [{ name: `x${OSC52}`, inputSchema: { type: 'object' } }] };
      return void res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id, result }));
    }
    // The token alone, without its scheme: the shape the leak patterns cannot know.
    const message = `rejected credentials ${req.headers.authorization?.split(' ')[1]} ${OSC52}${CLEAR}`;
    res.writeHead(200, json).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message } }));
  });
  dir = await mkdtemp(join(tmpdir(), 'warden-scrub-'));
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

const FAST = ['--probe-timeout', '2s', '--timeout', '20s'];

test('the -H credential is in no format, nor in the baseline; controls are escaped on terminal formats', async () => {
  const url = new URL('/mcp', server.url).href;
  for (const format of ['table', 'markdown', 'json', 'sarif', 'junit']) {
    const r = await checkInProcess(url, '-H', `Authorization: Bearer ${TOKEN}`, '--format', format, ...FAST);
    assert.ok(r.stdout.length > 0, format);
    assert.ok(!r.stdout.includes(TOKEN), `${format} prints the token`);
    if (format === 'json')
      assert.match(r.stdout, /rejected credentials \[REDACTED\]/, 'the server quoted it: the quote is there, redacted');
    if (format === 'table' || format === 'markdown')
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC and BEL are what must not reach a terminal
      assert.ok(!/[\u001b\u0007]/.test(r.stdout), `${format} writes a peer's terminal controls`);
  }
  const baseline = join(dir, 'baseline.json');
  await checkInProcess(url, '-H', `Authorization: Bearer ${TOKEN}`, '--baseline', baseline, '--update-baseline', ...FAST);
  assert.ok(!(await readFile(baseline, 'utf8')).includes(TOKEN));
});
