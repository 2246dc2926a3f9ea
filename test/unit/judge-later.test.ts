// The queue of judging put off until the poll phase is over (src/transport/judge-later.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JudgingQueue } from '../../src/transport/judge-later.ts';

test('tasks run after the current callbacks, in the order they came, once each', async () => {
  const failures: unknown[] = [];
  const queue = new JudgingQueue((err) => failures.push(err));
  const ran: string[] = [];
  queue.defer(() => ran.push('a'));
  queue.defer(() => {
    ran.push('b');
    queue.defer(() => ran.push('c'));
  });
  ran.push('now');
  assert.equal(queue.size, 2);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(ran, ['now', 'a', 'b', 'c']);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(ran, ['now', 'a', 'b', 'c'], 'a flushed task does not run again');
  assert.deepEqual(failures, []);
});

test('flush runs what waits now; a task that throws is reported and the rest still run', async () => {
  const failures: unknown[] = [];
  const queue = new JudgingQueue((err) => failures.push(err));
  const ran: number[] = [];
  queue.defer(() => ran.push(1));
  queue.defer(() => {
    throw new Error('broken');
  });
  queue.defer(() => ran.push(3));
  queue.flush();
  assert.deepEqual(ran, [1, 3]);
  assert.equal((failures[0] as Error).message, 'broken');
  assert.equal(queue.size, 0);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(ran, [1, 3]);
});

test('a flush from inside a task (the engine settling mid-judging) leaves the rest for after that task', () => {
  const queue = new JudgingQueue(() => {});
  const ran: string[] = [];
  queue.defer(() => {
    ran.push('a begins');
    queue.flush();
    ran.push('a ends');
  });
  queue.defer(() => ran.push('b'));
  queue.flush();
  assert.deepEqual(ran, ['a begins', 'a ends', 'b']);
});
