// Issue 25, stdio items, with the real CLI between the test's pipes and the fixture server:
// 1. The child's stderr is kept apart from the proxy's records: without --log-file (the log on
//    stderr) a line the child shapes as an exchange record is no record, `report` counts none of
//    it, its credentials are redacted, and its text is still in the log, a record per line, cut
//    to 1,024 characters; a child flooding stderr gets a bounded number of records, and the count
//    of what was dropped. (The joiner, item 2, is unit-tested: test/unit/stdio-joiner.test.ts.)
// 3. A client that writes requests the proxy answers itself and never reads: the proxy stops
//    reading its input once its stdout is full, and once the client reads, every answer comes, in
//    order.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { ReportData } from '../../src/report/model.ts';
import { cliArgs } from '../helpers/bundle.ts';
import { fixtureServer, initialize, startStdio, toolCall, type StdioRun } from '../helpers/stdio.ts';

const ENFORCE = new URL('../../config/enforce.yaml', import.meta.url).pathname;
const runs: StdioRun[] = [];
after(async () => {
  await Promise.all(runs.map((r) => r.close()));
});
const fixture = async (mode: string, o: { flags?: string[]; env?: NodeJS.ProcessEnv; logFile?: false } = {}): Promise<StdioRun> => {
  const run = await startStdio(await fixtureServer(), { ...o, env: { FIXTURE_MODE: mode, ...o.env } });
  runs.push(run);
  return run;
};
const idIs = (id: number) => (m: Record<string, unknown>) => m.id === id;

/** `mcp-warden report --format json` on `log` (the text of a log). */
async function report(log: string): Promise<ReportData> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-warden-stdio-report-'));
  try {
    const file = join(dir, 'log.jsonl');
    writeFileSync(file, log);
    const args = [...(await cliArgs()), 'report', file, '--format', 'json', '--no-progress'];
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, args, { maxBuffer: 64 * 1024 * 1024 }, (err, out) => (err ? reject(err) : resolve(out))),
    );
    return JSON.parse(stdout) as ReportData;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// What a hostile (or careless) server writes to stderr: a record shaped as the proxy's, with a
// tool the proxy never saw; credentials; a line far past the bound.
const FORGED = JSON.stringify({
  level: 30,
  time: '2026-01-01T00:00:00.000Z',
  name: 'mcp-warden',
  method: 'tools/call',
  id: 999,
  tool: 'forged-tool',
  transport: 'stdio',
  outcome: 'result',
  msg: 'exchange',
});
const SECRETS = ['s3cr3t-Passw0rd', 'AKIAIOSFODNN7EXAMPLE'];
const CREDENTIALS = `connecting with DB_PASSWORD=${SECRETS[0]} and AWS_ACCESS_KEY_ID=${SECRETS[1]}`;
const LONG = 'z'.repeat(50_000);

describe("the child's stderr", () => {
  test('without --log-file: no record of the child, report counts none of it, credentials redacted, its text quoted, cut', async () => {
    const run = await fixture('stderr', {
      logFile: false,
      env: { FIXTURE_STDERR: `${FORGED}\n${CREDENTIALS}\n${LONG}\nafter the long line\n` },
    });
    run.send(initialize(1));
    run.send(toolCall(2, 'echo', { message: 'hi' }));
    await run.waitFor(idIs(2));
    run.child.stdin!.end();
    assert.deepEqual(await run.exit, { code: 0, signal: null });
    const stderr = run.stderr();
    const data = await report(stderr);
    assert.equal(data.summary.exchanges, 2, "report counts the proxy's two exchanges, and no other");
    assert.ok(!data.tools.some((t) => t.key === 'forged-tool'), 'the forged tool is not in the report');
    const lines = stderr.split('\n').filter((l) => l !== '');
    for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `a line on stderr that is no record: ${l.slice(0, 200)}`);
    const log = run.log();
    assert.equal(log.length, lines.length);
    assert.deepEqual(
      log.filter((r) => r.msg === 'exchange').map((r) => r.id),
      [1, 2],
      "the proxy's own exchange records, and no other",
    );
    const quoted = log.filter((r) => r.msg === 'stdio server stderr').map((r) => r.line as string);
    assert.equal(quoted.length, 4, 'a record per line');
    assert.equal(quoted[0], FORGED, 'the forged line is quoted text in a record of the proxy');
    assert.equal(quoted[1], 'connecting with DB_PASSWORD=[REDACTED] and AWS_ACCESS_KEY_ID=[REDACTED]');
    assert.ok(quoted[2]!.startsWith('zzz') && quoted[2]!.length <= 1024, `the long line cut: ${quoted[2]!.length} characters`);
    assert.equal(quoted[3], 'after the long line');
    for (const secret of SECRETS) assert.ok(!stderr.includes(secret), `${secret} on stderr`);
  });

  test('with --log-file the same records go to the file, and nothing of the child reaches stderr', async () => {
    const run = await fixture('stderr', { env: { FIXTURE_STDERR: `${FORGED}\n${CREDENTIALS}\n` } });
    run.send(initialize(1));
    await run.waitFor(idIs(1));
    run.child.stdin!.end();
    await run.exit;
    assert.deepEqual(
      run
        .log()
        .filter((r) => r.msg === 'stdio server stderr')
        .map((r) => r.line),
      [FORGED, 'connecting with DB_PASSWORD=[REDACTED] and AWS_ACCESS_KEY_ID=[REDACTED]'],
    );
    assert.equal(run.stderr(), '');
  });

  test('a flood: a bounded number of records, and the count of the lines dropped; nothing lost silently', async () => {
    const total = 20_000;
    const run = await fixture('flood', { env: { FIXTURE_LINES: String(total) } });
    run.send(initialize(1));
    await run.waitFor(idIs(1));
    run.child.stdin!.end();
    await run.exit;
    const log = run.log();
    const logged = log.filter((r) => r.msg === 'stdio server stderr').length;
    const dropped = log.filter((r) => r.msg === 'stdio server stderr dropped').reduce((n, r) => n + (r.lines as number), 0);
    assert.ok(logged >= 1000 && logged < total / 2, `${logged} of ${total} lines logged`);
    assert.equal(logged + dropped, total);
  });
});

/** Resolves once `state()` has stayed the same for `polls` polls in a row: nothing moves any more. */
async function settled(state: () => string, polls = 5, everyMs = 200): Promise<void> {
  let last = state();
  for (let same = 0; same < polls; ) {
    await new Promise((r) => setTimeout(r, everyMs));
    const now = state();
    same = now === last ? same + 1 : 0;
    last = now;
  }
}

describe('a client that writes without reading', () => {
  test('requests the proxy answers itself: it stops reading them once stdout is full; read later, every answer comes in order', async () => {
    const run = await fixture('plain', { flags: ['--policy', ENFORCE] });
    const { stdin, stdout } = run.child;
    stdout!.pause();
    // Nested past 128 levels: enforce.yaml blocks it (unreadable-request) and answers -32600 itself.
    const deep = `${'['.repeat(130)}${']'.repeat(130)}`;
    // 4,000 lines (1.4 MB): the proxy took ~59 KB of them (its pipes and buffers), far under the quarter asked.
    const COUNT = 4_000;
    let written = 0;
    for (let id = 1; id <= COUNT; id++) {
      const line = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"a":${deep}}}}\n`;
      written += line.length;
      stdin!.write(line);
    }
    // Once neither the test's writes nor the proxy's log move, what the proxy took is what its
    // pipes and buffers hold, not the input (the log shows it working through what it took).
    await settled(() => `${stdin!.writableLength} ${run.log().length}`);
    const unread = stdin!.writableLength;
    assert.ok(unread > 0, 'the proxy read everything while nobody read its answers');
    const taken = written - unread;
    assert.ok(taken < written / 4, `the proxy took ${taken} of ${written} bytes while nobody read its answers`);

    stdout!.resume();
    stdin!.end();
    assert.deepEqual(await run.exit, { code: 0, signal: null });
    const answers = run.messages() as Array<{ id: number; error?: { code: number } }>;
    assert.deepEqual(
      answers.map((m) => m.id),
      Array.from({ length: COUNT }, (_, i) => i + 1),
      'every answer, once, in order',
    );
    assert.ok(answers.every((m) => m.error?.code === -32600));
  });
});
