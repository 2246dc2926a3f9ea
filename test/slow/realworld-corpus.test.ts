// Precision on servers nobody here wrote (#26): each server of test/realworld/servers.ts runs one
// scripted SDK-client session three times, directly, through audit.yaml and through enforce.yaml.
// Audit must equal direct message for message (what only a run has, and what a server varies,
// masked); every finding and every enforce change must have a verdict in verdicts.ts; none may be
// a wrong change or an error-severity false positive. The corpus's servers are installed apart
// (npm ci --prefix test/realworld); this file installs them when they are missing.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { observe, type Observed } from '../realworld/observe.ts';
import { CORPUS_DIR, installed, SERVERS } from '../realworld/servers.ts';
import { runSession, type Via } from '../realworld/session.ts';
import { corpusMarkdown } from '../realworld/table.ts';
import { docBlock } from '../helpers/doc-blocks.ts';
import { VERDICTS } from '../realworld/verdicts.ts';

const ROOT = new URL('../../', import.meta.url);

async function shipped(name: string): Promise<Via> {
  const file = new URL(`config/${name}.yaml`, ROOT).pathname;
  const loaded = await loadPolicyFile(file, { rewritable: REWRITABLE });
  assert.ok(loaded.ok);
  return { kind: 'proxy', policy: loaded.policy as Policy, policyFile: file };
}

/** Every key seen has a verdict, and every verdict a key seen (a stale one would vouch for nothing). */
function assertMatched(seen: ReadonlyMap<string, unknown>, judged: Readonly<Record<string, unknown>>, what: string): void {
  assert.deepEqual(
    [...seen.keys()].filter((k) => !judged[k]),
    [],
    what,
  );
  assert.deepEqual(
    Object.keys(judged).filter((k) => !seen.has(k)),
    [],
    'verdicts nothing seen matches any more',
  );
}

before(() => {
  if (!installed()) execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--prefix', CORPUS_DIR], { stdio: 'ignore' });
});

test('the documented table is the corpus and its verdicts', () => {
  assert.equal(docBlock('realworld'), corpusMarkdown(), 'regenerate from test/realworld/table.ts');
});

test('every server has verdicts, and every verdict a server', () => {
  assert.deepEqual(Object.keys(VERDICTS).sort(), SERVERS.map((s) => s.name).sort());
});

for (const server of SERVERS) {
  // A binary built for linux-x64 only: on another platform npm leaves it out, and its server is skipped, saying so.
  const missing =
    server.binary !== undefined && (process.platform !== 'linux' || process.arch !== 'x64')
      ? `${server.package} ships a linux-x64 binary only`
      : false;
  describe(server.name, { skip: missing }, () => {
    let seen: Observed;
    before(async () => {
      const direct = await runSession(server, { kind: 'direct' });
      const audit = await runSession(server, await shipped('audit'));
      const enforce = await runSession(server, await shipped('enforce'));
      seen = observe(server, direct, audit, enforce);
    });
    const verdicts = (): (typeof VERDICTS)[string] => VERDICTS[server.name] ?? { findings: {}, changes: {} };

    test('audit: the client sees what it sees directly', () => {
      assert.deepEqual(seen.auditDiffers, []);
    });

    test('every finding has a verdict, every verdict a finding; no error-severity false positive', () => {
      const found = new Map(seen.findings.map((f) => [`${f.step} | ${f.rule}`, f]));
      const judged = verdicts().findings;
      assertMatched(found, judged, `findings without a verdict: ${JSON.stringify(seen.findings, null, 1)}`);
      const falseErrors = [...found].filter(([k, f]) => f.severity === 'error' && judged[k]?.verdict === 'false-positive');
      assert.deepEqual(falseErrors, []);
    });

    test('every enforce change has a verdict, every verdict a change; none is wrong', () => {
      const judged = verdicts().changes;
      assertMatched(
        new Map(seen.changes.map((c) => [c.step, c])),
        judged,
        `changes without a verdict: ${JSON.stringify(seen.changes, null, 1)}`,
      );
      assert.deepEqual(
        Object.entries(judged).filter(([, v]) => v.verdict === 'wrong'),
        [],
        'wrong changes',
      );
    });
  });
}
