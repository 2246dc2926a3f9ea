// Review of `--workers N` (proxy/workers.ts, commands/proxy.ts runPrimary): what goes wrong with N
// processes that one process gets right. Each test is a bug found in review (each failed before
// its fix); the real CLI, real upstreams on 127.0.0.1, real signals.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Pool, request } from 'undici';
import { startBrokenServer } from '../../src/demo/broken-server.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { freePort } from '../../src/proxy/listen.ts';

const CLI = await cliArgs();
const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

type Rec = Record<string, unknown>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const rpc = (id: number, method: string, params: Rec = {}) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

/** A hand-written upstream: `answer` gets each JSON-RPC request and replies (or holds the reply). */
async function startUpstream(answer: (msg: Rec, reply: (result: unknown, headers?: Record<string, string>) => void) => void) {
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let msg: Rec;
    try {
      msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Rec;
    } catch {
      return void res.writeHead(400).end();
    }
    if (msg.id === undefined) return void res.writeHead(202).end();
    answer(msg, (result, headers = {}) => {
      res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return url;
}

/** `mcp-warden proxy --workers N`; its records as they come, and every process it started is ended at the end. */
async function startCli(upstream: URL, extra: string[], opts: { workers?: number; detached?: boolean; waitListening?: boolean } = {}) {
  const workers = opts.workers ?? 2;
  const child: ChildProcess = spawn(
    process.execPath,
    [...CLI, 'proxy', '--upstream', upstream.href, '--workers', String(workers), ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: opts.detached ?? false },
  );
  const lines: string[] = [];
  const records: Rec[] = [];
  let pending = '';
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout!.on('data', (d: Buffer) => {
    pending += d.toString();
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      lines.push(line);
      try {
        records.push(JSON.parse(line) as Rec);
      } catch {
        records.push({ unparsable: line });
      }
    }
  });
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    }),
  );
  const waitFor = async (pred: (r: Rec) => boolean, count = 1, ms = 15_000): Promise<Rec[]> => {
    for (const end = Date.now() + ms; Date.now() < end; ) {
      const found = records.filter(pred);
      if (found.length >= count) return found;
      if (exit) break;
      await sleep(10);
    }
    throw new Error(`not logged: ${JSON.stringify(records.slice(-5))} ${stderr.slice(0, 2000)}`);
  };
  const workerPids = () => records.filter((r) => typeof r.pid === 'number').map((r) => r.pid as number);
  closers.push(async () => {
    if (!exit) {
      child.kill('SIGTERM');
      await Promise.race([exited, delay(15_000, undefined, { ref: false })]);
      if (!exit) child.kill('SIGKILL');
    }
    // A worker left behind by a primary that died.
    for (const pid of new Set(workerPids())) {
      try {
        // Only if it is still one of ours (the pid not reused).
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(CLI.at(-1)!)) process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  const listening = opts.waitListening === false ? [] : await waitFor((r) => r.msg === 'listening', workers);
  return {
    child,
    records,
    lines,
    waitFor,
    exited,
    exit: () => exit,
    stderr: () => stderr,
    url: listening[0] ? new URL(String(listening[0].listen)) : undefined,
  };
}

test('Ctrl-C (SIGINT to the process group) lets in-flight exchanges finish, as SIGINT to one process does', {}, async () => {
  const upstream = await startUpstream((msg, reply) => {
    setTimeout(() => reply({ content: [{ type: 'text', text: 'done' }] }), msg.method === 'tools/call' ? 1500 : 0);
  });
  const cli = await startCli(upstream, ['--listen', '127.0.0.1:0'], { detached: true });
  const call = request(cli.url!, {
    method: 'POST',
    headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-06-18' },
    body: rpc(1, 'tools/call', { name: 'slow', arguments: {} }),
  }).then(
    async (r) => ({ status: r.statusCode, body: await r.body.text() }),
    (err: Error) => ({ status: 0, body: err.message }),
  );
  await sleep(300);
  // A terminal's Ctrl-C: every process of the foreground group gets SIGINT.
  process.kill(-cli.child.pid!, 'SIGINT');
  const answer = await call;
  const { code } = await cli.exited;
  assert.equal(code, 0);
  assert.equal(answer.status, 200, `the in-flight call finished (got ${answer.body})`);
  assert.match(answer.body, /"done"/);
});

test('a SIGHUP (reload) soon after start reloads the workers, it does not kill them', {}, async () => {
  const upstream = await startUpstream((_msg, reply) => reply({}));
  const cli = await startCli(upstream, ['--listen', '127.0.0.1:0'], { waitListening: false });
  await cli.waitFor((r) => r.msg === 'workers started');
  cli.child.kill('SIGHUP');
  await cli.waitFor((r) => r.msg === 'listening', 2);
  await sleep(200);
  const died = cli.records.filter((r) => String(r.msg).startsWith('worker exited'));
  assert.deepEqual(
    died.map((r) => r.signal),
    [],
    'no worker exited',
  );
});

test('the primary survives a worker dying while it relays that worker a fact', {}, async () => {
  const upstream = await startUpstream((msg, reply) =>
    reply(msg.method === 'tools/list' ? { tools: [{ name: 'a', inputSchema: { type: 'object' } }] } : {}),
  );
  const cli = await startCli(upstream, ['--listen', '127.0.0.1:0']);
  const client = new Client(cli.url!.origin);
  closers.push(() => client.close().catch(() => {}));
  let id = 0;
  const list = async () => {
    const r = await client.request({
      path: cli.url!.pathname,
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-06-18' },
      body: rpc(++id, 'tools/list'),
    });
    await r.body.text();
  };
  await list();
  const [served] = await cli.waitFor((r) => r.msg === 'exchange');
  const other = cli.records.find((r) => r.msg === 'listening' && r.pid !== served!.pid)!;
  // The primary busy for a moment (a GC pause, a starved core): a fact from the serving worker
  // waits in its channel, and meanwhile the other worker dies.
  process.kill(cli.child.pid!, 'SIGSTOP');
  try {
    await list();
    process.kill(Number(other.pid), 'SIGKILL');
    await sleep(200);
  } finally {
    process.kill(cli.child.pid!, 'SIGCONT');
  }
  await sleep(1500);
  assert.equal(cli.exit(), undefined, `the primary is still running (stderr: ${cli.stderr().slice(0, 300)})`);
  await cli.waitFor((r) => r.msg === 'worker exited; starting another');
});

test("a client's initialize with deeply nested capabilities is logged and judged, and its session known on every worker", {}, async () => {
  const server = await startBrokenServer();
  closers.push(server.close);
  const cli = await startCli(server.url, ['--listen', '127.0.0.1:0']);
  // 200 KB, well under --max-body: JSON.parse reads it; JSON.stringify (the IPC channel's) overflows the stack.
  const depth = 100_000;
  const body = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"x":${'['.repeat(depth)}${']'.repeat(depth)}},"clientInfo":{"name":"deep","version":"1"}}}`;
  const init = await request(cli.url!, { method: 'POST', reset: true, headers: JSON_HEADERS, body });
  const session = init.headers['mcp-session-id'] as string;
  await init.body.text();
  // What a worker learns reaches the others one IPC hop later (README, Every core): here after a
  // first try that cannot serialise the capabilities.
  await sleep(200);
  for (let id = 2; id <= 5; id++) {
    const r = await request(cli.url!, {
      method: 'POST',
      reset: true,
      headers: { ...JSON_HEADERS, 'mcp-session-id': session },
      body: rpc(id, 'tools/call', { name: 'get_weather', arguments: { city: 'x' } }),
    });
    await r.body.text();
  }
  const exchanges = await cli.waitFor((r) => r.msg === 'exchange' && r.method === 'tools/call', 4);
  assert.ok(new Set(exchanges.map((r) => r.worker)).size === 2, 'both workers served the session');
  assert.deepEqual(
    cli.records.filter((r) => r.msg === 'proxy error').map((r) => (r.err as Rec | undefined)?.message),
    [],
    'no proxy error',
  );
  assert.ok(
    cli.records.some((r) => r.msg === 'exchange' && r.method === 'initialize'),
    'the initialize exchange is logged',
  );
  assert.deepEqual(
    exchanges.map((r) => r.protocolVersion),
    ['2025-11-25', '2025-11-25', '2025-11-25', '2025-11-25'],
    'every worker knows the version the session negotiated',
  );
});

test('two tools/list answered at once leave every worker with the same catalogue (as one process has one)', async () => {
  let held: Array<(result: unknown) => void> = [];
  const upstream = await startUpstream((msg, reply) => {
    if (msg.method === 'tools/list') {
      held.push(reply);
      if (held.length === 2) {
        const [first, second] = held;
        held = [];
        first!({ tools: [{ name: 'alpha', inputSchema: { type: 'object' } }] });
        second!({ tools: [{ name: 'beta', inputSchema: { type: 'object' } }] });
      }
      return;
    }
    // Every call fails as a tool result: a finding only where the catalogue lacks the tool.
    reply({ content: [{ type: 'text', text: 'failed' }], isError: true });
  });
  const cli = await startCli(upstream, ['--listen', '127.0.0.1:0']);
  let id = 0;
  const post = async (method: string, params: Rec = {}) => {
    const r = await request(cli.url!, {
      method: 'POST',
      reset: true,
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-06-18' },
      body: rpc(++id, method, params),
    });
    await r.body.text();
  };
  await Promise.all([post('tools/list'), post('tools/list')]);
  const lists = await cli.waitFor((r) => r.msg === 'exchange' && r.method === 'tools/list', 2);
  assert.equal(new Set(lists.map((r) => r.worker)).size, 2, 'the two lists were served by the two workers');
  await sleep(200);
  for (let i = 0; i < 4; i++) await post('tools/call', { name: 'alpha', arguments: {} });
  const calls = await cli.waitFor((r) => r.msg === 'exchange' && r.method === 'tools/call', 4);
  assert.equal(new Set(calls.map((r) => r.worker)).size, 2, 'the calls were served by both workers');
  const flagged = new Set(cli.records.filter((r) => r.msg === 'violation' && r.rule === 'unknown-tool-as-iserror').map((r) => r.worker));
  assert.ok(flagged.size !== 1, `the same call judged alike on every worker (flagged only on worker ${[...flagged].join()})`);
});

test('a session in use on one worker is not forgotten by the others (one process keeps it: least recently used goes first)', async () => {
  const upstream = await startUpstream((msg, reply) =>
    msg.method === 'initialize'
      ? reply(
          { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 's', version: '1' } },
          { 'mcp-session-id': randomUUID() },
        )
      : reply({}),
  );
  // Each worker remembers 300 sessions (limits.maxSessions), so a few hundred new ones push out
  // every session a worker only heard of and did not use.
  const dir = mkdtempSync(join(tmpdir(), 'warden-sessions-'));
  closers.push(async () => rmSync(dir, { recursive: true, force: true }));
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, 'limits:\n  maxSessions: 300\n');
  const cli = await startCli(upstream, ['--listen', '127.0.0.1:0', '--policy', policy]);
  const url = cli.url!;
  const init = rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } });
  // The busy session: one keep-alive connection, so one worker.
  const mine = new Client(url.origin);
  const pool = new Pool(url.origin, { connections: 16 });
  closers.push(() => Promise.all([mine.close(), pool.close()]).catch(() => {}));
  const first = await mine.request({ path: url.pathname, method: 'POST', headers: JSON_HEADERS, body: init });
  const session = first.headers['mcp-session-id'] as string;
  await first.body.text();
  const ping = async (client: Client | Pool, id: number) => {
    const r = await client.request({
      path: url.pathname,
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-session-id': session },
      body: rpc(id, 'ping'),
    });
    await r.body.text();
  };
  // More new sessions than maxSessions, the busy one used all along.
  let n = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (n < 450) {
        const i = n++;
        const r = await pool.request({ path: url.pathname, method: 'POST', headers: JSON_HEADERS, body: init });
        await r.body.text();
        if (i % 25 === 0) await ping(mine, 100_000 + i);
      }
    }),
  );
  // The busy session's next requests, on new connections: both workers.
  for (let i = 0; i < 4; i++) {
    const r = await request(url, {
      method: 'POST',
      reset: true,
      headers: { ...JSON_HEADERS, 'mcp-session-id': session },
      body: rpc(200_000 + i, 'ping'),
    });
    await r.body.text();
  }
  const last = await cli.waitFor((r) => r.msg === 'exchange' && typeof r.id === 'number' && r.id >= 200_000, 4, 30_000);
  assert.equal(new Set(last.map((r) => r.worker)).size, 2, 'both workers served it');
  assert.deepEqual(
    last.map((r) => r.protocolVersion),
    ['2025-06-18', '2025-06-18', '2025-06-18', '2025-06-18'],
    'every worker still knows the session',
  );
});

test('/metrics: mcp_warden_sessions counts a session once, not once per worker', {}, async () => {
  const upstream = await startUpstream((msg, reply) =>
    msg.method === 'initialize'
      ? reply(
          { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 's', version: '1' } },
          { 'mcp-session-id': randomUUID() },
        )
      : reply({}),
  );
  const cli = await startCli(upstream, ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0']);
  const [admin] = await cli.waitFor((r) => r.msg === 'admin listening');
  const r = await request(cli.url!, {
    method: 'POST',
    reset: true,
    headers: JSON_HEADERS,
    body: rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } }),
  });
  await r.body.text();
  await cli.waitFor((rec) => rec.msg === 'exchange');
  await sleep(300);
  const metrics = await (await request(new URL('/metrics', String(admin!.admin)))).body.text();
  assert.deepEqual(
    metrics.split('\n').filter((l) => l.startsWith('mcp_warden_sessions ')),
    ['mcp_warden_sessions 1'],
  );
});

test('/readyz is not ready before a worker listens on the proxy port', {}, async () => {
  const upstream = await startUpstream((_msg, reply) => reply({}));
  const port = await freePort();
  const cli = await startCli(upstream, ['--listen', `127.0.0.1:${port}`, '--admin', '127.0.0.1:0'], { waitListening: false });
  const [admin] = await cli.waitFor((r) => r.msg === 'admin listening');
  const readyz = new URL('/readyz', String(admin!.admin));
  let ready = false;
  for (let i = 0; i < 500 && !ready; i++) {
    const res = await request(readyz);
    await res.body.text();
    ready = res.statusCode === 200;
    if (!ready) await sleep(10);
  }
  assert.ok(ready);
  const proxied = await request(`http://127.0.0.1:${port}/mcp`, {
    method: 'POST',
    reset: true,
    headers: { ...JSON_HEADERS, 'mcp-protocol-version': '2025-06-18' },
    body: rpc(1, 'ping'),
  }).then(
    async (res) => {
      await res.body.text();
      return res.statusCode;
    },
    (err: NodeJS.ErrnoException) => err.code ?? err.message,
  );
  assert.equal(proxied, 200, 'ready means the proxy port answers');
});

test('--listen with port 0: the port stays the same when every worker is restarted', {}, async () => {
  const upstream = await startUpstream((_msg, reply) => reply({}));
  const cli = await startCli(upstream, ['--listen', '127.0.0.1:0']);
  for (const r of cli.records.filter((rec) => rec.msg === 'listening')) process.kill(Number(r.pid), 'SIGKILL');
  const listening = await cli.waitFor((r) => r.msg === 'listening', 4);
  assert.deepEqual(new Set(listening.map((r) => r.listen)), new Set([cli.url!.href]));
});

test("the primary's log records have one worker key", {}, async () => {
  const upstream = await startUpstream((_msg, reply) => reply({}));
  const cli = await startCli(upstream, ['--listen', '127.0.0.1:0']);
  const pid = Number(cli.records.find((r) => r.msg === 'listening')!.pid);
  process.kill(pid, 'SIGKILL');
  await cli.waitFor((r) => r.msg === 'worker exited; starting another');
  const line = cli.lines.find((l) => l.includes('worker exited; starting another'))!;
  assert.equal(line.match(/"worker":/g)?.length, 1, line);
});
