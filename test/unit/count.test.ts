import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatCount } from '../../src/util/count.ts';

test('formatCount groups thousands as en-US does', () => {
  for (const n of [0, 7, 999, 1000, 10_000, 123_456, 1_000_000, 4_194_304, -1234, Number.MAX_SAFE_INTEGER]) {
    assert.equal(formatCount(n), n.toLocaleString('en-US'), String(n));
  }
  fc.assert(fc.property(fc.integer(), (n) => formatCount(n) === n.toLocaleString('en-US')));
});
