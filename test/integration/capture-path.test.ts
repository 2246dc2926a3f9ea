// Issue #44, item 6: a capture path the process cannot write stops `policy check` and the start
// with a message that names the path and why, instead of failing silently at the first exchange.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliArgs } from '../helpers/bundle.ts';

const CLI = await cliArgs();
const dir = await mkdtemp(join(tmpdir(), 'warden-capture-path-'));
after(() => rm(dir, { recursive: true, force: true }));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [...CLI, ...args], { timeout: 15_000 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
}

async function policyWithCapture(name: string, capture: string): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, `mode: audit\ncapture: { path: ${capture} }\n`);
  return file;
}

describe('a capture path that cannot be written', () => {
  for (const [what, capture, why] of [
    ['in a directory that does not exist', join(dir, 'missing', 'capture.jsonl'), `its directory ${join(dir, 'missing')} does not exist`],
    ['that is a directory', dir, 'it is a directory'],
  ] as const)
    test(`${what}: policy check fails, and the proxy does not start, saying why`, async () => {
      const file = await policyWithCapture(what.replace(/\W+/g, '-'), capture);
      const checked = await run(['policy', 'check', file]);
      assert.equal(checked.code, 1);
      assert.equal(checked.stdout, '');
      assert.match(
        checked.stderr,
        new RegExp(`capture\\.path ${capture.replace(/[/.]/g, '\\$&')} cannot be written: ${why.replace(/[/.]/g, '\\$&')}`),
      );
      assert.match(checked.stderr, /mount a volume there/);

      const started = await run(['proxy', '--upstream', 'http://127.0.0.1:9/mcp', '--listen', '127.0.0.1:0', '--policy', file]);
      assert.equal(started.code, 1);
      assert.doesNotMatch(started.stdout, /"msg":"listening"/);
      assert.match(started.stderr, /cannot be written: .*the proxy did not start/);
    });

  test('a writable one passes policy check and creates nothing', async () => {
    const capture = join(dir, 'capture.jsonl');
    const checked = await run(['policy', 'check', await policyWithCapture('writable', capture)]);
    assert.equal(checked.code, 0, checked.stderr);
    assert.match(checked.stdout, /^ok: /);
    await assert.rejects(stat(capture), 'policy check writes nothing');
  });
});
