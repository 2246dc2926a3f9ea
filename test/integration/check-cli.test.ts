// `mcp-warden check` as a command: options, formats, --output, and exit codes 0 (clean), 1 (an
// error-severity finding) and 2 (needs credentials, unreachable, no MCP endpoint at the URL). registerCheckCommand runs on a
// fresh commander program in-process; once src/cli-program.ts registers the command, the same exit
// codes are also checked on `node src/cli.ts check ...` as a child process (its bundle: test/helpers/bundle.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CommanderError } from 'commander';
import { buildProgram } from '../../src/cli-program.ts';
import type { CheckReport } from '../../src/check/report.ts';
import { startCheckServer, type CheckServer } from '../fixtures/check-servers.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { startSdkServer } from '../fixtures/sdk-server.ts';
import { sarifValidator } from '../fixtures/sarif-schema.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { checkOnScreen, checkInProcess as inProcess, type Ran } from '../helpers/check.ts';

/** `node ...CLI <command>` runs src/cli.ts (a bundle of it: test/helpers/bundle.ts). */
const CLI = await cliArgs();

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHALLENGE = 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"';

function child(...args: string[]): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, 'check', ...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

const FAST = ['--probe-timeout', '2s', '--timeout', '20s'];

let good: CheckServer;
let broken: CheckServer;
let locked: CheckServer;
let dir: string;
before(async () => {
  good = await startCheckServer({ versions: ['2025-11-25'] });
  broken = await startCheckServer({ versions: ['2025-11-25'], faults: ['unknown-tool-iserror', 'accept-ignored'] });
  locked = await startCheckServer({ versions: ['2025-11-25'], auth: { token: 's3cret', challenge: CHALLENGE } });
  dir = await mkdtemp(join(tmpdir(), 'warden-check-'));
});
after(async () => {
  await Promise.all([good.close(), broken.close(), locked.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('registerCheckCommand on a fresh program', () => {
  test('a correct server: exit 0, the table and its summary line', async () => {
    const r = await inProcess(good.url.href, ...FAST);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^mcp-warden check http:\/\/127\.0\.0\.1:\d+\/mcp\n/);
    assert.match(r.stdout, /\n15 probes under 2025-11-25: 14 pass, 0 warn, 0 fail, 1 skip; 0 errors, 0 warnings \(exit 0\)\n$/);
    assert.ok(!r.stdout.includes('\x1b['), 'no colours when stdout is not a terminal');
  });

  test('a broken server: exit 1; every format', async () => {
    const table = await inProcess(broken.url.href, ...FAST);
    assert.equal(table.code, 1);
    assert.match(table.stdout, /unknown-tool .* fail /);
    assert.match(table.stdout, /wrong-accept .* warn /);

    const json = JSON.parse((await inProcess(broken.url.href, ...FAST, '--format', 'json')).stdout) as {
      exitCode: number;
      probes: Array<{ probe: string; verdict: string }>;
    };
    assert.equal(json.exitCode, 1);
    assert.equal(json.probes.find((p) => p.probe === 'unknown-tool')!.verdict, 'fail');

    const validate = sarifValidator();
    assert.ok(validate(JSON.parse((await inProcess(broken.url.href, ...FAST, '-f', 'sarif')).stdout)), JSON.stringify(validate.errors));
    assert.match(
      (await inProcess(broken.url.href, ...FAST, '-f', 'junit')).stdout,
      /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="mcp-warden check" tests="15" failures="1" errors="0" skipped="1"/,
    );
    assert.match(
      (await inProcess(broken.url.href, ...FAST, '-f', 'markdown')).stdout,
      /^### mcp-warden check: `http:\/\/127\.0\.0\.1:\d+\/mcp`\n\n\*\*15 probes under 2025-11-25: 12 pass, 1 warn, 1 fail, 1 skip/,
    );
  });

  test('the table fits the screen: no line wider than COLUMNS, nothing of the fix lost', async () => {
    const wide = await inProcess(broken.url.href, ...FAST);
    assert.ok(Math.max(...wide.stdout.split('\n').map((l) => l.length)) > 120, 'without a width, lines run long');
    for (const columns of [80, 100, 120]) {
      const r = await checkOnScreen(columns, broken.url.href, ...FAST);
      assert.equal(r.code, 1);
      const lines = r.stdout.trimEnd().split('\n');
      const longest = lines.reduce((a, l) => (l.length > a.length ? l : a), '');
      assert.ok(longest.length <= columns, `${columns}: ${longest.length} columns: ${longest}`);
      assert.match(r.stdout, /unknown-tool .* fail/);
      // The findings (message, evidence, fix) say every word they said on one line, wrapped.
      const findings = (text: string): string =>
        text
          .slice(text.indexOf('  FINDINGS'))
          .replace(/no_such_tool_[0-9a-f]{8}/g, 'no_such_tool_TAG') // each run's own tag
          // A docs URL is never cut: where it does not fit, the command that prints the explanation.
          .replace(/docs: \S+#([a-z-]+)/g, 'explained by: mcp-warden explain $1')
          .split(/\s+/)
          .join(' ');
      assert.equal(findings(r.stdout), findings(wide.stdout));
    }
  });

  test('--sarif-artifact places every SARIF result on a file of the repository (code scanning cannot place a URL)', async () => {
    type Sarif = { runs: Array<{ results: Array<{ locations: Array<{ physicalLocation: { artifactLocation: unknown } }> }> }> };
    const placed = (r: Ran) =>
      (JSON.parse(r.stdout) as Sarif).runs[0]!.results.map((x) => x.locations[0]!.physicalLocation.artifactLocation);
    const given = await inProcess(broken.url.href, ...FAST, '-f', 'sarif', '--sarif-artifact', './src/server.ts');
    assert.ok(sarifValidator()(JSON.parse(given.stdout)));
    const at = placed(given);
    assert.ok(at.length > 0);
    for (const a of at) assert.deepEqual(a, { uri: 'src/server.ts', uriBaseId: '%SRCROOT%' });
    for (const a of placed(await inProcess(broken.url.href, ...FAST, '-f', 'sarif'))) assert.deepEqual(a, { uri: broken.url.href });
  });

  test('--output writes the report to a file and the summary line to stderr', async () => {
    const file = join(dir, 'check.sarif');
    const r = await inProcess(broken.url.href, ...FAST, '-f', 'sarif', '-o', file);
    assert.deepEqual([r.code, r.stdout], [1, '']);
    assert.match(r.stderr, /^15 probes under 2025-11-25: .* \(exit 1\)\n$/);
    assert.equal((JSON.parse(await readFile(file, 'utf8')) as { version: string }).version, '2.1.0');
  });

  test('401: exit 2 with the challenge; --header passes credentials', async () => {
    const denied = await inProcess(locked.url.href, ...FAST);
    assert.equal(denied.code, 2);
    assert.ok(denied.stdout.includes(`needs credentials: HTTP 401 to server/discover (WWW-Authenticate: ${CHALLENGE})`));
    const allowed = await inProcess(locked.url.href, ...FAST, '-H', 'Authorization: Bearer s3cret');
    assert.equal(allowed.code, 0);
  });

  test('a URL that is no MCP endpoint (the server root, an HTML page): exit 2, told to check the path, nothing blamed on the server', async () => {
    const sdk = await startSdkServer({ mode: 'json' });
    const page = await startRawServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><pre>Cannot POST /</pre>');
    });
    try {
      for (const url of [new URL('/', sdk.url).href, page.url.href]) {
        const r = await inProcess(url, ...FAST);
        assert.equal(r.code, 2, r.stdout);
        assert.match(
          r.stdout,
          /\nno MCP endpoint at http:\/\/127\.0\.0\.1:\d+\/: HTTP 404 \((text\/plain|text\/html)\) to the first MCP requests; check the path \(for example \/mcp\) \(exit 2\)\n$/,
        );
        const json = JSON.parse((await inProcess(url, ...FAST, '-f', 'json')).stdout) as CheckReport;
        assert.deepEqual([json.reach.status, json.exitCode, json.summary.errors, json.summary.warnings], ['no-mcp-endpoint', 2, 0, 0]);
        const junit = (await inProcess(url, ...FAST, '-f', 'junit')).stdout;
        assert.match(junit, /<error message="no MCP endpoint at this URL \(check the path, for example \/mcp\): HTTP 404/);
        const sarif = JSON.parse((await inProcess(url, ...FAST, '-f', 'sarif')).stdout) as {
          runs: Array<{ results: Array<{ ruleId: string }> }>;
        };
        assert.deepEqual(
          sarif.runs[0]!.results.map((x) => x.ruleId),
          ['reach/no-mcp-endpoint'],
        );
      }
      // The same server at its MCP path is an MCP endpoint.
      assert.notEqual((await inProcess(sdk.url.href, ...FAST, '-f', 'json')).code, 2);
    } finally {
      await Promise.all([sdk.close(), page.close()]);
    }
  });

  test('bad option values are refused before anything is sent', async () => {
    const before = good.received.length;
    for (const args of [
      ['--header', 'no colon here'],
      ['--protocol', '2019-01-01'],
      ['--format', 'xml'],
      ['--timeout', 'soon'],
    ]) {
      await assert.rejects(
        inProcess(good.url.href, ...args),
        (err: unknown) => err instanceof CommanderError && err.exitCode === 1,
        args.join(' '),
      );
    }
    await assert.rejects(inProcess('ftp://127.0.0.1/mcp'), CommanderError);
    assert.equal(good.received.length, before);
  });
});

const wired = buildProgram().commands.some((c) => c.name() === 'check');

describe('node src/cli.ts check (a child process)', {
  skip: wired ? false : 'check is not registered in src/cli-program.ts yet (registerCheckCommand)',
}, () => {
  test('exit 0, 1 and 2', async () => {
    assert.equal((await child(good.url.href, ...FAST)).code, 0);
    assert.equal((await child(broken.url.href, ...FAST)).code, 1);
    const denied = await child(locked.url.href, ...FAST);
    assert.equal(denied.code, 2);
    assert.ok(denied.stdout.includes(CHALLENGE));
  });
});
