// NestingScanner (src/codec/json-nesting.ts): a JSON text's nesting followed line by line, so a
// joiner knows where a value ends, or that its lines can never be one, without parsing them again.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { NestingScanner, type Nesting } from '../../src/codec/json-nesting.ts';
import { runs } from '../helpers/arbitraries.ts';

/** What the scanner says after each of `lines`. */
function states(lines: readonly string[]): Nesting[] {
  const s = new NestingScanner();
  return lines.map((l) => s.line(l));
}

describe('NestingScanner', () => {
  test('a pretty-printed value is open until its last line closes it', () => {
    const lines = JSON.stringify({ a: [1, { b: [] }], c: 'x' }, null, 2).split('\n');
    const seen = states(lines);
    assert.deepEqual(
      seen.slice(0, -1),
      seen.slice(0, -1).map(() => 'open'),
    );
    assert.equal(seen.at(-1), 'closed');
  });

  test('brackets and quotes inside strings are text', () => {
    assert.deepEqual(states(['{', '  "a": "}]\\\\",', '  "b": "\\"{["', '}']), ['open', 'open', 'open', 'closed']);
  });

  test('a closer that does not match, or text after the value, breaks it', () => {
    assert.deepEqual(states(['{', ']']), ['open', 'broken']);
    assert.deepEqual(states(['[', ']', ']']), ['open', 'closed', 'broken']);
    assert.deepEqual(states(['{', '} x']), ['open', 'broken']);
    assert.deepEqual(states(['{', '}  ', '  ']), ['open', 'closed', 'closed'], 'whitespace after it is fine');
  });

  test('a string open at the end of a line breaks it (JSON strings hold no raw newline), and stays broken', () => {
    assert.deepEqual(states(['{', '  "a": "unfinished', '"}']), ['open', 'broken', 'broken']);
  });

  test('reset() starts over', () => {
    const s = new NestingScanner();
    assert.equal(s.line('{]'), 'broken');
    s.reset();
    assert.equal(s.line('[1, 2]'), 'closed');
  });

  test('any JSON value, pretty-printed or not, closes exactly at its last line', () => {
    const value = fc.oneof(fc.array(fc.jsonValue({ maxDepth: 4 })), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 4 })));
    fc.assert(
      fc.property(value, fc.boolean(), (v, pretty) => {
        const seen = states(JSON.stringify(v, null, pretty ? 2 : undefined).split('\n'));
        assert.equal(seen.at(-1), 'closed');
        assert.ok(seen.slice(0, -1).every((n) => n === 'open'));
      }),
      runs(300),
    );
  });
});
