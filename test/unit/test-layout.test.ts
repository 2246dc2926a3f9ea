// `npm test` runs most test files several to a process (test/shares.ts): its script names entry
// files and globs, not the test files. This keeps it honest: expanded, the script runs every
// test/unit/*.test.ts and test/integration/*.test.ts file exactly once; the slow tier
// (test/slow/: corpora, conformance suites, memory bounds, the production install) runs in
// `npm run test:slow`, which CI runs too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { propertyFiles, SHARE_ENTRY, share, shareEntries, unitShare } from '../shares.ts';

const ROOT = new URL('../../', import.meta.url);

/** `dir/name` with `*` in the name only, as sh expands it (sorted). */
function expand(pattern: string): string[] {
  const slash = pattern.lastIndexOf('/');
  const dir = pattern.slice(0, slash);
  const name = new RegExp(
    `^${pattern
      .slice(slash + 1)
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '[^/]*')}$`,
  );
  return readdirSync(new URL(`${dir}/`, ROOT))
    .filter((f) => name.test(f))
    .sort()
    .map((f) => `${dir}/${f}`);
}

test('npm test runs every unit and integration test file exactly once', () => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string> };
  assert.equal(pkg.scripts.test, 'npm run test:run --silent -- --checks', 'the tests, the type-check and the lint alongside them');
  const script = pkg.scripts['test:run']!;
  assert.match(script, /^node test\/run\.mjs /, 'the node test runner on the compiled files (test/run.mjs)');
  const shares = shareEntries().length;
  const run: string[] = [];
  for (const arg of script.split(/\s+/).filter((a) => a.endsWith('.ts'))) {
    for (const file of arg.includes('*') ? expand(arg) : [arg]) {
      if (file === 'test/unit.test.ts') run.push(...unitShare().map((f) => `test/unit/${f}`));
      else if (file === 'test/properties.test.ts') run.push(...propertyFiles().map((f) => `test/unit/${f}`));
      else if (file.startsWith('test/') && SHARE_ENTRY.test(file.slice('test/'.length))) {
        run.push(...share(Number(SHARE_ENTRY.exec(file.slice('test/'.length))![1]), shares).map((f) => `test/integration/${f}`));
      } else run.push(file);
    }
  }
  const all = [...expand('test/unit/*.test.ts'), ...expand('test/integration/*.test.ts')];
  assert.deepEqual([...run].sort(), all.sort());
});

test('the slow tier (npm run test:slow, which .ci/run runs) runs every test/slow file, and npm run test:all both', () => {
  const pkg = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')) as { scripts: Record<string, string> };
  const slow = pkg.scripts['test:slow']!;
  assert.match(slow, /^node --import tsx --test .*test\/slow\/\*\.test\.ts$/);
  assert.ok(expand('test/slow/*.test.ts').length > 0);
  assert.equal(pkg.scripts['test:all'], 'npm test && npm run test:slow --silent');
  const ci = readFileSync(new URL('.ci/run', ROOT), 'utf8');
  assert.match(ci, /npm run test:slow/, '.ci/run runs the slow tier');
});
