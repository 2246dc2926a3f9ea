// `--workers 2` with capture on: two clients of a server that issues no session id (the proxy then
// keeps each one's state, its tool catalogue, per credential), each request on a new connection,
// so each client's requests land on both workers. The capture labels a credential the same in
// both workers' lines (one key for all the workers, never written), and a replay of it keeps the
// two catalogues apart as the proxy did: the same findings and decisions.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { replayFile } from '../../src/commands/replay.ts';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { cliArgs } from '../helpers/bundle.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { liveJudgements, replayedJudgements } from '../helpers/replay-compare.ts';

const CLI = await cliArgs();
const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** Each credential's catalogue: the server knows one tool per client. */
const TOOLS: Record<string, string> = { 'Bearer client-a': 'alpha', 'Bearer client-b': 'beta' };

test('a credential has one label in every worker, and the replay keeps the catalogues apart as the proxy did', async () => {
  const server = await startRawServer((req, res, body) => {
    const msg = JSON.parse(body.toString('utf8')) as { id: number; method: string; params?: { name?: string } };
    const mine = TOOLS[String(req.headers.authorization)] ?? '';
    const result =
      msg.method === 'initialize'
        ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'stateless', version: '1' } }
        : msg.method === 'tools/list'
          ? { tools: [{ name: mine, inputSchema: { type: 'object', properties: {} } }] }
          : msg.params?.name === mine
            ? { content: [{ type: 'text', text: 'done' }] }
            : { content: [{ type: 'text', text: `Unknown tool: ${msg.params?.name}` }], isError: true };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
  });
  closers.push(server.close);
  const dir = await mkdtemp(join(tmpdir(), 'warden-replay-workers-'));
  closers.push(() => rm(dir, { recursive: true, force: true }));
  const policyFile = join(dir, 'policy.yaml');
  await writeFile(policyFile, 'mode: audit\ncapture: { path: ./capture.jsonl }\n');

  const child = spawn(
    process.execPath,
    [...CLI, 'proxy', '--upstream', new URL('/mcp', server.url).href, '--listen', '127.0.0.1:0', '--workers', '2', '--policy', policyFile],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  closers.push(async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  });
  const records: LogRecord[] = [];
  let pending = '';
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString();
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      records.push(JSON.parse(pending.slice(0, nl)) as LogRecord);
      pending = pending.slice(nl + 1);
    }
  });
  const waitFor = async (pred: (r: LogRecord) => boolean, count: number): Promise<LogRecord[]> => {
    for (let i = 0; i < 500; i++) {
      const found = records.filter(pred);
      if (found.length >= count) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`not logged: ${JSON.stringify(records.slice(-5))}`);
  };
  const url = new URL(String((await waitFor((r) => r.msg === 'listening', 2))[0]!.listen));

  // Each request on a new connection: they alternate between the workers.
  let sent = 0;
  const post = async (authorization: string, id: number, method: string, params: Record<string, unknown> = {}) => {
    sent++;
    const res = await request(url, {
      method: 'POST',
      reset: true,
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    await res.body.text();
  };
  for (const [auth, base] of [
    ['Bearer client-a', 100],
    ['Bearer client-b', 200],
  ] as const) {
    await post(auth, base, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } });
    await post(auth, base + 1, 'tools/list');
  }
  for (let round = 0; round < 2; round++)
    for (const [auth, base] of [
      ['Bearer client-a', 100],
      ['Bearer client-b', 200],
    ] as const) {
      await post(auth, base + 10 + round * 2, 'tools/call', { name: 'alpha' });
      await post(auth, base + 11 + round * 2, 'tools/call', { name: 'beta' });
    }
  const exchanges = await waitFor((r) => r.msg === 'exchange', sent);
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.deepEqual(new Set(exchanges.map((r) => r.worker)), new Set([1, 2]), 'both workers served');

  const lines = (await readFile(join(dir, 'capture.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { principal?: string; request: { message: { id: number } } });
  assert.equal(lines.length, sent);
  const labels = (base: number) =>
    new Set(lines.filter((l) => Math.floor(l.request.message.id / 100) === base / 100).map((l) => l.principal));
  const [a, b] = [labels(100), labels(200)];
  assert.equal(a.size, 1, `one label for client a: ${[...a].join(', ')}`);
  assert.equal(b.size, 1, `one label for client b: ${[...b].join(', ')}`);
  assert.notDeepEqual(a, b);
  const capture = lines.map((l) => JSON.stringify(l)).join('\n');
  for (const secret of ['client-a', 'client-b']) assert.equal(capture.includes(secret), false);

  const loaded = await loadPolicyFile(policyFile, { rewritable: REWRITABLE });
  assert.ok(loaded.ok);
  const report = await replayFile(join(dir, 'capture.jsonl'), loaded.policy);
  const live = liveJudgements(records, new Set(report.coverage.judged.rules));
  assert.equal(live.findings.filter((f) => f.includes('unknown-tool-as-iserror')).length, 4, JSON.stringify(live));
  assert.deepEqual(replayedJudgements(report), live);
});
