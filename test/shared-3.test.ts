// One share of the integration test files, run in one process under `npm test` (test/shares.ts).
import { runShare } from './shares.ts';

await runShare(import.meta.url);
