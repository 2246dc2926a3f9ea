// The article, claim by claim (src/rules/article-claims.ts): every claim names rules that exist
// and tests that hold what they say, a claim judged in part or not at all says why, and the docs'
// table is the one the code renders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ARTICLE_CLAIMS, claimsMarkdown } from '../../src/rules/article-claims.ts';
import { RULES } from '../../src/rules/index.ts';
import { docBlock } from '../helpers/doc-blocks.ts';

const TEST = new URL('../', import.meta.url);

test('the claims are S1..S46, in order', () => {
  assert.deepEqual(
    ARTICLE_CLAIMS.map((c) => c.id),
    Array.from({ length: 46 }, (_, i) => `S${i + 1}`),
  );
});

test('every rule a claim names exists', () => {
  const ids = new Set(RULES.map((r) => r.id));
  for (const c of ARTICLE_CLAIMS) for (const r of c.rules) assert.ok(ids.has(r), `${c.id}: no rule ${r}`);
});

test('every test a claim names is there and holds the case it names', () => {
  for (const c of ARTICLE_CLAIMS)
    for (const t of c.tests) {
      const text = readFileSync(new URL(t.file, TEST), 'utf8');
      assert.ok(text.includes(t.shows), `${c.id}: test/${t.file} has no "${t.shows}"`);
    }
});

test('a claim judged in full names a rule and a test; one that is not says why', () => {
  for (const c of ARTICLE_CLAIMS) {
    if (c.gap === undefined) assert.ok(c.rules.length > 0 && c.tests.length > 0, `${c.id} is judged in full by no rule or no test`);
    if (c.rules.length === 0) assert.ok(c.gap, `${c.id} has no rule and says not why`);
    if (c.rules.length > 0) assert.ok(c.tests.length > 0, `${c.id} names rules but no test`);
  }
});

test('docs/rules.md shows the table the code renders', () => {
  assert.equal(docBlock('claims'), claimsMarkdown(), 'regenerate the claims block of docs/rules.md from claimsMarkdown()');
});
