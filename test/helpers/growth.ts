// Linear, not quadratic, without a wall-clock bound: the work at size n and at GROWTH·n is timed on
// the same machine in the same moment, and their ratio is what is asserted. A linear scan takes ~16
// times as long at 16n, a quadratic one ~256 times; the bound (64) sits 4x from both. The two sizes
// are timed in alternation, best of up to seven each (two when both are well inside the bound), so a
// stall from a parallel test file or a collection hits one round, not every run of one size.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';

export const GROWTH = 16;
const ROUNDS = 7;
const BOUND = 64;

const timed = (run: () => void): number => {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
};

/** `work(scale)` returns the work at that scale (1 and GROWTH); asserts it grows less than quadratically. */
export function assertLinear(label: string, work: (scale: 1 | typeof GROWTH) => () => void): void {
  const small = work(1);
  const large = work(GROWTH);
  small(); // warm the code paths (and their regexes) before timing
  let bestSmall = Number.POSITIVE_INFINITY;
  let bestLarge = Number.POSITIVE_INFINITY;
  let ratio = Number.POSITIVE_INFINITY;
  for (let i = 0; i < ROUNDS; i++) {
    bestSmall = Math.min(bestSmall, timed(small));
    bestLarge = Math.min(bestLarge, timed(large));
    ratio = bestLarge / Math.max(bestSmall, 0.05);
    // Two rounds well inside the bound settle it: more rounds only help a run a stall slowed.
    if (i >= 1 && ratio < BOUND / 2) break;
  }
  assert.ok(
    ratio < BOUND,
    `${label}: ${GROWTH}x the input took ${ratio.toFixed(1)}x as long (linear ~${GROWTH}x, quadratic ~${GROWTH * GROWTH}x)`,
  );
}
