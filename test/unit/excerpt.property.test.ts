// excerpt() (src/redact/excerpt.ts) stops writing a value once what follows cannot reach its
// `max` characters: on generated values without credentials, what it shows is what the whole
// value's JSON text (a string: the string) shows, white space collapsed, cut to `max`. PROPERTY_RUNS_MULTIPLIER and
// PROPERTY_SEED as in the other files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { excerpt } from '../../src/redact/excerpt.ts';
import { runs } from '../helpers/arbitraries.ts';

/** Text no redaction touches, white space runs included (the excerpt collapses them). */
const plain = fc.string({ unit: fc.constantFrom('a', 'b', '1', ' ', '  ', '\n', '\t', 'é', '"'), maxLength: 12 });
/** Member names that are no credential's. */
const name = fc.constantFrom('a', 'b', 'items', 'data', 'text', 'x y', '');
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    plain,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    // Written as nothing in an object, as null in a list: they add no character of their own.
    fc.constant(undefined),
    fc.constant(() => 1),
    fc.array(tie('value'), { maxLength: 6 }),
    fc.sparseArray(tie('value'), { maxLength: 6 }),
    fc.dictionary(name, tie('value'), { maxKeys: 5 }),
  ),
}));

const shown = (whole: string, max: number): string => {
  const text = whole.replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

test('what an excerpt shows is the head of the whole value', () => {
  fc.assert(
    fc.property(value, fc.integer({ min: 1, max: 200 }), (v, max) => {
      assert.equal(excerpt(v, max), shown(typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v)), max));
    }),
    runs(3000),
  );
});
