// Linear, not quadratic, without a wall-clock bound: the work at size n and at 8n is timed on the
// same machine in the same moment (best of three each), and their ratio is what is asserted. A
// linear scan takes ~8 times as long at 8n, a quadratic one ~64 times; a loaded machine slows both.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';

const best = (run: () => void): number => {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    run();
    min = Math.min(min, performance.now() - t0);
  }
  return min;
};

/** `work(scale)` returns the work at that scale (1 and 8); asserts it grows less than quadratically. */
export function assertLinear(label: string, work: (scale: 1 | 8) => () => void): void {
  const small = work(1);
  const large = work(8);
  small(); // warm the code paths (and their regexes) before timing
  const ratio = best(large) / Math.max(best(small), 0.05);
  assert.ok(ratio < 24, `${label}: 8x the input took ${ratio.toFixed(1)}x as long (linear ~8x, quadratic ~64x)`);
}
