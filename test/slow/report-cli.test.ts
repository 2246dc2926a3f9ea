// `mcp-warden report` as a user runs it (a child process) on what a real proxy wrote in front of
// the demo's broken server: the numbers equal those counted from the log, gzip and stdin read the
// same, what cannot be read says so, and memory stays bounded whatever the input's size.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { runReportCommand } from '../../src/commands/report.ts';
import type { ReportData } from '../../src/report/model.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { expectedFromLog, type Expected } from '../helpers/report-expect.ts';
import { recordTraffic } from '../helpers/report-traffic.ts';

const CLI = await cliArgs();

function cli(args: string[], stdin?: Buffer | string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { timeout: 60_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
    child.stdin!.end(stdin);
  });
}

let dir: string;
let log: string;
let capture: string;
let expected: Expected;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-report-'));
  ({ log, capture } = await recordTraffic(dir, 2));
  expected = expectedFromLog(log);
});
after(() => rm(dir, { recursive: true, force: true }));

/** The numbers a report must agree with the log on. */
function assertMatchesLog(d: ReportData): void {
  assert.equal(d.summary.exchanges, expected.exchanges);
  assert.equal(d.summary.errors, expected.failed);
  assert.equal(d.summary.flagged, expected.flagged);
  assert.deepEqual(d.summary.findings, expected.findings);
  assert.deepEqual(new Map(d.methods.map((m) => [m.key, { exchanges: m.exchanges, errors: m.errors }])), expected.methods);
  assert.deepEqual(new Map(d.rules.map((r) => [r.rule, r.count])), expected.rules);
  assert.deepEqual(new Map(d.tools.map((t) => [t.key, t.exchanges])), expected.tools);
}

describe('mcp-warden report on a real log and capture', () => {
  test('the HTML page: self-contained, with the numbers of the log', async () => {
    const out = join(dir, 'report.html');
    const r = await cli(['report', log, capture, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`^report: ${expected.exchanges} exchanges \\(${expected.failed} failed\\).* -> ${out}\\n$`));
    const html = await readFile(out, 'utf8');
    assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-/);
    assert.doesNotMatch(html, /<(script|link|img)[^>]+(src|href)=/i, 'nothing is loaded from anywhere');
    assert.match(html, /uPlot/, 'the chart library is inlined');
    assert.match(html, new RegExp(`data-k="summary.exchanges">${expected.exchanges}<`));
    assert.ok(!html.includes('ops@example.com'), 'tool arguments never reach the report');
  });

  test('--format json: the data of the page; the capture replayed under enforce.yaml says what it would change', async () => {
    const r = await cli(['report', log, capture, '--format', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const d = JSON.parse(r.stdout) as ReportData;
    assertMatchesLog(d);
    assert.equal(d.input.tablesFrom, 'log');
    assert.equal(d.input.records.capture, expected.exchanges, 'one capture record per exchange');
    assert.equal(d.whatIf.source, 'replay');
    assert.match(d.whatIf.policy ?? '', /config\/enforce\.yaml$/);
    assert.equal(d.whatIf.exchanges, expected.exchanges);
    assert.ok(d.whatIf.decisions.rewrite > 0, 'enforce.yaml rewrites the unknown tool, the HTML body, the stack trace');
    assert.deepEqual(d.clients.map((c) => [c.key, c.exchanges]).sort(), [
      ['claude-desktop 1.4.0', expected.exchanges / 3],
      ['cursor 0.52.1', (2 * expected.exchanges) / 3],
    ]);
    assert.deepEqual(
      d.versions.map((v) => v.version),
      ['2025-11-25'],
    );
    assert.equal(d.sessions.length, 3);
  });

  test('the log alone: what-if from the shadow decisions the proxy logged under audit', async () => {
    const d = JSON.parse((await cli(['report', log, '--format', 'json'])).stdout) as ReportData;
    assertMatchesLog(d);
    assert.equal(d.whatIf.source, 'shadow');
    assert.ok(d.whatIf.decisions.rewrite > 0);
  });

  test('the capture alone: the tables from the replay', async () => {
    const d = JSON.parse((await cli(['report', capture, '--format', 'json'])).stdout) as ReportData;
    assert.equal(d.input.tablesFrom, 'capture');
    assert.equal(d.summary.exchanges, expected.exchanges);
  });

  test('gzip and stdin read as the plain file does', async () => {
    const plain = JSON.parse((await cli(['report', log, '--format', 'json'])).stdout) as ReportData;
    const gz = join(dir, 'proxy.log.1.gz');
    await writeFile(gz, gzipSync(readFileSync(log)));
    const zipped = JSON.parse((await cli(['report', gz, '--format', 'json'])).stdout) as ReportData;
    const piped = JSON.parse((await cli(['report', '--format', 'json'], readFileSync(log))).stdout) as ReportData;
    const dash = JSON.parse((await cli(['report', '-', '--format', 'json'], gzipSync(readFileSync(log)))).stdout) as ReportData;
    const counts = (d: ReportData) => ({ ...d, generatedAt: '', input: { ...d.input, sources: [] } });
    assert.deepEqual(counts(zipped), counts(plain));
    assert.deepEqual(counts(piped), counts(plain));
    assert.deepEqual(counts(dash), counts(plain));
    assert.deepEqual(piped.input.sources, ['stdin']);
  });

  test('replay reads a gzip capture too', async () => {
    const gz = join(dir, 'capture.jsonl.gz');
    await writeFile(gz, gzipSync(readFileSync(capture)));
    const r = await cli(['replay', gz, '--format', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { summary: { exchanges: number } }).summary.exchanges, expected.exchanges);
  });
});

describe('mcp-warden report: what it cannot read', () => {
  test('a missing file and a truncated gzip: said on stderr, exit 1, and the rest is still reported', async () => {
    const out = join(dir, 'partial.json');
    const missing = join(dir, 'nope.log');
    const truncated = join(dir, 'cut.gz');
    const zipped = gzipSync(readFileSync(log));
    await writeFile(truncated, zipped.subarray(0, zipped.length - 40));
    const r = await cli(['report', missing, log, truncated, '--format', 'json', '-o', out]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`report: ${missing}: cannot read it all: no such file`));
    assert.match(r.stderr, new RegExp(`report: ${truncated}: cannot read it all: `));
    const d = JSON.parse(await readFile(out, 'utf8')) as ReportData;
    assert.ok(d.summary.exchanges >= expected.exchanges, 'the readable log is reported');
  });

  test('nothing readable at all: said on stderr, exit 1, and no empty report written', async () => {
    const out = join(dir, 'empty.html');
    const r = await cli(['report', join(dir, 'nope-either.log'), '-o', out]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /report: nothing could be read: no report written/);
    await assert.rejects(readFile(out), /ENOENT/);
  });

  test('a gzip bomb: stopped at its ratio, said on stderr, exit 1, the log before it reported; --max-ratio and --max-lines let it through', async () => {
    const bomb = join(dir, 'bomb.log.gz');
    await writeFile(bomb, gzipSync(Buffer.concat([readFileSync(log), Buffer.alloc(100 * 1024 * 1024, 10)]), { level: 9 }));
    const r = await cli(['report', bomb, '--format', 'json', '--no-progress']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`report: ${bomb}: cannot read it all: it decompresses to more than 200 times its size`));
    assertMatchesLog(JSON.parse(r.stdout) as ReportData);
    const allowed = await cli(['report', bomb, '--format', 'json', '--no-progress', '--max-ratio', '5000', '--max-lines', '200000000']);
    assert.equal(allowed.code, 0, allowed.stderr);
  });

  test('a policy that does not validate: exit 1, no report', async () => {
    const policy = join(dir, 'bad.yaml');
    await writeFile(policy, 'mode: enforced\n');
    const out = join(dir, 'never.html');
    const r = await cli(['report', log, '--policy', policy, '-o', out]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /bad\.yaml:1:7/);
    await assert.rejects(readFile(out), /ENOENT/);
  });

  test('an output that cannot be written: exit 1', async () => {
    const r = await cli(['report', log, '-o', join(dir, 'no-such-dir', 'r.html')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /report: cannot write .*r\.html: no such file/);
  });

  test('no input on a terminal: a usage error (2), not a wait for a pipe', async () => {
    const err: string[] = [];
    const code = await runReportCommand(
      [],
      { format: 'json', progress: false },
      { out: { write: () => true }, err: { write: (t) => err.push(t) }, stdinIsTTY: true },
    );
    assert.equal(code, 2);
    assert.match(err.join(''), /name the logs or captures to read/);
  });
});

test('progress goes to stderr while a read lasts, never to the report', async () => {
  const big = join(dir, 'big.log');
  const one = readFileSync(log, 'utf8');
  await writeFile(big, one.repeat(400));
  const out: string[] = [];
  const err: string[] = [];
  const code = await runReportCommand(
    [big],
    { format: 'json', progress: true, progressEveryMs: 1 },
    { out: { write: (t) => out.push(t) }, err: { write: (t) => err.push(t) }, stdinIsTTY: false },
  );
  assert.equal(code, 0);
  assert.match(err.join(''), /report: [\d.]+ MiB of [\d.]+ MiB \(\d+%\) read, [\d,]+ lines\n/);
  assert.equal((JSON.parse(out.join('')) as ReportData).summary.exchanges, expected.exchanges * 400);
  const quiet: string[] = [];
  await runReportCommand(
    [big],
    { format: 'json', progress: false, progressEveryMs: 1 },
    { out: { write: () => true }, err: { write: (t) => quiet.push(t) }, stdinIsTTY: false },
  );
  assert.doesNotMatch(quiet.join(''), /MiB/, '--no-progress');
});

/**
 * `report` reading `lines` generated exchanges on stdin, each with a new session, tool, client and
 * version, in a V8 heap capped at `heapMiB`; its exit code and peak RSS (kB).
 */
async function reportInHeap(lines: number, heapMiB: number): Promise<{ code: number | null; peakKb: number; stderr: string }> {
  const child = spawn(
    process.execPath,
    [`--max-old-space-size=${heapMiB}`, ...CLI, 'report', '--format', 'json', '-o', '/dev/null', '--no-progress'],
    {
      stdio: ['pipe', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let peakKb = 0;
  const poll = setInterval(() => {
    try {
      const hwm = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]));
    } catch {
      // exited
    }
  }, 20);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.stdin.on('error', () => {}); // a child that died of its heap closes the pipe
  const time = Date.parse('2026-12-01T00:00:00Z');
  for (let i = 0; i < lines && child.exitCode === null; i++) {
    const where = { method: 'tools/call', id: i, tool: `tool-${i}`, session: `session-${i}` };
    const chunk =
      `${JSON.stringify({ level: 40, time: new Date(time + i * 10).toISOString(), msg: 'violation', rule: `rule-${i % 50}`, severity: 'warning', message: `message ${i}`, evidence: `evidence ${i}`, ...where })}\n` +
      `${JSON.stringify({ level: 30, time: new Date(time + i * 10).toISOString(), msg: 'exchange', outcome: i % 3 ? 'result' : 'isError', clientName: `client-${i}`, protocolVersion: `v-${i}`, ...where })}\n`;
    if (!child.stdin.write(chunk)) await new Promise((resolve) => child.stdin.once('drain', resolve));
  }
  child.stdin.end();
  const code = await exited;
  clearInterval(poll);
  return { code, peakKb, stderr };
}

test('memory stays bounded: 150,000 exchanges, each with its own session, tool, client and version, in a 48 MiB heap', {
  timeout: 120_000,
}, async () => {
  const r = await reportInHeap(150_000, 48);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /report: 150000 exchanges/);
  assert.ok(r.peakKb < 150 * 1024, `peak RSS ${r.peakKb} kB`);
});

// From the review of #14: findings whose key no exchange record ever has were held without bound.
test('memory stays bounded: 200,000 violations of one key without an exchange record, in a 48 MiB heap', {
  timeout: 120_000,
}, async () => {
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=48', ...(await cliArgs()), 'report', '--format', 'json', '-o', '/dev/null', '--no-progress'],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  child.stdin.on('error', () => {}); // a child that died of its heap closes the pipe
  const pad = 'x'.repeat(400);
  for (let i = 0; i < 200_000 && child.exitCode === null; i++) {
    // A finding on a POST of a notification: no exchange record ever has its key.
    const line = `${JSON.stringify({
      level: 50,
      time: Date.parse('2026-12-01T00:00:00Z') + i,
      msg: 'violation',
      rule: 'notification-answered-with-body',
      severity: 'error',
      message: `message ${i} ${pad}`,
      evidence: `evidence ${i} ${pad}`,
      method: 'notifications/initialized',
      id: null,
      session: 's1',
    })}\n`;
    if (!child.stdin.write(line)) await Promise.race([new Promise((resolve) => child.stdin.once('drain', resolve)), exited]);
  }
  child.stdin.end();
  assert.equal(await exited, 0, stderr.slice(0, 2000));
  assert.match(stderr, /200000 findings/);
});
