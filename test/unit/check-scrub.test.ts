import { test } from 'node:test';
import assert from 'node:assert/strict';
import { scrub, secretsOf } from '../../src/check/scrub.ts';

test('secretsOf: each -H value and its credential, longest first; short values are no secrets', () => {
  assert.deepEqual(secretsOf({ authorization: 'Bearer tok_123456789', 'x-api-key': 'k3y-abcdef', accept: 'a/b' }), [
    'Bearer tok_123456789',
    'tok_123456789',
    'k3y-abcdef',
  ]);
});

test('scrub: secrets replaced in strings and keys at any depth; controls escaped only when asked', () => {
  const report = { a: ['say tok_123456789 \u001b[2J'], b: { tok_123456789: 1, n: 2, d: null } };
  assert.deepEqual(scrub(report, ['tok_123456789'], true), { a: ['say [REDACTED] \\u001b[2J'], b: { '[REDACTED]': 1, n: 2, d: null } });
  assert.deepEqual(scrub(report, [], false), report);
  assert.equal(scrub('line\n\ttab\u0007', [], true), 'line\n\ttab\\u0007');
});
