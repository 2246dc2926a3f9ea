// The unit test files in one process under `npm test` (test/shares.ts): they are pure (no sockets,
// no top-level hooks, no environment), and a process each cost ~0.3 s of CPU to start, more than
// most of them take to run. The *.property.test.ts files, seconds of CPU each, run in a process of
// their own (test/properties.test.ts), so the runner's slots share the work.
import { runUnitShare } from './shares.ts';

await runUnitShare();
