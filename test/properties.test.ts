// The property tests under `npm test`, in one process, at an eighth of their runs (~6 s of CPU
// against ~9 s at a quarter): fast-check seeds every run afresh, so runs add up over a day's
// `npm test`s. The slow tier
// (test/slow/properties.test.ts, which CI runs) runs them at twice their runs.
// PROPERTY_RUNS_MULTIPLIER, when set, wins over both.
import { runProperties } from './shares.ts';

await runProperties(0.125);
