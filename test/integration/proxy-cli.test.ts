// `mcp-warden proxy` as users run it: a child process in front of a loopback server, a policy
// reloaded on SIGHUP, a policy that does not validate refused at start, SIGTERM ending it with 0.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { jsonRpcResult, startRawServer, type RawServer } from '../fixtures/raw-server.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { sseReader } from '../helpers/sse-reader.ts';
import { startLegacyServer } from '../fixtures/legacy-sse-server.ts';
import { freePort } from '../../src/proxy/listen.ts';

/** `node ...CLI <command>` runs src/cli.ts (a bundle of it: test/helpers/bundle.ts). */
const CLI = await cliArgs();

const ROOT = new URL('../../', import.meta.url);
let dir: string;
let upstream: RawServer;
let child: ChildProcess | undefined;
after(async () => {
  child?.kill('SIGKILL');
  await upstream?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts the CLI; resolves with the child and a function that waits for a log line matching `pred`. */
function start(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const proc = spawn(process.execPath, [...CLI, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const lines: Array<Record<string, unknown>> = [];
  let stderr = '';
  let pending = '';
  proc.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
  proc.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const waitFor = async (pred: (r: Record<string, unknown>) => boolean, what: string) => {
    for (let i = 0; i < 200; i++) {
      const found = lines.find(pred);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`no log line for ${what}; stderr: ${stderr}; lines: ${JSON.stringify(lines)}`);
  };
  return { proc, waitFor, exited, stderr: () => stderr, lines: () => lines };
}

test('a file event that leaves the policy as it was started reloads nothing', async () => {
  const own = await mkdtemp(join(tmpdir(), 'warden-cli-'));
  const server = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] }));
  const policy = join(own, 'policy.yaml');
  await writeFile(policy, 'mode: audit\n');
  const port = await freePort();
  const args = ['proxy', '--upstream', new URL('/mcp', server.url).href, '--listen', `127.0.0.1:${port}`, '--policy', policy];
  const run = start([...args, '--no-pretty', '--log-level', 'debug']);
  try {
    await run.waitFor((r) => r.msg === 'listening', 'listening');
    await writeFile(policy, 'mode: audit\n');
    await run.waitFor((r) => r.msg === 'policy unchanged', 'the file event, read and found unchanged');
    assert.equal(run.lines().filter((r) => r.msg === 'policy reloaded').length, 0, 'no reload logged');
    run.proc.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  } finally {
    run.proc.kill('SIGKILL');
    await server.close();
    await rm(own, { recursive: true, force: true });
  }
});

test('the proxy command serves, reloads its policy on SIGHUP, and exits 0 on SIGTERM', async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-cli-'));
  upstream = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'Error: disk full' }] }));
  const policy = join(dir, 'policy.yaml');
  await writeFile(policy, 'mode: audit\n');
  const port = await freePort();
  const run = start([
    'proxy',
    '--upstream',
    new URL('/mcp', upstream.url).href,
    '--listen',
    `127.0.0.1:${port}`,
    '--policy',
    policy,
    '--no-pretty',
  ]);
  child = run.proc;
  await run.waitFor((r) => r.msg === 'listening', 'listening');
  const call = async () => {
    const res = await request(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'save', arguments: {} } }),
    });
    return (await res.body.json()) as { result: { isError?: boolean } };
  };
  assert.equal((await call()).result.isError, undefined, 'audit: passed unchanged');
  await run.waitFor((r) => r.msg === 'violation' && r.rule === 'silent-success' && r.applied === false, 'the audit finding');

  await writeFile(policy, 'mode: enforce\nrules:\n  silent-success: rewrite\n');
  run.proc.kill('SIGHUP');
  await run.waitFor((r) => r.msg === 'policy reloaded', 'the reload');
  assert.equal((await call()).result.isError, true, 'enforce: rewritten after the reload');

  run.proc.kill('SIGTERM');
  assert.equal(await run.exited, 0);
  child = undefined;
});

test('a policy that does not validate stops the start with its errors and exit 1', async () => {
  dir ??= await mkdtemp(join(tmpdir(), 'warden-cli-'));
  const bad = join(dir, 'bad.yaml');
  await writeFile(bad, 'mode: enforse\n');
  const run = start(['proxy', '--upstream', 'http://127.0.0.1:9/mcp', '--listen', '127.0.0.1:0', '--policy', bad]);
  assert.equal(await run.exited, 1);
  assert.match(run.stderr(), /bad\.yaml:1:7: mode: expected one of audit\|enforce, found "enforse"/);
});

test('the guard comes from the command line, the environment or the policy (the command line wins)', async () => {
  dir ??= await mkdtemp(join(tmpdir(), 'warden-cli-'));
  upstream ??= await startRawServer(jsonRpcResult({ content: [] }));
  const policy = join(dir, 'guard.yaml');
  await writeFile(policy, 'security:\n  allowedHosts: [policy.example]\nupstream:\n  hostHeader: upstream\n');
  const statusFor = async (port: number, host: string): Promise<number> => {
    const res = await request(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    await res.body.text();
    return res.statusCode;
  };
  for (const [args, env, allowed, refused] of [
    [['--policy', policy], {}, 'policy.example', 'cli.example'],
    [['--policy', policy, '--allowed-hosts', 'cli.example'], {}, 'cli.example', 'policy.example'],
    [[], { MCP_WARDEN_ALLOWED_HOSTS: 'env.example,other.example' }, 'other.example', '127.0.0.1'],
  ] as const) {
    const port = await freePort();
    const proc = spawn(
      process.execPath,
      [...CLI, 'proxy', '--upstream', new URL('/mcp', upstream.url).href, '--listen', `127.0.0.1:${port}`, '--no-pretty', ...args],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...env },
      },
    );
    child = proc;
    let out = '';
    proc.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    for (let i = 0; i < 200 && !out.includes('"msg":"listening"'); i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(await statusFor(port, allowed), 200, `${allowed} with ${JSON.stringify(args)} ${JSON.stringify(env)}`);
    assert.equal(await statusFor(port, refused), 403, `${refused} with ${JSON.stringify(args)} ${JSON.stringify(env)}`);
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    child = undefined;
  }
  // hostHeader: upstream from the policy: the upstream saw its own host.
  assert.ok(upstream.requests.some((r) => r.headers.host === upstream.url.host));
});

test('--transport (and upstream.transport, MCP_WARDEN_TRANSPORT): streamable-http relays a legacy endpoint event as it came, auto rewrites it', async () => {
  const own = await mkdtemp(join(tmpdir(), 'warden-cli-'));
  // An absolute endpoint on the upstream: rebased to the proxy when the proxy learns the session.
  const server = await startLegacyServer('absolute');
  const policy = join(own, 'policy.yaml');
  await writeFile(policy, 'mode: audit\nupstream: { transport: streamable-http }\n');
  try {
    for (const [args, env, rewritten] of [
      [[], {}, true],
      [['--transport', 'streamable-http'], {}, false],
      [['--policy', policy], {}, false],
      [['--policy', policy, '--transport', 'auto'], {}, true],
      [[], { MCP_WARDEN_TRANSPORT: 'streamable-http' }, false],
    ] as const) {
      const port = await freePort();
      // The upstream builds its endpoint from the Host it sees: its own, so that a rewrite shows.
      const run = start(
        ['proxy', '--upstream', server.sse.href, '--listen', `127.0.0.1:${port}`, '--host-header', 'upstream', '--no-pretty', ...args],
        env,
      );
      try {
        await run.waitFor((r) => r.msg === 'listening', 'listening');
        const res = await fetch(`http://127.0.0.1:${port}/sse`, { headers: { accept: 'text/event-stream' } });
        const events = sseReader(res.body);
        const first = await events.next();
        await events.cancel();
        assert.equal(first.event, 'endpoint');
        assert.equal(
          first.data.startsWith(`http://127.0.0.1:${port}/message?sessionId=`),
          rewritten,
          `${JSON.stringify(args)}: ${first.data}`,
        );
      } finally {
        run.proc.kill('SIGKILL');
        await run.exited;
      }
    }
  } finally {
    await server.close();
    await rm(own, { recursive: true, force: true });
  }
});

// #25: closed at once after its 413, a refused body's unread bytes drew a reset, and an uploading
// client got EPIPE instead of the answer (8 of 20 declared uploads, 19 of 20 chunked ones).
test('a client uploading 8 MiB past a 64 KiB --max-body reads its 413, declared or chunked, every time', async () => {
  const server = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] }));
  const port = await freePort();
  const args = ['proxy', '--upstream', new URL('/mcp', server.url).href, '--listen', `127.0.0.1:${port}`, '--max-body', '64kib'];
  const run = start([...args, '--no-pretty']);
  try {
    await run.waitFor((r) => r.msg === 'listening', 'listening');
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 'big',
      method: 'tools/call',
      params: { name: 'echo', arguments: { blob: 'x'.repeat(8 * 2 ** 20) } },
    });
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      const chunked = i % 2 === 1;
      const sent = chunked
        ? Readable.from(
            (function* () {
              for (let at = 0; at < body.length; at += 64 * 1024) yield body.slice(at, at + 64 * 1024);
            })(),
          )
        : body;
      try {
        const res = await request(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: sent,
        });
        const answer = (await res.body.json()) as { error?: { data?: { reason?: string } } };
        outcomes.push(`${res.statusCode} ${answer.error?.data?.reason}`);
      } catch (err) {
        outcomes.push(`${chunked ? 'chunked' : 'declared'}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
    assert.deepEqual(
      outcomes.filter((o) => o !== '413 WARDEN_BODY_TOO_LARGE'),
      [],
      'every upload answered 413 with the JSON-RPC error',
    );
    assert.equal(server.requests.length, 0, 'nothing forwarded');
    run.proc.kill('SIGTERM');
    assert.equal(await run.exited, 0);
  } finally {
    run.proc.kill('SIGKILL');
    await server.close();
  }
});

// #27: a port in use was a raw "listen EADDRINUSE" (and exit 1); under --workers, workers were
// restarted six times first; with --admin in use, the main port's "listening" came first.
test('a port in use, main or admin, with or without --workers: one line naming the flag, exit 3, nothing listening', async () => {
  const { createServer } = await import('node:net');
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const busy = (holder.address() as { port: number }).port;
  try {
    for (const [flag, args] of [
      ['--listen', ['--listen', `127.0.0.1:${busy}`]],
      ['--admin', ['--listen', '127.0.0.1:0', '--admin', `127.0.0.1:${busy}`]],
      ['--listen', ['--listen', `127.0.0.1:${busy}`, '--workers', '2']],
      ['--admin', ['--listen', '127.0.0.1:0', '--workers', '2', '--admin', `127.0.0.1:${busy}`]],
    ] as const) {
      const run = start(['proxy', '--upstream', 'http://127.0.0.1:9/mcp', ...args, '--no-pretty']);
      assert.equal(await run.exited, 3, args.join(' '));
      const lines = run.stderr().trim().split('\n');
      assert.deepEqual(lines, [
        `mcp-warden: cannot listen on 127.0.0.1:${busy} (${flag}): the port is in use (EADDRINUSE): stop what holds it, or give another port`,
      ]);
      assert.deepEqual(
        run.lines().filter((r) => r.msg === 'listening' || r.msg === 'workers started'),
        [],
        `${args.join(' ')}: nothing said to listen, no worker started`,
      );
    }
  } finally {
    holder.close();
  }
});

test('a policy file that is not there: said so (not "does not validate"), and the proxy does not start', async () => {
  const run = start(['proxy', '--upstream', 'http://127.0.0.1:9/mcp', '--listen', '127.0.0.1:0', '--policy', '/nonexistent/warden.yaml']);
  assert.equal(await run.exited, 1);
  assert.match(run.stderr(), /\/nonexistent\/warden\.yaml: cannot read the policy file: no such file/);
  assert.match(run.stderr(), /the policy cannot be read; the proxy did not start/);
  assert.doesNotMatch(run.stderr(), /does not validate/);
});
