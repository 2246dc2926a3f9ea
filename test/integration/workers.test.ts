// `--workers 2`: two processes on one port, each connection to the next (node:cluster). A session
// whose requests land on different workers is judged exactly as by one process: the same findings
// on the same requests, because what one worker learns (the version from initialize, the tool
// catalogue from tools/list, the session's end) reaches the other. The real CLI, the demo's broken
// server (and one whose unknown tool gets a plain result, so that only the catalogue tells), a new
// connection per request.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, test } from 'node:test';
import { request } from 'undici';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { startCheckServer } from '../fixtures/check-servers.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { eventually } from '../helpers/faults.ts';
import { driveSession as drive, findingsOf as findings, postRpc } from '../helpers/session-drive.ts';
import { startWorkersCli } from '../helpers/workers-cli.ts';

const CLI = await cliArgs();
const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** The proxy CLI with `workers` (and an admin port); its log records, its URL, a stop. */
const startCli = (upstream: URL, workers: number, admin?: string) =>
  startWorkersCli(upstream, workers, admin ? ['--admin', admin] : [], closers);

test('two workers judge a session whose requests alternate between them exactly as one process does', async () => {
  const server = await startBrokenServer();
  closers.push(server.close);

  const one = await startCli(server.url, 1);
  const requests = await drive(one.url);
  await one.waitFor((r) => r.msg === 'exchange', requests);
  const alone = findings(one.records);
  await one.stop();

  const two = await startCli(server.url, 2, '127.0.0.1:0');
  await drive(two.url);
  const exchanges = await two.waitFor((r) => r.msg === 'exchange', requests);
  assert.deepEqual(new Set(exchanges.map((r) => r.worker)), new Set([1, 2]), 'both workers served the session');
  const list = exchanges.find((r) => r.method === 'tools/list')!;
  const unknownElsewhere = two.records.filter(
    (r) => r.msg === 'violation' && r.rule === 'unknown-tool-as-iserror' && r.worker !== list.worker,
  );
  assert.ok(unknownElsewhere.length > 0, 'an unknown tool judged by the worker that did not read tools/list: it knew the catalogue');
  assert.ok(
    exchanges.filter((r) => r.worker !== exchanges[0]!.worker).every((r) => r.protocolVersion === '2025-11-25'),
    'the version learned from initialize on one worker judges the other',
  );
  assert.deepEqual(findings(two.records), alone, 'the same findings on the same requests');
  assert.ok(alone.length > 5);
  assert.equal(await two.stop(), 0, 'SIGTERM stops the primary and its workers, exit 0');
  assert.ok(two.records.some((r) => r.role === 'primary' && r.msg === 'stopped'));
});

test('a tool the catalogue lacks, answered with a plain result on the worker that did not read tools/list, is flagged there: the catalogue reached it', async () => {
  // Only the catalogue tells: the server answers a tool it does not have as if it ran.
  const server = await startCheckServer({ versions: ['2025-11-25'], faults: ['unknown-tool-result'] });
  closers.push(() => server.close());
  const two = await startCli(server.url, 2);
  // A new connection per request: node:cluster hands them to the workers in turn.
  const post = (id: number, method: string, params: Record<string, unknown>, session?: string) =>
    postRpc(two.url, id, method, params, session);
  const { session } = await post(1, 'initialize', {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'workers', version: '1' },
  });
  await post(2, 'tools/list', {}, session);
  // The catalogue reaches the other worker through the primary, one IPC hop after tools/list was
  // answered (the client's next request may be quicker): calls until one there is flagged.
  let id = 3;
  const flaggedElsewhere = (): boolean => {
    const list = two.records.find((r) => r.msg === 'exchange' && r.method === 'tools/list');
    const flagged = two.records.filter((r) => r.msg === 'violation' && r.rule === 'unknown-tool-as-result');
    return two.records.some(
      (r) =>
        r.msg === 'exchange' &&
        r.method === 'tools/call' &&
        list !== undefined &&
        r.worker !== list.worker &&
        flagged.some((f) => f.id === r.id && f.worker === r.worker),
    );
  };
  await eventually(
    20_000,
    () => `no call on the worker that did not read tools/list was flagged (${id - 3} calls)`,
    async () => {
      await post(id++, 'tools/call', { name: 'no_such_tool', arguments: {} }, session);
      return flaggedElsewhere();
    },
  );
});

test('the primary restarts a worker that dies, and /metrics sums the workers', async () => {
  const server = await startBrokenServer();
  closers.push(server.close);
  const cli = await startCli(server.url, 2, '127.0.0.1:0');
  const [adminRecord] = await cli.waitFor((r) => r.msg === 'admin listening');
  const admin = new URL('/metrics', String(adminRecord!.admin));
  const worker = cli.records.find((r) => r.msg === 'listening')!;
  process.kill(Number(worker.pid), 'SIGKILL');
  await cli.waitFor((r) => r.msg === 'worker exited; starting another');
  await cli.waitFor((r) => r.msg === 'listening', 3);
  const requests = await drive(cli.url);
  await cli.waitFor((r) => r.msg === 'exchange', requests);
  const metrics = await (await request(admin)).body.text();
  const total = [...metrics.matchAll(/^mcp_warden_exchanges_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  assert.equal(total, requests, 'every exchange, whichever worker served it');
  assert.match(metrics, /^mcp_warden_build_info\{version="[^"]+",node="[^"]+"\} 1$/m, 'one build, not one per worker');
  // #27: /report was a bare 404 here; it says why there is none, and what to do instead.
  for (const path of ['/report', '/report.json']) {
    const res = await request(new URL(path, admin));
    assert.equal(res.statusCode, 501, path);
    const body = (await res.body.json()) as { error: string; why: string };
    assert.equal(body.error, 'report not available');
    assert.match(body.why, /each worker keeps its own live report.*mcp-warden report LOG/);
  }
});

test('--workers: auto is one per core; a bad count is refused at start', async () => {
  const { parseWorkers } = await import('../../src/config/cli-options.ts');
  const { availableParallelism } = await import('node:os');
  assert.equal(parseWorkers('auto'), availableParallelism());
  assert.equal(parseWorkers('3'), 3);
  for (const bad of ['0', '-1', '1.5', 'many', '257'])
    assert.throws(() => parseWorkers(bad), /--workers takes a number from 1 to 256, or auto/);
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [...CLI, 'proxy', '--upstream', 'http://127.0.0.1:9/sse', ...args], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
      });
      child.once('exit', (code) => resolve({ code, stderr }));
    });
  const bad = await run(['--workers', 'lots']);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--workers takes a number from 1 to 256, or auto/);
});
