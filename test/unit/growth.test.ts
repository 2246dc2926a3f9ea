// The linear-time check (test/helpers/growth.ts) itself: silent on linear work, firing on quadratic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertLinear, type GROWTH } from '../helpers/growth.ts';

const sizes = (n: number) => (scale: 1 | typeof GROWTH) => Array.from({ length: n * scale }, (_, i) => i);

test('assertLinear passes linear work and fails quadratic work, by CPU time', () => {
  let sink = 0;
  const linear = sizes(20_000);
  assertLinear('a sum', (scale) => {
    const xs = linear(scale);
    return () => {
      for (const x of xs) sink += x;
    };
  });
  const quadratic = sizes(300);
  assert.throws(
    () =>
      assertLinear('every pair', (scale) => {
        const xs = quadratic(scale);
        return () => {
          for (const a of xs) for (const b of xs) sink += a ^ b;
        };
      }),
    /every pair: 16x the input took \d+(\.\d)?x as long/,
  );
  assert.ok(sink !== 0);
});
