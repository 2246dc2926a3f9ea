// `check --baseline FILE` / `--update-baseline`: findings a team accepted fail nothing, a new one
// fails the run, one that went away is reported fixed. The check command in process, against
// hand-written servers on loopback.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startCheckServer, type CheckServer } from '../fixtures/check-servers.ts';
import { checkInProcess as check } from '../helpers/check.ts';

const FAST = ['--probe-timeout', '2s', '--timeout', '20s'];

let good: CheckServer;
let broken: CheckServer;
let worse: CheckServer;
let dir: string;
before(async () => {
  good = await startCheckServer({ versions: ['2025-11-25'] });
  broken = await startCheckServer({ versions: ['2025-11-25'], faults: ['unknown-tool-iserror'] });
  worse = await startCheckServer({ versions: ['2025-11-25'], faults: ['unknown-tool-iserror', 'unknown-method-code'] });
  dir = await mkdtemp(join(tmpdir(), 'warden-baseline-'));
});
after(async () => {
  await Promise.all([good.close(), broken.close(), worse.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('check --baseline', () => {
  test('--update-baseline writes the findings and exits 0; the same findings then fail nothing; a new one fails; a fixed one is reported', async () => {
    const file = join(dir, 'baseline.json');
    const written = await check(broken.url.href, ...FAST, '--baseline', file, '--update-baseline');
    assert.equal(written.code, 0, written.stdout);
    assert.match(written.stderr, /baseline written: \d+ findings to /);
    const baseline = JSON.parse(await readFile(file, 'utf8')) as { findings: Array<{ probe: string; rule: string }> };
    assert.ok(baseline.findings.some((f) => f.probe === 'unknown-tool' && f.rule === 'unknown-tool-as-iserror'));

    const same = await check(broken.url.href, ...FAST, '--baseline', file);
    assert.equal(same.code, 0, same.stdout);
    assert.match(same.stdout, /\(accepted by the baseline\)/);
    assert.match(same.stdout, /; 0 errors, \d+ warnings?, \d+ accepted by the baseline \(exit 0\)/);
    const without = await check(broken.url.href, ...FAST);
    assert.equal(without.code, 1, 'without the baseline the same server fails');

    const more = await check(worse.url.href, ...FAST, '--baseline', file);
    assert.equal(more.code, 1, 'a finding the baseline does not list fails the run');
    const json = JSON.parse((await check(worse.url.href, ...FAST, '--baseline', file, '--format', 'json')).stdout) as {
      probes: Array<{ probe: string; findings: Array<{ rule: string; accepted?: boolean }> }>;
    };
    const findings = json.probes.flatMap((p) => p.findings.map((f) => ({ probe: p.probe, ...f })));
    assert.ok(findings.some((f) => f.rule === 'unknown-tool-as-iserror' && f.accepted === true));
    assert.ok(findings.some((f) => f.probe === 'unknown-method' && f.accepted === undefined));
    const sarif = JSON.parse((await check(worse.url.href, ...FAST, '--baseline', file, '--format', 'sarif')).stdout) as {
      runs: Array<{ results: Array<{ ruleId: string; baselineState?: string }> }>;
    };
    const states = new Set(sarif.runs[0]!.results.map((r) => r.baselineState));
    assert.deepEqual([...states].sort(), ['new', 'unchanged']);

    const fixed = await check(good.url.href, ...FAST, '--baseline', file);
    assert.equal(fixed.code, 0);
    assert.match(fixed.stdout, /FIXED since the baseline/);
    assert.match(fixed.stdout, /unknown-tool {2}unknown-tool-as-iserror/);
  });

  test('a baseline that does not exist, or --update-baseline without a file: an error that says what to do', async () => {
    await assert.rejects(
      check(good.url.href, ...FAST, '--baseline', join(dir, 'missing.json')),
      /no such file; write a baseline with --update-baseline/,
    );
    await assert.rejects(check(good.url.href, ...FAST, '--update-baseline'), /--update-baseline needs --baseline FILE/);
  });
});
