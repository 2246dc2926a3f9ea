// The benchmark's reading of a curve's shape (test/bench/curves.ts shapeOf): what RESULTS.md says of
// each proxy's growth (flat, linear, worse than linear) must follow the numbers.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { shapeOf } from '../bench/curves.ts';

const curve = (f: (x: number) => number, xs = [1, 10, 100, 1000, 10_000]) => xs.map((x) => ({ x, y: f(x) }));

test('a fixed cost per exchange is flat, even with one noisy point at the end', () => {
  assert.equal(shapeOf(curve(() => 200))?.verdict, 'flat');
  // The last point 1.5x off (this host's noise): the first-to-last slope is still under 0.25.
  assert.equal(shapeOf(curve((x) => (x === 10_000 ? 300 : 200)))?.verdict, 'flat');
});

test('a fixed cost plus a cost per unit is linear; per unit squared is worse', () => {
  assert.equal(shapeOf(curve((x) => 200 + 5 * x))?.verdict, 'linear');
  const quadratic = shapeOf(curve((x) => 200 + x * x));
  assert.equal(quadratic?.verdict, 'worse than linear');
  assert.ok(quadratic!.exponent > 1.9 && quadratic!.exponent < 2.1, `slope ${quadratic!.exponent}`);
});

test('points without a number (direct has no proxy CPU) are left out; fewer than two give no shape', () => {
  assert.equal(
    shapeOf([
      { x: 1, y: Number.NaN },
      { x: 10, y: 5 },
    ]),
    undefined,
  );
  assert.equal(shapeOf(curve((x) => (x === 1 ? Number.NaN : 100)))?.verdict, 'flat');
});
