// answers.unknownTool (#26): the policy chooses which answer the unknown-tool rules expect. `spec`
// (the default) flags an isError result for an unknown tool; `iserror` (SEP-2145) takes it as an
// answer; under both, -32602 passes and a plain result or another code is a finding.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadPolicyText } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { call, engineUnder, exchangesOf, rulesOf } from '../helpers/engine-driver.ts';

function policy(text: string): Policy {
  const loaded = loadPolicyText(text, 'p.yaml');
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
  return loaded.policy;
}

/** The rules that fire on `answer` to a tools/call of `nope`, a tool the session does not know. */
function firedOn(p: Policy, answer: Record<string, unknown>): string[] {
  const t = engineUnder(p);
  const { x, plan } = t.post(call(5, 'nope', {}));
  plan.judged();
  const [done] = exchangesOf(t.json(x, 200, JSON.stringify({ jsonrpc: '2.0', id: 5, ...answer })).judged());
  assert.ok(done);
  return rulesOf(done.judged).filter((r) => r.startsWith('unknown-tool'));
}

const isErrorAnswer = { result: { content: [{ type: 'text', text: 'Unknown tool: nope' }], isError: true } };
const wrongCode = { error: { code: -32601, message: 'Unknown tool: nope' } };
const rightCode = { error: { code: -32602, message: 'Unknown tool: nope' } };

describe('answers.unknownTool', () => {
  test('compiles: spec by default, iserror when asked; any other value is refused with the key named', () => {
    assert.equal(policy('mode: audit\n').answers.unknownTool, 'spec');
    assert.equal(policy('answers: { unknownTool: iserror }\n').answers.unknownTool, 'iserror');
    const bad = loadPolicyText('answers: { unknownTool: result }\n', 'bad.yaml');
    assert.ok(!bad.ok);
    assert.match(JSON.stringify(bad.errors), /answers\.unknownTool/);
  });

  test('spec: an isError result for an unknown tool is flagged, -32602 passes, another code is flagged', () => {
    const spec = policy('mode: audit\n');
    assert.deepEqual(firedOn(spec, isErrorAnswer), ['unknown-tool-as-iserror']);
    assert.deepEqual(firedOn(spec, rightCode), []);
    assert.deepEqual(firedOn(spec, wrongCode), ['unknown-tool-wrong-code']);
  });

  test('iserror (SEP-2145): the isError result is an answer; -32602 passes; another code is still flagged', () => {
    const sep = policy('answers: { unknownTool: iserror }\n');
    assert.deepEqual(firedOn(sep, isErrorAnswer), []);
    assert.deepEqual(firedOn(sep, rightCode), []);
    assert.deepEqual(firedOn(sep, wrongCode), ['unknown-tool-wrong-code']);
  });

  test('under enforce with iserror, the isError answer passes unchanged', () => {
    const t = engineUnder(policy('mode: enforce\nanswers: { unknownTool: iserror }\nrules: { unknown-tool: rewrite }\n'));
    const { x, plan } = t.post(call(5, 'nope', {}));
    plan.judged();
    const [done] = exchangesOf(t.json(x, 200, JSON.stringify({ jsonrpc: '2.0', id: 5, ...isErrorAnswer })).judged());
    assert.equal(done?.judged.decision.kind, 'pass');
  });
});
