// Load for the transports whose answer does not come back on the request (stdio's pipes, the legacy
// HTTP+SSE stream), driven by the bench itself: `inFlight` workers, each sending its next call as
// soon as its last one was answered (1: sequential; 10: ten in flight). The first `warmupS` seconds
// are not counted; then every answer's time (hrtime, fractional ms) is kept for `durationS`. The
// loop stops by itself when the measured window ends; a call the client gives up on (its timeout)
// ends the loop with that error.
import { performance } from 'node:perf_hooks';
import type { WindowHooks } from './load.ts';

export interface LoopOptions {
  inFlight: number;
  warmupS: number;
  durationS: number;
}

export interface LoopNumbers {
  /** Answers (results) in the measured window. */
  messages: number;
  perS: number;
  p50: number;
  p99: number;
  mean: number;
  /** Answers that were not a result (whole run). */
  errors: number;
}

export const percentile = (sorted: ArrayLike<number>, p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

/** Runs `call` (true: answered with a result) in a closed loop; `hooks` mark the measured window. */
export async function closedLoop(call: () => Promise<boolean>, o: LoopOptions, hooks: WindowHooks = {}): Promise<LoopNumbers> {
  const samples: number[] = [];
  let errors = 0;
  let measuring = false;
  let ended = false;
  let from = 0;
  let to = 0;
  const timers = [
    setTimeout(() => {
      hooks.start?.();
      from = performance.now();
      measuring = true;
    }, o.warmupS * 1000),
    setTimeout(
      () => {
        measuring = false;
        ended = true;
        to = performance.now();
        hooks.end?.();
      },
      (o.warmupS + o.durationS) * 1000,
    ),
  ];
  const worker = async (): Promise<void> => {
    while (!ended) {
      const t0 = performance.now();
      const ok = await call();
      if (!ok) errors++;
      else if (measuring) samples.push(performance.now() - t0);
    }
  };
  try {
    await Promise.all(Array.from({ length: o.inFlight }, worker));
  } catch (err) {
    ended = true;
    throw err;
  } finally {
    timers.forEach(clearTimeout);
  }
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    messages: sorted.length,
    perS: sorted.length / Math.max(1e-9, (to - from) / 1000),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
    errors,
  };
}
