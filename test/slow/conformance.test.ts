// The official MCP conformance suite (@modelcontextprotocol/conformance 0.1.16), run twice, directly
// and through mcp-warden, with the results compared scenario by scenario and check by check:
// - the server suite (`conformance server --url`, --suite active and --suite all) against our
//   SDK fixture (test/fixtures/conformance-server.ts) and against an in-process proxy in front of
//   it: 40/40 and 44/44 directly, and the same verdict for every check through the proxy;
// - the client suite (`conformance client --suite core`): the runner starts one scenario server
//   per scenario and runs our SDK client (test/fixtures/conformance-client.ts) against it, or the
//   wrapper (test/fixtures/conformance-client-via-proxy.ts) that starts a proxy in front of the
//   scenario server and runs the same client through it; both run as bundles built from the
//   sources at the start of the test (test/helpers/bundle.ts): 38 client processes start in
//   ~0.1-0.2 s of CPU each instead of ~0.6 s (direct) and ~0.9 s (through the proxy) under tsx;
// - the proxy's own DNS-rebinding guard: a foreign Host and a foreign Origin get HTTP 403 with a
//   JSON-RPC error from the proxy itself, and never reach the upstream.
//
// A check "passes" unless its status is FAILURE (WARNING is the suite's "should": the sse-retry
// timing check turns WARNING when the machine is busy). When a scenario differs, the assertion
// message holds both runs' checks and what the proxy logged: the wire evidence.
//
// The CLI needs `fs.globSync` (Node 22) only for its tier-check command, but imports it at load;
// on Node 20 a loader hook hands it a module that re-exports node:fs plus a stub globSync.
// Every child runs in its own process group and is killed by that group id in teardown.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request, type Dispatcher } from 'undici';
import { startConformanceServer, type ConformanceServer } from '../fixtures/conformance-server.ts';
import { bundle } from '../helpers/bundle.ts';
import { listen, closeServer } from '../helpers/net.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js');
const CLIENT = fileURLToPath(new URL('../fixtures/conformance-client.ts', import.meta.url));
const CLIENT_VIA_PROXY = fileURLToPath(new URL('../fixtures/conformance-client-via-proxy.ts', import.meta.url));

/** `--import` value that gives the CLI a `globSync` on Node 20 (none needed from Node 22). */
function node20Shim(): string[] {
  if ('globSync' in fs) return [];
  const shim =
    "export * from 'node:fs'; import fs from 'node:fs'; export default fs; " +
    "export const globSync = () => { throw new Error('fs.globSync needs Node 22 (conformance tier-check)'); };";
  const hooks = `
    const shim = ${JSON.stringify(`data:text/javascript,${encodeURIComponent(shim)}`)};
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/'))
        return { url: shim, shortCircuit: true };
      return next(specifier, context);
    }`;
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  return ['--import', `data:text/javascript,${encodeURIComponent(register)}`];
}

// ---------------------------------------------------------------------------------------------
// Child processes: own process group, bounded time, killed by group id.

const children = new Set<ChildProcess>();

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

after(() => {
  for (const child of children) killGroup(child);
});

interface Run {
  code: number | null;
  output: string;
}

/** Runs `node <cli> ...args`; past `timeoutMs` the whole process group is killed. */
function runCli(args: string[], timeoutMs: number, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...node20Shim(), CLI, ...args], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    children.add(child);
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-200_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const timer = setTimeout(() => {
      killGroup(child);
      reject(new Error(`conformance ${args.join(' ')} still running after ${timeoutMs} ms; output:\n${output.slice(-4000)}`));
    }, timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      // Clients the runner spawned through a shell share the group: none may outlive it.
      killGroup(child);
      children.delete(child);
      resolve({ code, output });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Results: <out>/<prefix><scenario>-<ISO time with : and . as ->/checks.json, one per scenario.

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  description?: string;
  errorMessage?: string;
  details?: unknown;
}
type Results = Map<string, Check[]>;

async function readResults(dir: string, prefix: string): Promise<Results> {
  const results: Results = new Map();
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.name === 'checks.json') {
        const name = relative(dir, at)
          .split(sep)
          .join('/')
          .replace(/-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/, '');
        results.set(name.startsWith(prefix) ? name.slice(prefix.length) : name, JSON.parse(await readFile(path, 'utf8')) as Check[]);
      }
    }
  };
  await walk(dir);
  return results;
}

const verdict = (c: Check): string => (c.status === 'FAILURE' ? 'fail' : 'pass');
/** The scored checks of a scenario (INFO is a log line), as sorted `id=verdict` strings. */
const scored = (checks: Check[]): string[] =>
  checks
    .filter((c) => c.status !== 'INFO')
    .map((c) => `${c.id}=${verdict(c)}`)
    .sort();

function totals(results: Results): { passed: number; failed: number; warnings: number } {
  const all = [...results.values()].flat();
  return {
    passed: all.filter((c) => c.status === 'SUCCESS').length,
    failed: all.filter((c) => c.status === 'FAILURE').length,
    warnings: all.filter((c) => c.status === 'WARNING').length,
  };
}

/** The scored checks in full, then the scenario's request/response log (INFO checks), bounded. */
const brief = (checks: Check[]): string => {
  const show = (list: Check[], max: number): string =>
    JSON.stringify(
      list.map(({ id, status, description, errorMessage, details }) => ({ id, status, description, errorMessage, details })),
      null,
      1,
    ).slice(0, max);
  return `${show(
    checks.filter((c) => c.status !== 'INFO'),
    8000,
  )}\nwire (INFO): ${show(
    checks.filter((c) => c.status === 'INFO'),
    6000,
  )}`;
};

/** Asserts the same scenarios with the same verdict per check; the message carries the evidence. */
function assertIdentical(t: TestContext, direct: Results, proxied: Results, evidence: (scenario: string) => string): void {
  assert.deepEqual([...proxied.keys()].sort(), [...direct.keys()].sort(), 'the same scenarios ran directly and through the proxy');
  const differing: string[] = [];
  for (const [scenario, checks] of direct) {
    const a = scored(checks);
    const b = scored(proxied.get(scenario) ?? []);
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      differing.push(
        `--- ${scenario}\ndirect:  ${a.join(' ')}\nproxied: ${b.join(' ')}\n` +
          `direct checks: ${brief(checks)}\nproxied checks: ${brief(proxied.get(scenario) ?? [])}\n${evidence(scenario)}`,
      );
    }
  }
  const d = totals(direct);
  const p = totals(proxied);
  t.diagnostic(
    `direct ${d.passed}/${d.passed + d.failed} (${d.warnings} warnings), through mcp-warden ${p.passed}/${p.passed + p.failed} (${p.warnings} warnings)`,
  );
  assert.equal(differing.length, 0, `${differing.length} scenario(s) differ through the proxy:\n${differing.join('\n')}`);
}

// ---------------------------------------------------------------------------------------------

let work: string;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'mcp-warden-conformance-'));
});
after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('conformance server suite, directly and through mcp-warden', () => {
  let server: ConformanceServer;
  let proxy: TestProxy;
  before(async () => {
    server = await startConformanceServer();
    proxy = await startProxy(server.url);
  });
  after(async () => {
    await proxy?.close();
    await server?.close();
  });

  const suite = async (t: TestContext, name: 'active' | 'all', expected: number): Promise<void> => {
    const run = async (target: URL, label: string): Promise<Results> => {
      const out = join(work, `server-${name}-${label}`);
      const { output } = await runCli(['server', '--url', target.href, '--suite', name, '-o', out], 60_000);
      const results = await readResults(out, 'server-');
      assert.ok(results.size > 0, `no results from conformance server --suite ${name} (${label}):\n${output.slice(-3000)}`);
      return results;
    };
    const direct = await run(server.url, 'direct');
    const d = totals(direct);
    assert.deepEqual(
      { passed: d.passed, failed: d.failed },
      { passed: expected, failed: 0 },
      `the fixture passes --suite ${name} directly`,
    );
    const before = proxy.log.records.length;
    const proxied = await run(proxy.url, 'proxy');
    const records = proxy.log.records.slice(before);
    assertIdentical(t, direct, proxied, () => {
      const lines = records
        .filter((r) => r.level === undefined || Number(r.level) >= 40 || r.msg !== 'exchange')
        .map((r) => JSON.stringify(r));
      return `proxy log (warnings and non-exchange records, last 40):\n${lines.slice(-40).join('\n')}`;
    });
  };

  test("dns-rebinding-protection passes through a proxy whose own guard lets every Host in: the upstream's check sees the client's Host", {
    timeout: 60_000,
  }, async (t) => {
    // With the guard open (a deployment that names no hosts), a foreign Host reaches the
    // upstream, which must still refuse it: the proxy forwards the client's Host, not its own.
    const open = await startProxy(server.url, { guard: { allowedHosts: ['*'], allowedOrigins: ['*'] } });
    try {
      const out = join(work, 'server-dns-open-guard');
      const { output } = await runCli(['server', '--url', open.url.href, '--scenario', 'dns-rebinding-protection', '-o', out], 30_000);
      const checks = (await readResults(out, 'server-')).get('dns-rebinding-protection');
      assert.ok(checks, `no result:\n${output.slice(-3000)}`);
      const rejected = checks.find((c) => c.id === 'localhost-host-rebinding-rejected');
      t.diagnostic(
        `foreign Host through the open proxy: ${JSON.stringify((rejected?.details as { statusCode?: number; body?: unknown })?.body)}`,
      );
      assert.deepEqual(scored(checks), ['localhost-host-rebinding-rejected=pass', 'localhost-host-valid-accepted=pass'], brief(checks));
      const body = (rejected!.details as { body?: { error?: { message?: string } } }).body;
      assert.match(
        String(body?.error?.message),
        /Invalid Host: evil\.example\.com/,
        "the 403 is the upstream's own (the SDK's host validation)",
      );
    } finally {
      await open.close();
    }
  });

  test('--suite active: 40/40 directly, the same verdicts through the proxy', { timeout: 90_000 }, (t) => suite(t, 'active', 40));
  test('--suite all: 44/44 directly, the same verdicts through the proxy', { timeout: 90_000 }, (t) => suite(t, 'all', 44));
});

describe('conformance client suite (core), directly and through mcp-warden', () => {
  test('every core scenario gives the same verdicts when the client reaches its server through the proxy', {
    timeout: 300_000,
  }, async (t) => {
    const logs = join(work, 'proxy-logs');
    // 18 clients start at once on 2 cores: generous bounds, which cost nothing when all is well.
    const env = { MCP_WARDEN_CONFORMANCE_LOG: logs, MCP_CONFORMANCE_CLIENT_TIMEOUT_MS: '40000' };
    const run = async (command: string, label: string): Promise<Results> => {
      const out = join(work, `client-core-${label}`);
      const { output } = await runCli(['client', '--command', command, '--suite', 'core', '--timeout', '45000', '-o', out], 120_000, env);
      const hung = output.match(/^.*(Client timed out after|still running after \d+ ms: giving up).*$/gm) ?? [];
      if (hung.length > 0)
        t.diagnostic(`${label}: ${hung.length} client process(es) did not exit in time: ${[...new Set(hung)].join('; ')}`);
      const results = await readResults(out, '');
      assert.ok(results.size >= 18, `conformance client --suite core (${label}) gave ${results.size} scenarios:\n${output.slice(-3000)}`);
      // The suite starts all 18 clients at once; on 2 cores the reconnection delay that sse-retry
      // measures (500 ms, 200 ms of slack) then says more about the machine than about the
      // client or the proxy. So sse-retry's verdicts come from a run of that scenario alone.
      const alone = join(work, `client-sse-retry-${label}`);
      const single = await runCli(
        ['client', '--command', command, '--scenario', 'sse-retry', '--timeout', '45000', '-o', alone],
        60_000,
        env,
      );
      const retry = (await readResults(alone, '')).get('sse-retry');
      assert.ok(retry, `conformance client --scenario sse-retry (${label}) gave no result:\n${single.output.slice(-3000)}`);
      results.set('sse-retry', retry);
      return results;
    };
    // The client and the wrapper (with the proxy's sources), each one file that starts without
    // tsx; named after their entries, which is how each tells that it is the program (runsAsProgram).
    const client = join(work, 'bundles', 'conformance-client.mjs');
    const viaProxy = join(work, 'bundles', 'conformance-client-via-proxy.mjs');
    await Promise.all([bundle(CLIENT, client), bundle(CLIENT_VIA_PROXY, viaProxy)]);
    const direct = await run(`${process.execPath} ${client}`, 'direct');
    const proxied = await run(`${process.execPath} ${viaProxy}`, 'proxy');
    // Every scenario of the second run crossed a proxy: its wrapper logged the proxy's start.
    const logOf = (scenario: string): string => join(logs, `${scenario.replace(/[^\w.-]/g, '_')}.log`);
    const unproxied = [...proxied.keys()].filter(
      (scenario) => !(fs.existsSync(logOf(scenario)) && fs.readFileSync(logOf(scenario), 'utf8').includes('"msg":"listening"')),
    );
    assert.deepEqual(unproxied, [], 'scenarios whose client did not start a proxy in front of the scenario server');
    assertIdentical(t, direct, proxied, (scenario) => {
      const file = logOf(scenario);
      const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n') : ['(no proxy log: the wrapper did not start)'];
      return `proxy log ${file} (last 30 lines):\n${lines.slice(-30).join('\n')}`;
    });
  });
});

describe("mcp-warden's own Host and Origin guard on a loopback listener", () => {
  // An upstream with no DNS-rebinding check of its own: whatever reaches it is counted, so a 403
  // here can only come from the proxy.
  let upstream: Server;
  let upstreamUrl: URL;
  let proxy: TestProxy;
  const seen: Array<{ method: string | undefined; url: string | undefined; host: string | undefined; origin: string | undefined }> = [];
  before(async () => {
    upstream = createServer((req: IncomingMessage, res) => {
      seen.push({ method: req.method, url: req.url, host: req.headers.host, origin: req.headers.origin });
      req.resume();
      req.once('end', () => {
        if (req.url === '/mcp' && req.method === 'POST') {
          res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'open', version: '1' } },
            }),
          );
        } else {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"resource":"x"}');
        }
      });
    });
    upstreamUrl = new URL('mcp', await listen(upstream));
    proxy = await startProxy(upstreamUrl);
  });
  after(async () => {
    await proxy?.close();
    await closeServer(upstream);
  });

  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rebinding-probe', version: '1' } },
  });
  const post = (headers: Record<string, string>, path = proxy.url.pathname) =>
    request(new URL(path, proxy.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: initialize,
    });

  async function assertRefused(res: Dispatcher.ResponseData, what: string): Promise<void> {
    const text = await res.body.text();
    assert.equal(res.statusCode, 403, `${what}: HTTP status (body ${text})`);
    assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: content-type`);
    const body = JSON.parse(text) as { jsonrpc?: unknown; id?: unknown; error?: { code?: unknown; message?: unknown } };
    assert.equal(body.jsonrpc, '2.0', `${what}: a JSON-RPC body: ${text}`);
    assert.ok('id' in body && (body.id === null || body.id === 1), `${what}: the request's id or null: ${text}`);
    assert.equal(typeof body.error?.code, 'number', `${what}: error.code: ${text}`);
    assert.equal(typeof body.error?.message, 'string', `${what}: error.message: ${text}`);
  }

  test('Host: evil.example.com gets 403 with a JSON-RPC error and never reaches the upstream', async () => {
    const before = seen.length;
    await assertRefused(await post({ host: 'evil.example.com' }), 'foreign Host');
    await assertRefused(await post({ host: `evil.example.com:${proxy.url.port}` }), 'foreign Host with the port');
    assert.deepEqual(seen.slice(before), [], 'the upstream saw none of them');
  });

  test('Origin: http://evil.example.com gets 403 with a JSON-RPC error and never reaches the upstream', async () => {
    const before = seen.length;
    await assertRefused(await post({ host: proxy.url.host, origin: 'http://evil.example.com' }), 'foreign Origin');
    assert.deepEqual(seen.slice(before), [], 'the upstream saw none of them');
  });

  test('the guard also covers the pass-through paths', async () => {
    const before = seen.length;
    const res = await request(new URL('/.well-known/oauth-protected-resource/mcp', proxy.url), { headers: { host: 'evil.example.com' } });
    await assertRefused(res, 'foreign Host on a pass-through path');
    assert.deepEqual(seen.slice(before), [], 'the upstream saw none of them');
  });

  test("loopback names pass, and the upstream gets the client's Host and Origin unchanged", async () => {
    for (const host of [proxy.url.host, `localhost:${proxy.url.port}`]) {
      const before = seen.length;
      const origin = `http://${host}`;
      const res = await post({ host, origin });
      await res.body.text();
      assert.equal(res.statusCode, 200, `Host ${host} is a loopback name`);
      assert.deepEqual(
        seen.slice(before).map(({ host: h, origin: o }) => ({ host: h, origin: o })),
        [{ host, origin }],
        "the upstream saw the client's Host (not its own address), so its own DNS-rebinding check still works",
      );
    }
  });
});
