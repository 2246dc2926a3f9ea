// Load what a command needs, when it needs it (#27): `--version` and `--help` answer without
// loading the proxy (0.38 s and 92 MB before, 0.08 s and 46 MB after, node dist/cli.js --version on
// this machine), and `stdio` loads no OpenTelemetry unless spans are exported. Checked by what the
// process loads (a resolve hook records every module), not by timing it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sourceArgs, sourceUrl } from '../helpers/compiled.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const HOOK = new URL('../fixtures/record-imports.mjs', import.meta.url).pathname;

/** Runs `node src/cli.ts ...args` from source (or its compiled twins under `npm test`, module for module); returns the modules it loaded (paths from the repository's root, or package names). */
function loaded(args: readonly string[], input = ''): { modules: string[]; stdout: string; status: number | null } {
  const dir = mkdtempSync(join(tmpdir(), 'warden-startup-'));
  const file = join(dir, 'imports.txt');
  try {
    const run = spawnSync(process.execPath, ['--import', HOOK, ...sourceArgs('src/cli.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, RECORD_IMPORTS: file },
      input,
      encoding: 'utf8',
      timeout: 30_000,
    });
    const modules = readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((loadedUrl) => {
        const url = sourceUrl(loadedUrl);
        const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
        return pkg ? pkg[1]! : url.replace(`file://${ROOT}`, '');
      });
    return { modules: [...new Set(modules)], stdout: run.stdout, status: run.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What only the serving commands need: the proxy, the engine, the rules, the sinks and their packages. */
const HEAVY = [
  /^src\/(proxy|engine|transport|rules|sinks|exchange|rewrite|check\/run)/,
  /^(undici|pino|ajv|yaml|prom-client|http-proxy-3|@opentelemetry\/.*)$/,
];

for (const args of [['--version'], ['--help'], ['check', '--help'], ['stdio', '--help']]) {
  test(`mcp-warden ${args.join(' ')} loads none of the proxy`, () => {
    const run = loaded(args);
    assert.equal(run.status, 0);
    assert.ok(run.stdout.length > 0);
    const heavy = run.modules.filter((m) => HEAVY.some((re) => re.test(m)));
    assert.deepEqual(heavy, [], 'loaded for nothing');
  });
}

test('mcp-warden stdio loads no OpenTelemetry unless spans are exported', () => {
  // A server that exits at once: the relay starts, sees it gone, and ends.
  const run = loaded(['stdio', '--', process.execPath, '-e', 'process.exit(0)']);
  assert.equal(run.status, 0);
  assert.ok(run.modules.includes('src/engine/engine.ts'), 'the relay ran');
  assert.deepEqual(
    run.modules.filter((m) => m.startsWith('@opentelemetry/')),
    [],
  );
});
