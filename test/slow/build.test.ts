// `npm run build` (which `npm run demo` runs first) as the build of a clone: it re-ran the whole
// tsc every time (18 s against the demo's 2.7 s). In the slow tier: a build from scratch takes ~5 s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

// `npm run demo` builds first: it re-ran the whole tsc every time (18 s against the demo's 2.7 s).
test('npm run build emits nothing when nothing changed, and rebuilds what is missing', () => {
  const build = () => spawnSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
  assert.equal(build().status, 0);
  const cli = join(ROOT, 'dist', 'cli.js');
  const before = statSync(cli).mtimeMs;
  assert.equal(build().status, 0);
  assert.equal(statSync(cli).mtimeMs, before, 'dist/cli.js not written again');
  rmSync(cli);
  assert.equal(build().status, 0);
  assert.ok(existsSync(cli), 'a missing output is built again');
});
