// End to end: a proxy whose policy asks for a capture, in front of the official SDK fixture server,
// driven by the SDK client with credentials and a secret argument; then `mcp-warden replay` on the
// capture it wrote, as a user runs it (a child process), and in process.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSdkServer, type SdkServer } from '../fixtures/sdk-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';
import { connectSdkClient } from '../helpers/sdk-client.ts';
import { replayFile } from '../../src/commands/replay.ts';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import type { ReplayReport } from '../../src/replay/replay.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { cliArgs } from '../helpers/bundle.ts';

/** `node ...CLI <command>` runs src/cli.ts (a bundle of it: test/helpers/bundle.ts). */
const CLI = await cliArgs();

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CANARIES = ['canary-token-77', 'canary-cookie-88', 'canary-arg-99'];

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function loadPolicy(path: string): Promise<Policy> {
  const loaded = await loadPolicyFile(path, { rewritable: REWRITABLE });
  if (!loaded.ok) throw new Error(`${path}: ${JSON.stringify(loaded.errors)}`);
  return loaded.policy;
}

interface Captured {
  file: string;
  /** The proxy's exchange and violation records. */
  exchanges: Array<Record<string, unknown>>;
  violations: Array<Record<string, unknown>>;
  server: SdkServer;
}

/** One SDK client session through a capturing proxy (staging: audit mode); the proxy is closed, so the capture is flushed. */
async function captureSession(dir: string, mode: 'json' | 'sse', opts: { elicit?: boolean } = {}): Promise<Captured> {
  const policyFile = join(dir, `staging-${mode}.yaml`);
  await writeFile(policyFile, `mode: audit\ncapture: { path: ./capture-${mode}.jsonl }\n`);
  const policy = await loadPolicy(policyFile);
  assert.equal(policy.capture?.path, join(dir, `capture-${mode}.jsonl`));

  const server = await startSdkServer({ mode });
  let proxy: TestProxy | undefined;
  try {
    proxy = await startProxy(server.url, { policy: () => policy });
    const c = await connectSdkClient(proxy.url, { headers: { Authorization: 'Bearer canary-token-77', Cookie: 'sid=canary-cookie-88' } });
    try {
      await c.client.listTools();
      const echo = await c.client.callTool({ name: 'echo', arguments: { text: 'hello', password: 'canary-arg-99' } });
      assert.deepEqual(echo.content, [{ type: 'text', text: 'echo: hello' }]);
      const unknown = await c.client.callTool({ name: 'no_such_tool', arguments: { password: 'canary-arg-99' } });
      assert.equal(unknown.isError, true);
      if (opts.elicit) {
        // The server asks the client (elicitation/create on the call's stream); the client's answer is an exchange too.
        const asked = await c.client.callTool({ name: 'ask', arguments: { question: 'Which region?' } });
        assert.deepEqual(asked.content, [{ type: 'text', text: 'answer to: Which region?' }]);
      }
      await c.transport.terminateSession();
    } finally {
      await c.close();
    }
  } finally {
    await proxy?.close();
    await server.close();
  }
  return {
    file: policy.capture!.path,
    exchanges: proxy.log.records.filter((r) => r.msg === 'exchange'),
    violations: proxy.log.records.filter((r) => r.msg === 'violation'),
    server,
  };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-replay-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('capture, then mcp-warden replay', () => {
  let captured: Captured;
  before(async () => {
    captured = await captureSession(dir, 'json');
  });

  test('the capture has one line per exchange and none of the secrets', async () => {
    const text = await readFile(captured.file, 'utf8');
    const lines = text.split('\n').filter((l) => l !== '');
    assert.equal(text.endsWith('\n'), true);
    assert.equal(lines.length, captured.exchanges.length);
    const records = lines.map((l) => JSON.parse(l) as { v: number; request: { message: { method: string; params?: { name?: string } } } });
    assert.deepEqual(
      records.map((r) => [r.v, r.request.message.method, r.request.message.params?.name]),
      [
        [1, 'initialize', undefined],
        [1, 'tools/list', undefined],
        [1, 'tools/call', 'echo'],
        [1, 'tools/call', 'no_such_tool'],
      ],
    );
    // The secrets did travel: the server got the credentials through the proxy ...
    const posts = captured.server.requests.filter((r) => r.method === 'POST');
    assert.ok(posts.length >= 4);
    assert.ok(posts.every((r) => r.headers.authorization === 'Bearer canary-token-77' && r.headers.cookie === 'sid=canary-cookie-88'));
    // ... and none of them reached the capture.
    for (const canary of CANARIES) assert.equal(text.includes(canary), false, `the capture holds ${canary}`);
  });

  test('replay under config/enforce.yaml: text with the would-be rewrite of the unknown tool, exit 0', async () => {
    const { code, stdout, stderr } = await cli('replay', captured.file, '--policy', 'config/enforce.yaml');
    assert.equal(stderr, '');
    assert.equal(code, 0);
    const row = stdout.split('\n').find((l) => /tools\/call\s+no_such_tool/.test(l) && l.includes('unknown-tool-as-iserror'));
    assert.ok(row, stdout);
    assert.match(row, /\brewrite\s+unknown-tool-as-iserror \(error, rewrite\)$/);
    assert.match(stdout, /WOULD CHANGE: 1/);
    assert.match(
      stdout,
      /rewrite by unknown-tool-as-iserror, HTTP 200\n\s+\{"jsonrpc":"2\.0","id":3,"error":\{"code":-32602,"message":"Unknown tool: no_such_tool"/,
    );
    assert.match(stdout, /^ {2}policy {3}config\/enforce\.yaml \(mode enforce\)$/m);
    assert.match(stdout, /^ {2}not judged {2}POST-level rules/m);
    const summary = stdout.trimEnd().split('\n').at(-1);
    assert.equal(
      summary,
      'summary: 4 exchanges, 1 finding (unknown-tool-as-iserror: rewrite 1); would rewrite 1, would block 0, pass 3; 0 bad lines',
    );
  });

  test('--format json: the report parses and says the same', async () => {
    const { code, stdout } = await cli('replay', captured.file, '--policy', 'config/enforce.yaml', '--format', 'json');
    assert.equal(code, 0);
    const report = JSON.parse(stdout) as ReplayReport;
    assert.deepEqual(report.lines, { total: 4, blank: 0, exchanges: 4, bad: 0, logRecords: 0 });
    assert.equal(report.sessions, 1);
    const x = report.exchanges.find((e) => e.tool === 'no_such_tool');
    assert.ok(x);
    assert.equal(x.protocolVersion, '2025-11-25');
    assert.deepEqual(
      x.findings.map((f) => [f.rule, f.action]),
      [['unknown-tool-as-iserror', 'rewrite']],
    );
    assert.equal(x.decision.kind, 'rewrite');
    if (x.decision.kind === 'rewrite') assert.equal(x.decision.message.error?.code, -32602);
    for (const canary of CANARIES) assert.equal(stdout.includes(canary), false);
  });

  test('replay under the capturing policy finds what the proxy found', async () => {
    const report = await replayFile(captured.file, await loadPolicy(join(dir, 'staging-json.yaml')));
    const judged = new Set(report.coverage.judged.rules);
    const proxyFound = captured.violations.filter((v) => judged.has(String(v.rule))).map((v) => [v.rule, v.id, v.action]);
    const replayFound = report.exchanges.flatMap((x) => x.findings.map((f) => [f.rule, x.id, f.action]));
    assert.deepEqual(replayFound, proxyFound);
    assert.deepEqual(replayFound, [['unknown-tool-as-iserror', 3, 'log']]);
    assert.deepEqual(report.summary.decisions, { pass: 4, rewrite: 0, block: 0 });
  });
});

test('an SSE session with a server-to-client request replays like a JSON one', async () => {
  const captured = await captureSession(dir, 'sse', { elicit: true });
  const text = await readFile(captured.file, 'utf8');
  for (const canary of CANARIES) assert.equal(text.includes(canary), false);
  const report = await replayFile(captured.file, await loadPolicy(join(ROOT, 'config/enforce.yaml')));
  assert.equal(report.lines.bad, 0);
  assert.equal(report.exchanges.length, captured.exchanges.length);
  assert.deepEqual(
    report.exchanges.map((x) => [x.from, x.method, x.tool ?? null]),
    [
      ['client', 'initialize', null],
      ['client', 'tools/list', null],
      ['client', 'tools/call', 'echo'],
      ['client', 'tools/call', 'no_such_tool'],
      ['server', 'elicitation/create', null],
      ['client', 'tools/call', 'ask'],
    ],
  );
  assert.ok(report.exchanges.every((x) => x.protocolVersion === '2025-11-25' && x.session === report.exchanges[0]!.session));
  assert.deepEqual(report.summary.decisions, { pass: 5, rewrite: 1, block: 0 });
  assert.deepEqual(report.exchanges.find((x) => x.decision.kind === 'rewrite')?.tool, 'no_such_tool');
  const judged = new Set(report.coverage.judged.rules);
  assert.deepEqual(
    report.exchanges.flatMap((x) => x.findings.map((f) => [f.rule, x.id])),
    captured.violations.filter((v) => judged.has(String(v.rule))).map((v) => [v.rule, v.id]),
  );
});

test('an exchange log given to replay: named as a log, pointed at capture: and report, exit 1', async () => {
  const logDir = await mkdtemp(join(dir, 'log-'));
  const captured = await captureSession(logDir, 'json');
  const log = join(logDir, 'proxy.log');
  await writeFile(log, [...captured.exchanges, ...captured.violations].map((r) => `${JSON.stringify(r)}\n`).join(''));
  const records = captured.exchanges.length + captured.violations.length;
  for (const format of ['text', 'json']) {
    const { code, stdout, stderr } = await cli('replay', log, '--format', format);
    assert.equal(code, 1, format);
    assert.equal(
      stderr,
      `${log}: an exchange log (${records} log records), not a capture: replay reads the file the policy's \`capture: { path }\` writes (docs/policy.md); for a log, run \`mcp-warden report ${log}\` (exit 1)\n`,
    );
    if (format === 'text') assert.match(stdout, /^ {2}line 1 {2}a log record \("exchange"\), not a capture record$/m);
    else assert.equal((JSON.parse(stdout) as ReplayReport).lines.logRecords, records);
  }
  // The capture of the same session replays.
  assert.equal((await cli('replay', captured.file)).code, 0);
});

describe('mcp-warden replay: what exits 1', () => {
  test('a capture that cannot be read', async () => {
    const missing = join(dir, 'nope.jsonl');
    assert.deepEqual(await cli('replay', missing), { code: 1, stdout: '', stderr: `${missing}: cannot read the capture: no such file\n` });
    assert.deepEqual(await cli('replay', dir), { code: 1, stdout: '', stderr: `${dir}: cannot read the capture: it is a directory\n` });
  });

  test('a policy that does not validate: its errors, as policy check prints them', async () => {
    const capture = join(dir, 'tiny.jsonl');
    await writeFile(capture, 'not a record\n');
    const policy = join(dir, 'bad.yaml');
    await writeFile(policy, 'mode: enforced\nrules:\n  unknown-tol: rewrite\n');
    const { code, stdout, stderr } = await cli('replay', capture, '--policy', policy);
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(
      stderr,
      [
        `${policy}:1:7: mode: expected one of audit|enforce, found "enforced"; did you mean "enforce"?`,
        `${policy}:3:3: rules.unknown-tol: unknown rule or group "unknown-tol"; allowed: a rule id (see mcp-warden rules) or a group: unknown-tool, silent-success, tools, input-validation, codes, unknown-method, status, lifecycle, framing, bodies, parse-error, batch, notifications, client, sessions, result-type, leaks, unreadable, stdio; did you mean "unknown-tool"?`,
        `${policy}: 2 errors`,
        '',
      ].join('\n'),
    );
  });

  test('bad lines only: reported, and no exchange to replay is exit 1 (default policy)', async () => {
    const capture = join(dir, 'junk.jsonl');
    await writeFile(capture, 'not a record\n{"v":9}\n');
    const { code, stdout, stderr } = await cli('replay', capture);
    assert.equal(code, 1);
    assert.equal(stderr, `${capture}: no exchange to replay in 2 lines (exit 1)\n`);
    assert.match(stdout, /^ {2}policy {3}\(built-in defaults\) \(mode audit, replayed as enforce/m);
    assert.match(stdout, /BAD LINES: 2/);
    assert.match(stdout, /^ {2}line 2 {2}capture version 9; this mcp-warden reads version 1$/m);
    assert.equal(
      stdout.trimEnd().split('\n').at(-1),
      'summary: 0 exchanges, 0 findings; would rewrite 0, would block 0, pass 0; 2 bad lines',
    );
  });
});
