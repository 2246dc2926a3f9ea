// Review of #15 (--workers, one order for facts): a worker re-applies its own fact when a peer's
// came back first ('overtaken'). But what comes back is what was SENT: for an initialize whose
// capabilities cannot be serialised (the worker relay falls back to a copy without them), the
// re-applied echo wipes the capabilities this worker had learned from its own traffic. Before the
// change the worker kept them (review-workers.test.ts: deeply nested capabilities).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SessionStore } from '../../src/exchange/sessions.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { shareSessions } from '../../src/state/shared.ts';
import { FACT, WorkerRelay } from '../../src/state/worker-relay.ts';

test("a worker's own initialize, overtaken by a peer's fact, keeps the capabilities it learned", () => {
  const sent: unknown[] = [];
  const original = process.send;
  // The IPC channel's serialisation (JSON): deep values throw, as on the real channel.
  process.send = ((msg: unknown) => {
    sent.push(JSON.parse(JSON.stringify(msg)));
    return true;
  }) as typeof process.send;
  try {
    const sessions = new SessionStore({ maxSessions: 100, sessionIdleMs: 600_000, maxToolsPerSession: 1000 });
    const relay = new WorkerRelay(createLogger({ destination: { write() {} }, level: 'error' }));
    shareSessions(sessions, relay, () => 0);
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const serverCapabilities = { tools: { listChanged: true }, experimental: { x: deep } };
    const key = 'anon:shared-credential';
    sessions.learn(
      {
        kind: 'initialized',
        key,
        sessionId: undefined,
        version: '2025-06-18',
        serverCapabilities,
        clientCapabilities: {},
        clientInfo: undefined,
      },
      0,
    );
    assert.equal(sent.length, 1, 'the copy without capabilities went');
    assert.equal(sessions.find(key, 0)?.serverCapabilities, serverCapabilities, 'learned from its own traffic');
    // The primary ordered a peer's fact on the same session first, then ours (not in this test process: origin undefined = ours).
    process.emit('message' as never, { type: FACT, fact: { kind: 'tools-changed', key }, origin: 99 } as never);
    process.emit('message' as never, { ...(sent[0] as object), origin: undefined } as never);
    assert.equal(sessions.find(key, 0)?.serverCapabilities, serverCapabilities, 'its own capabilities are still known');
    void relay.close();
  } finally {
    process.send = original;
    process.removeAllListeners('message');
  }
});
