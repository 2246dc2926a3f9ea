// One explanation per rule: every rule of the catalogue has one (a rule added without one fails,
// named), none names a rule that does not exist, docs/rules.md holds them as generated, their
// links point at the repository package.json names, and `mcp-warden rules RULE` prints them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { docsUrl, explanationMarkdown, explanationsMarkdown, explanationText, RULES_DOCS } from '../../src/rules/explain.ts';
import { EXPLANATIONS } from '../../src/rules/explanations/index.ts';
import { RULES } from '../../src/rules/index.ts';
import { renderRules } from '../../src/rules/rules-command.ts';
import { docBlock } from '../helpers/doc-blocks.ts';

test('every rule of the catalogue has an explanation, and every explanation names a rule', () => {
  const unexplained = RULES.map((r) => r.id).filter((id) => !EXPLANATIONS.has(id));
  assert.deepEqual(
    unexplained,
    [],
    `rules without an explanation (add one entry each in src/rules/explanations/): ${unexplained.join(', ')}`,
  );
  const ids = new Set(RULES.map((r) => r.id));
  const orphans = [...EXPLANATIONS.keys()].filter((id) => !ids.has(id));
  assert.deepEqual(orphans, [], 'explanations of no rule');
});

test('each explanation quotes the spec with its version, shows a bad and a good exchange, and says the fix', () => {
  for (const [id, e] of EXPLANATIONS) {
    assert.ok(e.why.text.length > 10 && e.why.text.length <= 200, `${id}: the quote is brief`);
    assert.match(e.why.from, /^(\d{4}-\d\d-\d\d|JSON-RPC 2\.0|mcp-warden)/, `${id}: the quote says what version it is from`);
    assert.ok(e.bad.includes('←') || e.bad.includes('→') || e.bad.startsWith('stdout'), `${id}: the bad exchange shows messages`);
    assert.notEqual(e.bad, e.good, `${id}: good differs from bad`);
    assert.ok(e.fix.length > 20, `${id}: a fix`);
  }
});

test("docs/rules.md's explanations are what `mcp-warden rules --all --format markdown` prints, a section per rule anchored by its id", () => {
  assert.equal(
    docBlock('explanations'),
    explanationsMarkdown(RULES),
    'regenerate with: node --import tsx src/cli.ts rules --all --format markdown',
  );
  for (const r of RULES) assert.match(docBlock('explanations'), new RegExp(`^### ${r.id}$`, 'm'), `a section headed ${r.id}`);
});

test("the docs links point at docs/rules.md on the main branch of package.json's repository", () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { repository: { url: string } };
  const repo = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
  assert.equal(RULES_DOCS, `${repo}/blob/main/docs/rules.md`);
  assert.equal(docsUrl('html-body'), `${repo}/blob/main/docs/rules.md#html-body`);
});

test('rules RULE prints its explanation in each format; an unknown name fails with every name', () => {
  const rule = RULES.find((r) => r.id === 'unknown-tool-as-iserror')!;
  assert.deepEqual(renderRules(RULES, rule.id, { format: 'text' }), { ok: true, text: explanationText(rule) });
  const md = renderRules(RULES, rule.id, { format: 'markdown' });
  assert.ok(md.ok && md.text.endsWith(explanationMarkdown(rule)));
  const json = renderRules(RULES, rule.id, { format: 'json' });
  assert.ok(json.ok);
  const parsed = JSON.parse(json.text) as { fix: string; docs: string };
  assert.equal(parsed.fix, EXPLANATIONS.get(rule.id)!.fix);
  assert.equal(parsed.docs, docsUrl(rule.id));
  const unknown = renderRules(RULES, 'no-such-rule', { format: 'text' });
  assert.equal(unknown.ok, false);
  for (const r of RULES) assert.ok(!unknown.ok && unknown.error.includes(`\n  ${r.id}`), `the error lists ${r.id}`);
});

test('the text explanation says what is wrong, why with the version, bad, good, the fix and the link', () => {
  for (const r of RULES) {
    const text = explanationText(r);
    const e = EXPLANATIONS.get(r.id)!;
    for (const part of [r.summary, `Why (${e.why.from})`, e.why.text, e.fix, docsUrl(r.id)])
      assert.ok(text.includes(part), `${r.id}: ${part}`);
  }
});
