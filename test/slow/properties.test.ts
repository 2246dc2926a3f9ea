// The property tests at twice their runs (test/properties.test.ts runs them at a quarter under
// `npm test`). PROPERTY_RUNS_MULTIPLIER, when set, wins.
import { runProperties } from '../shares.ts';

await runProperties(2);
