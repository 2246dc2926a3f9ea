// Load what a command needs, when it needs it (#27): `--version` and `--help` answer without
// loading the proxy (0.38 s and 92 MB before, 0.08 s and 46 MB after, node dist/cli.js --version on
// this machine), and `stdio` and `proxy` load no OpenTelemetry (32 of the 54 MB of production
// modules) unless spans are exported, and export them when asked (#45). Checked by what the
// process loads (a resolve hook records every module), not by timing it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { jsonRpcResult, startRawServer } from '../fixtures/raw-server.ts';
import { sourceArgs, sourceUrl } from '../helpers/compiled.ts';
import { startWorkersCli } from '../helpers/workers-cli.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const HOOK = new URL('../fixtures/record-imports.mjs', import.meta.url).pathname;

/** Runs `node src/cli.ts ...args` from source (or its compiled twins under `npm test`, module for module); returns the modules it loaded (paths from the repository's root, or package names). */
function loaded(args: readonly string[], input = ''): { modules: string[]; stdout: string; status: number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'warden-startup-'));
  const file = join(dir, 'imports.txt');
  try {
    const run = spawnSync(process.execPath, ['--import', HOOK, ...sourceArgs('src/cli.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, RECORD_IMPORTS: file },
      input,
      encoding: 'utf8',
      timeout: 30_000,
    });
    return { modules: modulesIn(file), stdout: run.stdout, status: run.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The modules a RECORD_IMPORTS file lists: paths from the repository's root, or package names. */
function modulesIn(file: string): string[] {
  const modules = readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((loadedUrl) => {
      const url = sourceUrl(loadedUrl);
      const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
      return pkg ? pkg[1]! : url.replace(`file://${ROOT}`, '');
    });
  return [...new Set(modules)];
}

/** What only the serving commands need: the proxy, the engine, the rules, the sinks and their packages. */
const HEAVY = [
  /^src\/(proxy|engine|transport|rules|sinks|exchange|rewrite|check\/run)/,
  /^(undici|pino|ajv|yaml|prom-client|http-proxy-3|@opentelemetry\/.*)$/,
];

for (const args of [['--version'], ['--help'], ['check', '--help'], ['stdio', '--help']]) {
  test(`mcp-warden ${args.join(' ')} loads none of the proxy`, () => {
    const run = loaded(args);
    assert.equal(run.status, 0);
    assert.ok(run.stdout.length > 0);
    const heavy = run.modules.filter((m) => HEAVY.some((re) => re.test(m)));
    assert.deepEqual(heavy, [], 'loaded for nothing');
  });
}

test('mcp-warden stdio loads no OpenTelemetry unless spans are exported', () => {
  // A server that exits at once: the relay starts, sees it gone, and ends.
  const run = loaded(['stdio', '--', process.execPath, '-e', 'process.exit(0)']);
  assert.equal(run.status, 0);
  assert.ok(run.modules.includes('src/engine/engine.ts'), 'the relay ran');
  assert.deepEqual(
    run.modules.filter((m) => m.startsWith('@opentelemetry/')),
    [],
  );
});

test('mcp-warden proxy loads OpenTelemetry only with --otlp-endpoint, and then exports a span per exchange', async () => {
  const closers: Array<() => Promise<unknown>> = [];
  const dir = mkdtempSync(join(tmpdir(), 'warden-startup-'));
  const exported: string[] = [];
  try {
    const collector = await startRawServer((req, res, body) => {
      if (req.url === '/v1/traces') exported.push(body.toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    closers.push(() => collector.close());
    const upstream = await startRawServer(jsonRpcResult({ content: [{ type: 'text', text: 'ok' }] }));
    closers.push(() => upstream.close());
    for (const otlp of [[], ['--otlp-endpoint', new URL('/v1/traces', collector.url).href]]) {
      const file = join(dir, `imports-${otlp.length}.txt`);
      const proxy = await startWorkersCli(new URL('/mcp', upstream.url), 1, otlp, closers, {
        nodeArgs: ['--import', HOOK, ...sourceArgs('src/cli.ts')],
        env: { ...process.env, RECORD_IMPORTS: file },
      });
      const res = await request(proxy.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } }),
      });
      await res.body.text();
      await proxy.waitFor((r) => r.msg === 'exchange');
      // SIGTERM: the proxy sends what it batched before it exits.
      assert.equal(await proxy.stop(), 0);
      const otel = modulesIn(file).filter((m) => m.startsWith('@opentelemetry/'));
      if (otlp.length === 0) {
        assert.deepEqual(otel, [], 'no OpenTelemetry without --otlp-endpoint');
        assert.deepEqual(exported, []);
      } else {
        assert.ok(otel.includes('@opentelemetry/sdk-trace-base') && otel.includes('@opentelemetry/exporter-trace-otlp-http'), otel.join());
        assert.match(exported.join(), /tools\/call echo/, 'the exchange exported as a span');
      }
    }
  } finally {
    for (const close of closers) await close();
    rmSync(dir, { recursive: true, force: true });
  }
});
