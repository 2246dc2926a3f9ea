// Backpressure in the stdio relay: FlowControl (src/transport/flow-control.ts) pauses a reader
// while anything it feeds is full, and the relay's own answers held behind a server line still
// being relayed count as something the client's input feeds. In-memory streams, no child process.
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { loadPolicyText } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { FlowControl } from '../../src/transport/flow-control.ts';
import { relayUnder } from '../helpers/stdio-relay.ts';

const tick = () => new Promise((r) => setImmediate(r));

/** A writable that takes nothing until release(): then every write completes. */
function stuck(highWaterMark: number) {
  const pending: Array<() => void> = [];
  let open = false;
  const out = new Writable({
    highWaterMark,
    write(_chunk, _enc, cb) {
      if (open) cb();
      else pending.push(() => cb());
    },
  });
  return {
    out,
    release() {
      open = true;
      for (const cb of pending.splice(0)) cb();
    },
  };
}

describe('FlowControl', () => {
  test('a reader feeding two outputs is paused while either is full and resumed only when neither is', () => {
    const from = new PassThrough();
    from.resume();
    const a = {};
    const b = {};
    const flow = new FlowControl([{ from, into: [a, b] }]);
    flow.stop(a);
    assert.equal(from.isPaused(), true);
    flow.stop(b);
    flow.go(a);
    assert.equal(from.isPaused(), true, 'b is still full');
    flow.go(b);
    assert.equal(from.isPaused(), false);
  });

  test('write(): past the buffer every reader feeding the output pauses, with one drain listener however many writes; drain resumes them', async () => {
    const one = new PassThrough();
    const two = new PassThrough();
    const other = new PassThrough();
    for (const r of [one, two, other]) r.resume();
    const { out, release } = stuck(8);
    const flow = new FlowControl([
      { from: one, into: [out] },
      { from: two, into: [out] },
      { from: other, into: [{}] },
    ]);
    for (let i = 0; i < 20; i++) flow.write(out, Buffer.from('0123456789'));
    assert.deepEqual(
      [one, two, other].map((r) => r.isPaused()),
      [true, true, false],
    );
    assert.equal(out.listenerCount('drain'), 1);
    release();
    await tick();
    assert.deepEqual(
      [one, two].map((r) => r.isPaused()),
      [false, false],
    );
  });
});

describe('the relay', () => {
  test("enforce: the proxy's answers held behind a server line still being relayed pause the client's input past a buffer's worth, and come after the line, in order", async () => {
    const policy = loadPolicyText('mode: enforce\nrules:\n  request-envelope: block\n', 'test.yaml', { rewritable: REWRITABLE });
    assert.ok(policy.ok);
    // auditBodyBytes small: a long server line is relayed in pieces as they come.
    const { client, server } = relayUnder(policy.policy, { auditBodyBytes: 64 });
    const out: string[] = [];
    (client.output as PassThrough).on('data', (c: Buffer) => out.push(c.toString('utf8')));
    const big = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'y'.repeat(200) }] } });
    server.output.write(big.slice(0, 120)); // the line begins, and its end does not come yet
    await tick();
    // Notifications sent with an id: request-envelope, each answered by the proxy itself.
    const blocked = (id: number) =>
      `${JSON.stringify({ jsonrpc: '2.0', id, method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } })}\n`;
    const COUNT = 2_000;
    for (let id = 1; id <= COUNT; id++) client.input.write(blocked(id));
    await tick();
    assert.equal(client.input.isPaused(), true, 'the client input is paused while the answers wait');
    assert.ok(client.input.readableLength > 0, 'what the client wrote waits unread');
    server.output.write(`${big.slice(120)}\n`);
    for (let i = 0; i < 20 && client.input.readableLength > 0; i++) await tick();
    assert.equal(client.input.isPaused(), false);
    const lines = out
      .join('')
      .split('\n')
      .filter((l) => l !== '');
    assert.equal(lines[0], big, 'the server line first, whole');
    assert.deepEqual(
      lines.slice(1).map((l) => (JSON.parse(l) as { id: number }).id),
      Array.from({ length: COUNT }, (_, i) => i + 1),
    );
  });
});
