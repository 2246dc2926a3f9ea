// `mcp-warden policy check FILE` and `mcp-warden policy schema` as a user runs them: a child
// process, its exit code and its output.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { cliArgs } from '../helpers/bundle.ts';

/** `node ...CLI <command>` runs src/cli.ts (a bundle of it: test/helpers/bundle.ts). */
const CLI = await cliArgs();

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'warden-cli-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('mcp-warden policy check', () => {
  test('the shipped audit policy: exit 0, ok, no warnings', async () => {
    assert.deepEqual(await cli('policy', 'check', 'config/audit.yaml'), {
      code: 0,
      stdout: 'ok: config/audit.yaml: mode audit, 0 rule settings\n',
      stderr: '',
    });
  });

  test('the shipped enforce policy: exit 0, ok, no warnings', async () => {
    assert.deepEqual(await cli('policy', 'check', 'config/enforce.yaml'), {
      code: 0,
      stdout: 'ok: config/enforce.yaml: mode enforce, 24 rule settings\n',
      stderr: '',
    });
  });

  test('a policy with warnings: exit 0, ok, then each warning', async () => {
    const file = join(dir, 'warn.yaml');
    await writeFile(file, "rules:\n  tools: rewrite\n  html-body: { action: block, methods: ['tool/call'] }\n");
    const { code, stdout, stderr } = await cli('policy', 'check', file);
    assert.equal(code, 0);
    assert.equal(stderr, '');
    const lines = stdout.trimEnd().split('\n');
    assert.equal(lines[0], `ok: ${file}: mode audit, 2 rule settings`);
    assert.match(
      lines[1]!,
      new RegExp(
        `^warning: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:10: rules\\.tools: rewrite: \\d+ rules without a rewriter \\(.+\\): their findings are logged, not rewritten$`,
      ),
    );
    assert.equal(
      lines[2],
      `warning: ${file}:3:41: rules.html-body.methods[0]: "tool/call" matches no method MCP defines; did you mean "tools/call"?`,
    );
    assert.equal(lines.length, 3);
  });

  test('a bad policy: exit 1, every error on stderr with file:line:column, then the count', async () => {
    const file = join(dir, 'bad.yaml');
    await writeFile(
      file,
      ['mode: enforced', 'upstream:', '  timout: 5s', 'limits:', '  auditBody: 4 megs', 'rules:', '  html-body: rewrit', ''].join('\n'),
    );
    const { code, stdout, stderr } = await cli('policy', 'check', file);
    assert.equal(code, 1);
    assert.equal(stdout, '');
    assert.equal(
      stderr,
      [
        `${file}:1:7: mode: expected one of audit|enforce, found "enforced"; did you mean "enforce"?`,
        `${file}:3:3: upstream.timout: unknown key "timout" in upstream; allowed: url, timeout, idleTimeout, connectTimeout, hostHeader, transport; did you mean "timeout"?`,
        `${file}:5:14: limits.auditBody: expected a size such as 512kb, 4mib or a number of bytes, found "4 megs"`,
        `${file}:7:14: rules.html-body: expected one of off|log|rewrite|block, found "rewrit"; did you mean "rewrite"?`,
        `${file}: 4 errors`,
        '',
      ].join('\n'),
    );
  });

  test('a missing file: exit 1', async () => {
    const file = join(dir, 'nope.yaml');
    assert.deepEqual(await cli('policy', 'check', file), {
      code: 1,
      stdout: '',
      stderr: `${file}: cannot read the policy file: no such file\n${file}: 1 error\n`,
    });
  });
});

test('mcp-warden policy schema prints config/policy.schema.json', async () => {
  const { code, stdout } = await cli('policy', 'schema');
  assert.equal(code, 0);
  assert.equal(stdout, await readFile(join(ROOT, 'config/policy.schema.json'), 'utf8'));
});
