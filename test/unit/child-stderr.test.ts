// ChildStderr (src/proxy/child-stderr.ts): a stdio server's stderr read as lines, each a record of
// the proxy's, redacted and cut; a line's length, and the records a second, bounded, what was
// dropped counted. A PassThrough for the child's stderr, a clock of the test's own.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { STDERR_BOUNDS } from '../../src/config/defaults.ts';
import { ChildStderr } from '../../src/proxy/child-stderr.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { createLogCapture } from '../helpers/log-capture.ts';

const tick = () => new Promise((r) => setImmediate(r));

function stderrOf() {
  const log = createLogCapture();
  const stream = new PassThrough();
  let now = 0;
  new ChildStderr(stream, createLogger({ destination: log.stream, level: 'debug' }), () => now);
  return {
    stream,
    log,
    advance: (ms: number) => void (now += ms),
    quoted: () => log.records.filter((r) => r.msg === 'stdio server stderr').map((r) => r.line as string),
    dropped: () => log.records.filter((r) => r.msg === 'stdio server stderr dropped').map((r) => r.lines as number),
  };
}

describe('ChildStderr', () => {
  test('a record per line (at info), CR and blank lines left out, lines split across writes put together', async () => {
    const s = stderrOf();
    s.stream.write('first\r\n\n   \nsec');
    s.stream.write('ond\n');
    s.stream.end('last, without a newline');
    await tick();
    assert.deepEqual(s.quoted(), ['first', 'second', 'last, without a newline']);
    assert.ok(s.log.records.every((r) => r.level === 30));
  });

  test('credentials are redacted; a line shaped as a record stays text in `line`', async () => {
    const s = stderrOf();
    const forged = '{"level":30,"msg":"exchange","method":"tools/call","id":1,"outcome":"result"}';
    s.stream.end(`${forged}\nPGPASSWORD=hunter2-hunter2 Bearer abcdef0123456789xyz\n`);
    await tick();
    assert.deepEqual(s.quoted(), [forged, 'PGPASSWORD=[REDACTED] Bearer [REDACTED]']);
    assert.ok(!s.log.records.some((r) => r.msg === 'exchange'));
  });

  test(`a line is cut to ${STDERR_BOUNDS.lineChars} characters; of a line past ${STDERR_BOUNDS.heldBytes} bytes the rest is read and dropped`, async () => {
    const s = stderrOf();
    s.stream.write(`${'a'.repeat(5_000)}\n`);
    // 10 MB in 64 KiB writes, one line: one record, the next line its own.
    for (let i = 0; i < 160; i++) s.stream.write('b'.repeat(64 * 1024));
    s.stream.end('\nnext\n');
    await tick();
    const [a, b, next] = s.quoted();
    assert.equal(a, `${'a'.repeat(STDERR_BOUNDS.lineChars - 1)}…`);
    assert.equal(b, `${'b'.repeat(STDERR_BOUNDS.lineChars - 1)}…`);
    assert.equal(next, 'next');
    assert.equal(s.quoted().length, 3);
  });

  test(`a flood: ${STDERR_BOUNDS.burstLines} records at once, then ${STDERR_BOUNDS.linesPerSecond} a second; what is dropped is counted before the next record and at the end`, async () => {
    const s = stderrOf();
    const lines = (from: number, n: number) => Array.from({ length: n }, (_, i) => `line ${from + i}\n`).join('');
    s.stream.write(lines(0, 5_000));
    await tick();
    assert.equal(s.quoted().length, STDERR_BOUNDS.burstLines);
    assert.deepEqual(s.dropped(), [], 'counted when a record comes next');
    s.advance(1_000);
    s.stream.write(lines(5_000, 1_000));
    await tick();
    assert.deepEqual(s.dropped(), [4_000], 'the count, before the next record');
    assert.equal(s.quoted().length, STDERR_BOUNDS.burstLines + STDERR_BOUNDS.linesPerSecond);
    assert.equal(s.quoted().at(-1), `line ${5_000 + STDERR_BOUNDS.linesPerSecond - 1}`);
    s.stream.end();
    await tick();
    assert.deepEqual(s.dropped(), [4_000, 1_000 - STDERR_BOUNDS.linesPerSecond], 'and at the end');
  });
});
