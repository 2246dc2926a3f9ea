// What each integration test file costs in a run of the shares, for test/shares.ts to balance them:
// the seconds its top-level tests took, as JSON. Regenerate test/shares-cost.json (after adding or
// changing slow tests; a file missing from it counts as a typical one), into another file first:
// the runner empties its destination before the shares read the table.
//   node test/run.mjs --test-concurrency=4 --test-reporter=./test/cost-reporter.mjs \
//     --test-reporter-destination=/tmp/shares-cost.json test/shared-*.test.ts && mv /tmp/shares-cost.json test/shares-cost.json
import { basename } from 'node:path';

// Plain JavaScript: the runner loads a reporter before tsx's hooks are in place.

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* costReporter(source) {
  /** @type {Map<string, number>} */
  const seconds = new Map();
  for await (const event of source) {
    const d = event.data;
    if ((event.type !== 'test:pass' && event.type !== 'test:fail') || d.nesting !== 0 || !d.file?.includes('/test/integration/')) continue;
    const file = basename(d.file);
    seconds.set(file, (seconds.get(file) ?? 0) + (d.details?.duration_ms ?? 0) / 1000);
  }
  const sorted = [...seconds].sort(([a], [b]) => (a < b ? -1 : 1)).map(([file, s]) => [file, Math.round(s * 10) / 10]);
  yield `${JSON.stringify(Object.fromEntries(sorted), null, 2)}\n`;
}
