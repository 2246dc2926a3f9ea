// --pretty (#27): one line per record, an exchange as what happened, colours only on a terminal.
// It printed ~19 lines per exchange through pino-pretty, wrote colour codes into files, and was
// silently JSON where pino-pretty (a devDependency) was not installed.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { docsUrl } from '../../src/rules/explain.ts';
import { prettyLine, prettyStream } from '../../src/sinks/pretty.ts';

const exchange = {
  level: 30,
  time: '2026-12-06T04:19:33.180Z',
  name: 'mcp-warden',
  msg: 'exchange',
  method: 'tools/call',
  id: 5,
  tool: 'delete_everything',
  status: 200,
  outcome: 'isError',
  violations: 1,
  durationMs: 1.5,
  sessionId: 'abc',
  requestBytes: 120,
};

describe('prettyLine', () => {
  test('an exchange: time, level, method, tool, status, outcome, findings, time taken; one line', () => {
    assert.equal(
      prettyLine(exchange, false),
      '04:19:33.180 INFO  exchange  tools/call  delete_everything  200  isError  1 finding  1.5 ms',
    );
    assert.equal(
      prettyLine({ ...exchange, tool: undefined, method: 'ping', violations: 0, outcome: 'result' }, false),
      '04:19:33.180 INFO  exchange  ping  200  result  1.5 ms',
    );
  });

  test("a violation with a fix: a second, indented line with the fix, whole, and the rule's docs link", () => {
    const fix = 'answer with a JSON-RPC error {"code": -32602, "message": "Unknown tool: delete_everything"}';
    const lines = prettyLine(
      { level: 40, time: exchange.time, msg: 'violation', rule: 'unknown-tool-as-iserror', message: 'not in tools/list', fix },
      false,
    ).split('\n');
    assert.deepEqual(lines, [
      '04:19:33.180 WARN  violation unknown-tool-as-iserror  not in tools/list',
      `                     fix: ${fix}  ${docsUrl('unknown-tool-as-iserror')}`,
    ]);
  });

  test('a violation: its rule and message; any other record: its message and first plain fields, cut, on one line', () => {
    assert.equal(
      prettyLine(
        { level: 50, time: exchange.time, msg: 'violation', rule: 'leaked-path', message: 'error.message contains\na path' },
        false,
      ),
      '04:19:33.180 ERROR violation leaked-path  error.message contains⏎a path',
    );
    const line = prettyLine(
      { level: 40, time: exchange.time, msg: 'upstream failed', cause: 'ECONNREFUSED', detail: 'x'.repeat(500) },
      false,
    );
    assert.match(line, /^04:19:33\.180 WARN {2}upstream failed {2}cause=ECONNREFUSED {2}detail=x{79}…$/);
    assert.ok(!line.includes('\n'));
  });

  test('colours only when asked (a terminal): none in a file', () => {
    assert.ok(!prettyLine(exchange, false).includes('\x1b['));
    assert.ok(prettyLine(exchange, true).includes('\x1b[32mINFO \x1b[0m'));
  });
});

describe('prettyStream', () => {
  const collect = (isTTY: boolean, env: NodeJS.ProcessEnv = {}) => {
    let text = '';
    const out = Object.assign(
      new Writable({
        write(c, _e, done) {
          text += c.toString();
          done();
        },
      }),
      { isTTY },
    );
    return { stream: prettyStream(out, env), text: () => text };
  };

  test('JSON lines in, one pretty line each out, whatever the chunking; colours on a TTY unless NO_COLOR', async () => {
    const json = `${JSON.stringify(exchange)}\n${JSON.stringify({ ...exchange, id: 6 })}\n`;
    const file = collect(false);
    file.stream.write(json.slice(0, 40));
    file.stream.write(json.slice(40));
    await new Promise((r) => file.stream.end(r));
    assert.equal(file.text().split('\n').filter(Boolean).length, 2);
    assert.ok(!file.text().includes('\x1b['));
    const tty = collect(true);
    tty.stream.end(json);
    await new Promise((r) => tty.stream.on('finish', r));
    assert.ok(tty.text().includes('\x1b['));
    const noColor = collect(true, { NO_COLOR: '1' });
    noColor.stream.end(json);
    await new Promise((r) => noColor.stream.on('finish', r));
    assert.ok(!noColor.text().includes('\x1b['));
  });

  test('a line that is not JSON passes as it is', async () => {
    const out = collect(false);
    out.stream.end('not json\n');
    await new Promise((r) => out.stream.on('finish', r));
    assert.equal(out.text(), 'not json\n');
  });
});
