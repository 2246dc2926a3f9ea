// The test runner's output for `npm test`: a dot per test (X a failure, s skipped, t todo) instead
// of a line each (the spec reporter printed ~15,700 lines, and a failure sat far above the summary),
// then every failure again with its file and line and what it said, then the runner's own summary
// lines (ℹ tests, ℹ pass, ℹ fail ...) and one plain "N passed, N failed" line to close.
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

// Plain JavaScript: the runner loads a reporter before tsx's hooks are in place.

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const WIDTH = 100;

/** Where a test is, from the repository's root. */
/** @param {{ file?: string, line?: number, column?: number }} d */
const where = (d) =>
  d.file
    ? `${relative(ROOT, d.file.startsWith('file:') ? fileURLToPath(d.file) : d.file)}:${d.line ?? 0}:${d.column ?? 0}`
    : '(unknown file)';

/** What a failure said: the assertion's message (the cause's, when the runner wrapped it), a few lines. */
/** @param {(Error & { cause?: unknown }) | undefined} error */
function said(error) {
  const inner = error?.cause instanceof Error ? error.cause : error;
  const text = inner ? (inner.stack ?? inner.message) : 'failed';
  // The runner's own frames say nothing about the test.
  const lines = text.split('\n').filter((l) => !/\(node:|at node:|node:internal/.test(l));
  return lines.slice(0, 24).join('\n') + (lines.length > 24 ? `\n… ${lines.length - 24} more lines` : '');
}

const SUMMARY = /^(tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) /;

/** @param {AsyncIterable<{ type: string, data: any }>} source */
export default async function* reporter(source) {
  let column = 0;
  const failures = [];
  /** @type {string[]} */
  const summary = [];
  let passed = 0;
  let skipped = 0;
  /** @param {string} c */
  const mark = function* (c) {
    yield c;
    if (++column === WIDTH) {
      column = 0;
      yield '\n';
    }
  };
  for await (const event of source) {
    const d = event.data;
    // Suites end as tests too: only their leaves are marked; a failing suite with no failing leaf is listed.
    const leaf = d.details?.type !== 'suite';
    if (event.type === 'test:pass' && leaf) {
      if (d.skip) skipped++;
      else passed++;
      yield* mark(d.skip ? 's' : d.todo ? 't' : '.');
    } else if (event.type === 'test:fail') {
      if (d.todo) {
        if (leaf) yield* mark('t');
        continue;
      }
      // A suite fails when one of its tests does: that test is listed already.
      if (!leaf && d.details?.error?.message?.includes('subtest')) continue;
      failures.push(d);
      yield* mark('X');
    } else if (event.type === 'test:diagnostic' && (d.nesting ?? 0) === 0 && SUMMARY.test(d.message ?? '')) {
      summary.push(`ℹ ${d.message}`);
    } else if (event.type === 'test:stderr' || event.type === 'test:stdout') {
      // What tests print is not the report (a failing test's own output is in its error).
    }
  }
  if (column > 0) yield '\n';
  if (failures.length > 0) {
    yield `\n✖ ${failures.length} failing:\n`;
    for (const f of failures) yield `\n✖ ${f.name}\n  at ${where(f)}\n${said(f.details?.error).replace(/^/gm, '    ')}\n`;
  }
  yield `\n${summary.join('\n')}\n`;
  yield `${passed} passed, ${failures.length} failed, ${skipped} skipped\n`;
}
