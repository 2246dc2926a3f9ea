// `mcp-warden check` over the other two transports: a stdio server run as the check's child, and a
// legacy HTTP+SSE server (its answers read off the session's stream). The method probes run as over
// Streamable HTTP; the probes about HTTP itself are skipped with the reason; stdio's framing rules
// judge the child's stdout. Real processes and sockets, bounded timeouts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, test } from 'node:test';
import type { CheckReport } from '../../src/check/report.ts';
import type { CheckOptions } from '../../src/check/run.ts';
import { startEverythingServer } from '../fixtures/everything-server.ts';
import { startLegacyServer } from '../fixtures/legacy-sse-server.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { check as checkWith } from '../helpers/check.ts';
import { everythingServer, fixtureServer } from '../helpers/stdio.ts';

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

/** Children and streams start slower than a hand-written server answers: longer bounds. */
const check = (url: CheckOptions['url'], over: Partial<CheckOptions> = {}): Promise<CheckReport> =>
  checkWith(url, { probeTimeoutMs: 3000, timeoutMs: 30_000, ...over });
const verdict = (r: CheckReport, probe: string) => r.probes.find((p) => p.probe === probe)?.verdict;
const rules = (r: CheckReport, probe: string) => r.probes.find((p) => p.probe === probe)?.findings.map((f) => f.rule) ?? [];

describe('check --stdio', () => {
  test('server-everything over stdio: the method probes run and judge, HTTP probes are skipped with the reason', async () => {
    const report = await check({ command: process.execPath, args: [await everythingServer(), 'stdio'] });
    assert.equal(report.reach.status, 'ok');
    assert.equal(report.protocol.used, '2025-11-25');
    assert.equal(verdict(report, 'initialize'), 'pass');
    assert.equal(verdict(report, 'tools-list'), 'pass');
    assert.equal(verdict(report, 'tool-argument-missing'), 'pass', 'the catalogue was learned on the stdio session');
    assert.deepEqual(rules(report, 'unknown-tool'), ['unknown-tool-as-iserror']);
    const skipped = report.probes.find((p) => p.probe === 'wrong-accept');
    assert.equal(skipped?.verdict, 'skip');
    assert.match(skipped!.got, /an HTTP probe; the server speaks stdio/);
    assert.equal(verdict(report, 'discover'), 'skip', 'a legacy server is not faulted for lacking server/discover');
    assert.equal(report.exitCode, 1);
    assert.match(report.target, /^stdio: /);
  });

  test('a server that writes a banner to stdout: stdio-not-a-message on the probe that read it', async () => {
    const fixture = { command: process.execPath, args: (await fixtureServer()).slice(1) };
    const report = await check(fixture);
    const clean = report.probes.flatMap((p) => p.findings).filter((f) => f.rule.startsWith('stdio-'));
    assert.deepEqual(clean, [], 'the plain fixture writes only messages');
    const junk = await runWithEnv({ FIXTURE_MODE: 'junk' }, () => check(fixture));
    assert.ok(junk.probes.some((p) => p.findings.some((f) => f.rule === 'stdio-not-a-message')));
  });

  test('a command that does not exist: unreachable, exit 2', async () => {
    const report = await check({ command: 'definitely-not-a-command-mcp-warden', args: [] });
    assert.equal(report.reach.status, 'unreachable');
    assert.match(report.reach.detail ?? '', /cannot start definitely-not-a-command-mcp-warden/);
    assert.equal(report.exitCode, 2);
  });

  test('the CLI: check --stdio -- COMMAND ARGS (options after the command are its own), and a usage error without one', async () => {
    const cli = await cliArgs();
    const run = spawnSync(
      process.execPath,
      [...cli, 'check', '--stdio', '-f', 'json', '--', process.execPath, await everythingServer(), 'stdio'],
      {
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    assert.equal(run.status, 1, run.stderr);
    const report = JSON.parse(run.stdout) as CheckReport;
    assert.equal(verdict(report, 'initialize'), 'pass');
    const usage = spawnSync(process.execPath, [...cli, 'check', '--stdio'], { encoding: 'utf8', timeout: 30_000 });
    assert.notEqual(usage.status, 0);
    assert.match(usage.stderr, /--stdio needs the server command/);
  });
});

describe('check over the legacy HTTP+SSE transport', () => {
  test('server-everything (sse): a URL ending in /sse is spoken to as legacy SSE, answers read off the stream', async () => {
    const upstream = await startEverythingServer('sse');
    closers.push(() => upstream.close());
    const report = await check(upstream.url);
    assert.equal(report.reach.status, 'ok');
    assert.equal(verdict(report, 'initialize'), 'pass');
    assert.equal(verdict(report, 'ping'), 'pass');
    assert.deepEqual(rules(report, 'unknown-tool'), ['unknown-tool-as-iserror']);
    assert.match(report.probes.find((p) => p.probe === 'ping')!.got, /^SSE event, result/);
  });

  test('--transport sse on any path; the fixture server answers 2024-11-05', async () => {
    const server = await startLegacyServer();
    closers.push(() => server.close());
    const report = await check(server.sse, { transport: 'sse', protocol: '2024-11-05' });
    assert.equal(report.protocol.used, '2024-11-05');
    assert.equal(verdict(report, 'initialize'), 'pass');
    assert.equal(verdict(report, 'tools-list'), 'pass');
  });

  test('a legacy endpoint that does not stream: unreachable with the reason, exit 2', async () => {
    const server = await startLegacyServer();
    closers.push(() => server.close());
    const report = await check(new URL('/nothing/sse', server.url));
    assert.equal(report.reach.status, 'unreachable');
    assert.match(report.reach.detail ?? '', /not an SSE stream/);
    assert.equal(report.exitCode, 2);
  });
});

/** Runs `fn` with extra environment variables (the check's child inherits them). */
async function runWithEnv<T>(env: Record<string, string>, fn: () => Promise<T>): Promise<T> {
  const before = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
