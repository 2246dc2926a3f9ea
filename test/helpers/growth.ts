// Linear, not quadratic, without a wall-clock bound: the work at size n and at GROWTH·n is measured
// on the same machine in the same moment, and their ratio is what is asserted. A linear scan takes
// ~16 times as long at 16n, a quadratic one ~256 times; the bound (64) sits 4x from both. What is
// measured is the process's CPU time, not the wall clock: on a loaded machine a run of a few ms is
// preempted where one of 0.2 ms is not, and wall-clock ratios came out at 80x for a linear scan
// (npm test with a core kept busy). The two sizes are measured in alternation, best of up to seven
// each (two when both are well inside the bound), so a collection hits one round, not every run.
import assert from 'node:assert/strict';

export const GROWTH = 16;
const ROUNDS = 7;
const BOUND = 64;

/** The CPU time `run` took, in ms. */
const timed = (run: () => void): number => {
  const before = process.cpuUsage();
  run();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
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
