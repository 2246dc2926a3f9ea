// Review of #13 (stdio relay): StdioRelay driven over in-memory streams, no child process. Each
// test shows a bug and is marked todo until it is fixed.
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { type PassThrough, Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { loadPolicyFile, loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { relayUnder } from '../helpers/stdio-relay.ts';

const loaded = await loadPolicyFile(fileURLToPath(new URL('../../config/enforce.yaml', import.meta.url)), { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const ENFORCE: Policy = loaded.policy;

const tick = () => new Promise((r) => setImmediate(r));

describe('review #13: stdio relay', () => {
  for (const limits of [{ auditEventBytes: 256 }, { auditBodyBytes: 256 }]) {
    test(`enforce: a pretty-printed answer larger than ${JSON.stringify(limits)} reaches the client (joined, or relayed unread)`, async () => {
      const { client, server } = relayUnder(ENFORCE, limits);
      const out: string[] = [];
      (client.output as PassThrough).on('data', (c: Buffer) => out.push(c.toString('utf8')));
      client.input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })}\n`);
      await tick();
      // A correct answer, pretty-printed (as some servers do), ~1 KiB: over auditEventBytes, far under auditBodyBytes.
      const tools = Array.from({ length: 20 }, (_, i) => ({ name: `tool_${i}`, inputSchema: { type: 'object' } }));
      server.output.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools } }, null, 2)}\n`);
      await tick();
      const text = out.join('');
      // Expected: the message reaches the client (on one line, or as it came, unaudited) — never nothing.
      assert.ok(text.includes('tool_19'), `the client got: ${JSON.stringify(text.slice(0, 200))}`);
    });
  }

  test('the client closes its stdout while a write is pending: the child stdout stays paused forever', async () => {
    // A client pipe that is full (never calls back), then breaks (EPIPE).
    let fail: ((err: Error) => void) | undefined;
    const stuck = new Writable({
      highWaterMark: 16,
      write(_chunk, _enc, cb) {
        fail = cb;
      },
    });
    stuck.on('error', () => {});
    const { server } = relayUnder(ENFORCE, {}, stuck);
    // enforce: a message line is judged, then written to the client; the write fills the pipe.
    server.output.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } })}\n`);
    await tick();
    assert.equal(server.output.isPaused(), true, "precondition: backpressure paused the child's stdout");
    const epipe = Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
    fail!(epipe);
    await tick();
    // The child is told to stop (its stdin ends), but it can only see that once its writes go
    // somewhere: a child blocked on a full stdout pipe never reads EOF and never exits.
    assert.equal(server.output.isPaused(), false, "the child's stdout must be drained (and discarded) once the client is gone");
  });

  test('many lines in one chunk to a slow client: one drain listener per line (MaxListenersExceededWarning)', async () => {
    const slow = new Writable({
      highWaterMark: 64,
      write(_chunk, _enc, cb) {
        setTimeout(cb, 5);
      },
    });
    const { server } = relayUnder(ENFORCE, {}, slow);
    const line = `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } })}\n`;
    server.output.write(line.repeat(50));
    await tick();
    assert.ok(slow.listenerCount('drain') <= 1, `drain listeners: ${slow.listenerCount('drain')}`);
  });

  test("enforce: a blocked client message's reply is written into the middle of a server line still being relayed", async () => {
    const policy = loadPolicyText('mode: enforce\nrules:\n  request-envelope: block\n', 'test.yaml', { rewritable: REWRITABLE });
    assert.ok(policy.ok);
    // auditBodyBytes small: a long server line is relayed in pieces as they come.
    const { client, server } = relayUnder(policy.policy, { auditBodyBytes: 64 });
    const out: string[] = [];
    (client.output as PassThrough).on('data', (c: Buffer) => out.push(c.toString('utf8')));
    const big = JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'y'.repeat(200) }] } });
    server.output.write(big.slice(0, 120)); // the first part of a long line, no newline yet
    await tick();
    // A notification sent with an id: request-envelope, blocked and answered by the proxy.
    client.input.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 'b', method: 'notifications/progress', params: { progressToken: 'p', progress: 1 } })}\n`,
    );
    await tick();
    server.output.write(`${big.slice(120)}\n`);
    await tick();
    const lines = out
      .join('')
      .split('\n')
      .filter((l) => l !== '');
    for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `a line the client cannot parse: ${l.slice(0, 120)}`);
  });
});
