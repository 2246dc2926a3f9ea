// --state: where session state lives (memory, or a Redis URL), and what the command line may print of it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hideUserinfo, parseState } from '../../src/state/state-url.ts';

test('memory, redis:// and rediss:// (with a password and a database) are locations; anything else is refused without its password', () => {
  assert.deepEqual(parseState('memory'), { kind: 'memory' });
  const plain = parseState('redis://127.0.0.1:6379');
  assert.equal(plain.kind === 'redis' && plain.url.port, '6379');
  const tls = parseState('rediss://:pw@redis.internal:6380/2');
  assert.equal(tls.kind === 'redis' && `${tls.url.protocol} ${tls.url.password} ${tls.url.pathname}`, 'rediss: pw /2');
  for (const bad of ['mysql://:pw@db:3306', 'redis://:pw@h:1/x', 'localhost:6379', 'redis']) {
    assert.throws(
      () => parseState(bad),
      (err: Error) => /expected memory, or redis:\/\/HOST:PORT|must be a number/.test(err.message) && !err.message.includes(':pw@'),
      bad,
    );
  }
});

test('hideUserinfo hides the password of every URL in a text, and leaves the rest', () => {
  assert.equal(
    hideUserinfo("argument 'redis://:s3cret@h:1/0' and rediss://user:p%40ss@h2 and http://h/p?a=b"),
    "argument 'redis://:[REDACTED]@h:1/0' and rediss://user:[REDACTED]@h2 and http://h/p?a=b",
  );
});
