// Property test of the schema pattern engine (fast-check): a generated ECMA-262 pattern (classes,
// escapes, `.`, `\s`, groups, alternation, quantifiers, anchors) gives under RE2 the answer V8
// gives, on generated strings of the characters where the two syntaxes differ (line terminators,
// Unicode spaces, astral code points). Short inputs: V8's backtracking stays cheap on them.
//
// Normal run (npm test): 1 property, 400 patterns of 6 inputs each.
// Longer run: PROPERTY_RUNS_MULTIPLIER scales it; PROPERTY_SEED=<seed> replays a failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { linearRegExp } from '../../src/rules/schema-regexp.ts';
import { runs } from '../helpers/arbitraries.ts';

const CHARS = [
  'a',
  'b',
  'A',
  '0',
  '_',
  ' ',
  '\n',
  '\r',
  '\t',
  '\v',
  '\u00a0',
  '\u2028',
  '\ufeff',
  'é',
  '😀',
  '-',
  '.',
  '[',
  ']',
  '\\',
  '$',
];

const LITERALS = ['a', 'b', 'A', '0', 'é', '😀', ' ', '\\.', '\\[', '\\]', '\\\\', '\\^', '\\$', '\\/', '\\|'];
const ESCAPES = [
  '.',
  '\\s',
  '\\S',
  '\\d',
  '\\D',
  '\\w',
  '\\W',
  '\\n',
  '\\t',
  '\\v',
  '\\u00a0',
  '\\u{1F600}',
  '\\x41',
  '\\uD83D\\uDE00',
  '\\cJ',
];
const CLASS_ITEMS = ['a', 'a-z', '0-9', '\\s', '\\S', '\\d', '\\w', '\\W', '\\-', '\\]', '[', '.', '\\b', '\\u00e9', ' ', '😀', '\\n'];
// Not \B: V8 tries it between the halves of a surrogate pair even under `u` (/\B/u.exec("a😀a").index
// is 2), where ECMA-262 and RE2 step over whole code points.
const ASSERTIONS = ['^', '$', '\\b'];
const QUANTIFIERS = ['*', '+', '?', '{2}', '{1,3}', '{0,}', '*?', '+?', '??'];

const charClass = fc
  .tuple(fc.boolean(), fc.array(fc.constantFrom(...CLASS_ITEMS), { minLength: 0, maxLength: 4 }))
  .map(([negated, items]) => `[${negated ? '^' : ''}${items.join('')}]`);

const { pattern } = fc.letrec<{ pattern: string; term: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...LITERALS, ...ESCAPES) },
    { weight: 2, arbitrary: charClass },
    { weight: 1, arbitrary: tie('pattern').map((p) => `(?:${p})`) },
    { weight: 1, arbitrary: tie('pattern').map((p) => `(${p})`) },
  ),
  term: fc.oneof(
    { weight: 3, arbitrary: tie('atom') },
    { weight: 2, arbitrary: fc.tuple(tie('atom'), fc.constantFrom(...QUANTIFIERS)).map(([a, q]) => a + q) },
    { weight: 1, arbitrary: fc.constantFrom(...ASSERTIONS) },
  ),
  pattern: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.array(tie('term'), { maxLength: 4 }).map((terms) => terms.join('')),
    fc.tuple(tie('pattern'), tie('pattern')).map(([x, y]) => `${x}|${y}`),
  ),
}));

const valid = (p: string): boolean => {
  try {
    new RegExp(p, 'u');
    return true;
  } catch {
    return false;
  }
};

const input = fc.array(fc.constantFrom(...CHARS), { maxLength: 8 }).map((cs) => cs.join(''));

// V8 is the reference, and V8 14.6 (Node 26) answers some patterns against ECMA-262 (RE2 and
// Node 20 answer as it says), found by this test in CI: a class's match of an astral code point
// before `$` at the end of the input (/[\s\S]$/u.test("😀") is false; seed 1403335672) and a
// loop whose body cannot match (/([\s\S]*?a^)*/u.test("") is false; seed -1103771347; the same under
// --regexp-interpret-all). On a V8 that fails these probes the comparison has no reference and is
// skipped, saying why; .ci/run runs it on Node 20 as well.
const V8_DEFECTS = (
  [
    ['/[\\s\\S]$/u on "😀"', /[\s\S]$/u.test('😀')],
    ['/([\\s\\S]*?a^)*/u on ""', /([\s\S]*?a^)*/u.test('')],
  ] as const
)
  .filter(([, right]) => !right)
  .map(([probe]) => probe);
const noReference = V8_DEFECTS.length > 0 && `V8 ${process.versions.v8} is no reference here: it misses ${V8_DEFECTS.join(' and ')}`;

test('a generated pattern answers under RE2 as under V8', { skip: noReference }, () => {
  fc.assert(
    fc.property(pattern.filter(valid), fc.array(input, { minLength: 6, maxLength: 6 }), (p, inputs) => {
      const v8 = new RegExp(p, 'u');
      const re2 = linearRegExp(p, 'u');
      for (const s of inputs) assert.equal(re2.test(s), v8.test(s), `/${p}/u on ${JSON.stringify(s)}`);
    }),
    runs(400),
  );
});
