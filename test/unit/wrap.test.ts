// Text fitted to a terminal: wrapText keeps words whole where they fit and cuts the ones that
// cannot; terminalColumns reads COLUMNS before the terminal's own width.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { terminalColumns } from '../../src/commands/check.ts';
import { wrapText } from '../../src/util/wrap.ts';

test('wrapText: lines within the width, words whole, the indent under the first line', () => {
  const text = 'the quick brown fox jumps over the lazy dog and https://example.com/a/very/long/path/that/cannot/fit ok';
  const lines = wrapText(text, 30, '    ', 4);
  assert.deepEqual(lines, [
    'the quick brown fox jumps',
    '    over the lazy dog and',
    '    https://example.com/a/very',
    '    /long/path/that/cannot/fit',
    '    ok',
  ]);
  assert.equal(
    lines
      .map((l, i) => (i === 0 ? l : l.slice(4)))
      .join(' ')
      .replace('very /long', 'very/long'),
    text,
  );
  assert.deepEqual(wrapText('fits', 30), ['fits']);
  assert.deepEqual(wrapText('', 30), ['']);
});

test('terminalColumns: COLUMNS first, then the terminal, nothing for a pipe', () => {
  assert.equal(terminalColumns('100', 80), 100);
  assert.equal(terminalColumns(undefined, 80), 80);
  assert.equal(terminalColumns('wide', 80), 80);
  assert.equal(terminalColumns('0', undefined), undefined);
  assert.equal(terminalColumns(undefined, undefined), undefined);
});
