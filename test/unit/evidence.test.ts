import { test } from 'node:test';
import assert from 'node:assert/strict';
import { excerpt, pointer, redactSecrets } from '../../src/rules/evidence.ts';

test('redactSecrets masks bearer tokens, JWTs, API keys and key=value secrets, and nothing else', () => {
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz';
  const out = redactSecrets(`jwt ${jwt} at 10:30, Authorization: Bearer abc.def-ghi, key sk-abcdefghijklmnop, password=hunter2&x=1`);
  for (const secret of [jwt, 'abc.def-ghi', 'sk-abcdefghijklmnop', 'hunter2']) assert.ok(!out.includes(secret), `${secret} in ${out}`);
  assert.match(out, /at 10:30/);
  assert.match(out, /x=1/);
  assert.equal(redactSecrets('nothing to hide: 42'), 'nothing to hide: 42');
});

test('excerpt is one short redacted line', () => {
  assert.equal(excerpt('a\n  b\tc'), 'a b c');
  assert.equal(excerpt('x'.repeat(500)).length, 160);
  assert.equal(excerpt({ token: 'abc' }), '{"token":"[REDACTED]"}');
});

test('pointer escapes ~ and /', () => {
  assert.equal(pointer('response', 'a/b', 'c~d', 0), '/response/a~1b/c~0d/0');
});
