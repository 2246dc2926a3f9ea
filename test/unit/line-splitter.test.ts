// LineSplitter (src/codec/line-splitter.ts), stdio's framing: a byte stream split on `\n`, at most
// `max` bytes of a line held, a longer line handed on in pieces. Examples, then a fast-check
// property over any lines cut into any chunks.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LineSplitter } from '../../src/codec/line-splitter.ts';
import { cutAt, runs } from '../helpers/arbitraries.ts';

type Out = { kind: 'line'; bytes: Buffer } | { kind: 'piece'; bytes: Buffer; last: boolean };

/** A splitter of `max` that records what it hands on, in order (the buffers copied: a later push must not change them). */
function recorder(max: number) {
  const out: Out[] = [];
  const splitter = new LineSplitter(max, {
    line: (bytes) => out.push({ kind: 'line', bytes: Buffer.from(bytes) }),
    oversize: (piece, last) => out.push({ kind: 'piece', bytes: Buffer.from(piece), last }),
  });
  return { splitter, out };
}

/** What `chunks` (strings, latin1) come out as; `end`: whether end() is called. */
function run(max: number, chunks: readonly string[], end = true): Out[] {
  const { splitter, out } = recorder(max);
  for (const c of chunks) splitter.push(Buffer.from(c, 'latin1'));
  if (end) splitter.end();
  return out;
}

/** The output as readable values: a line as its text, a piece as [text, last]. */
const shown = (out: readonly Out[]): Array<string | [string, boolean]> =>
  out.map((o) => (o.kind === 'line' ? o.bytes.toString('latin1') : [o.bytes.toString('latin1'), o.last]));

describe('LineSplitter: examples', () => {
  test('lines split on \\n, across chunk boundaries, the \\n not included', () => {
    assert.deepEqual(shown(run(100, ['a', 'bc\nde', 'f\n\ng\n'])), ['abc', 'def', '', 'g']);
  });

  test('a \\r before the \\n is kept (the reader decides), a \\r alone does not end a line', () => {
    assert.deepEqual(shown(run(100, ['one\r', '\ntwo\r\n', 'x\ry\n'])), ['one\r', 'two\r', 'x\ry']);
  });

  test('end() hands on a last line without its \\n; after a trailing \\n it hands on nothing more', () => {
    assert.deepEqual(shown(run(100, ['a\nlast'])), ['a', 'last']);
    assert.deepEqual(shown(run(100, ['a\nlast'], false)), ['a'], 'without end() the unterminated line is still held');
    assert.deepEqual(shown(run(100, ['a\nlast\n'])), ['a', 'last']);
    assert.deepEqual(shown(run(100, [])), []);
    assert.deepEqual(shown(run(100, ['\n'])), ['']);
  });

  test('a line of exactly max bytes is a line; one byte more is oversize', () => {
    assert.deepEqual(shown(run(3, ['abc\n'])), ['abc']);
    assert.deepEqual(shown(run(3, ['ab', 'c\n'])), ['abc']);
    assert.deepEqual(shown(run(3, ['abcd\n'])), [['abcd', true]]);
    assert.deepEqual(shown(run(3, ['ab', 'cd', '\n'])), [
      ['abcd', false],
      ['', true],
    ]);
  });

  test('an oversize line goes on in pieces as they come: the held start with the piece that passed the limit, then each chunk', () => {
    assert.deepEqual(shown(run(4, ['ab', 'cd', 'efg', 'hi', 'j\nok\n'])), [['abcdefg', false], ['hi', false], ['j', true], 'ok']);
  });

  test('a line after an oversize one is held from its start again', () => {
    assert.deepEqual(shown(run(2, ['xxxxx\nab', '\nc'])), [['xxxxx', true], 'ab', 'c']);
  });

  test('end() inside an oversize line closes it with an empty last piece', () => {
    assert.deepEqual(shown(run(2, ['abc'])), [
      ['abc', false],
      ['', true],
    ]);
    assert.deepEqual(shown(run(2, ['abc'], false)), [['abc', false]]);
  });

  test('max 0: only empty lines are lines', () => {
    assert.deepEqual(shown(run(0, ['\n\na\n'])), ['', '', ['a', true]]);
  });

  test('an empty chunk changes nothing', () => {
    assert.deepEqual(shown(run(10, ['ab', '', 'c\n', ''])), ['abc']);
  });
});

/** A line's bytes: any byte but \n (\r and 0x80+ included). */
const lineBytes = (maxLength: number) => fc.uint8Array({ maxLength }).map((a) => Buffer.from(a.map((b) => (b === 10 ? 13 : b))));

describe('LineSplitter: property', () => {
  test('any lines, any chunking: lines within max come out whole, longer ones as pieces; at most max bytes held', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        fc.array(fc.oneof(lineBytes(14), lineBytes(40)), { maxLength: 8 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 10 }),
        (max, lines, trailingNewline, points) => {
          const input = Buffer.concat(lines.flatMap((l, i) => (i < lines.length - 1 || trailingNewline ? [l, Buffer.from('\n')] : [l])));
          const chunks = cutAt(
            input,
            points.map((p) => p % (input.length + 1)),
          );
          const { splitter, out } = recorder(max);
          let pushed = 0;
          for (const chunk of chunks) {
            const before = out.length;
            splitter.push(chunk);
            pushed += chunk.length;
            // What came out so far accounts for every byte pushed but the held start of one line.
            const accounted = out.reduce((n, o) => n + o.bytes.length + (o.kind === 'line' || o.last ? 1 : 0), 0);
            const held = pushed - accounted;
            assert.ok(held >= 0 && held <= max, `holds ${held} bytes, limit ${max}`);
            // No piece handed over while the line is within the limit: a line's first piece holds more than max bytes.
            for (let i = before; i < out.length; i++) {
              const o = out[i]!;
              const prev = out[i - 1];
              const first = o.kind === 'piece' && (prev === undefined || prev.kind === 'line' || prev.last);
              if (first) assert.ok(o.bytes.length > max, `the first piece of an oversize line has ${o.bytes.length} bytes, max ${max}`);
            }
          }
          splitter.end();

          // Put the output back into lines: a line is one; pieces up to the one marked last are one.
          const got: Array<{ bytes: Buffer; oversize: boolean }> = [];
          let open: Buffer[] | undefined;
          for (const o of out) {
            if (o.kind === 'line') {
              assert.equal(open, undefined, 'a whole line in the middle of an oversize one');
              got.push({ bytes: o.bytes, oversize: false });
            } else {
              open = [...(open ?? []), o.bytes];
              if (o.last) {
                got.push({ bytes: Buffer.concat(open), oversize: true });
                open = undefined;
              }
            }
          }
          assert.equal(open, undefined, 'an oversize line whose last piece never came');
          // The lines in: every line, but an empty last one without its \n is no line at all.
          const expected = lines.filter((l, i) => !(i === lines.length - 1 && !trailingNewline && l.length === 0));
          assert.deepEqual(
            got.map((g) => g.bytes.toString('hex')),
            expected.map((l) => l.toString('hex')),
          );
          assert.deepEqual(
            got.map((g) => g.oversize),
            expected.map((l) => l.length > max),
            'oversize exactly when longer than max',
          );
        },
      ),
      runs(2_000),
    );
  });
});

describe('LineSplitter: runs of empty lines (blanks)', () => {
  /** What a splitter with a `blanks` sink hands on, each run expanded into that many empty lines. */
  function withBlanks(max: number, chunks: readonly Buffer[]): Out[] {
    const out: Out[] = [];
    const splitter = new LineSplitter(max, {
      line: (bytes) => out.push({ kind: 'line', bytes: Buffer.from(bytes) }),
      oversize: (piece, last) => out.push({ kind: 'piece', bytes: Buffer.from(piece), last }),
      blanks: (n) => {
        for (let i = 0; i < n; i++) out.push({ kind: 'line', bytes: Buffer.alloc(0) });
      },
    });
    for (const c of chunks) splitter.push(c);
    splitter.end();
    return out;
  }

  test('a run of line feeds is one call with its length; a line feed ending a line is not a blank', () => {
    const runs: number[] = [];
    const lines: string[] = [];
    const splitter = new LineSplitter(100, { line: (b) => lines.push(b.toString()), oversize: () => {}, blanks: (n) => runs.push(n) });
    splitter.push(Buffer.from('a\n\n\n\nb\n\n'));
    splitter.push(Buffer.from('\nc\n'));
    assert.deepEqual(lines, ['a', 'b', 'c']);
    assert.deepEqual(runs, [3, 1, 1]);
  });

  test('any lines with blank runs, any chunking: the same lines as without a blanks sink', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        fc.array(fc.oneof(lineBytes(14), fc.constant(Buffer.alloc(0)), lineBytes(40)), { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 10 }),
        (max, lines, points) => {
          const input = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
          const chunks = cutAt(
            input,
            points.map((p) => p % (input.length + 1)),
          );
          assert.deepEqual(
            withBlanks(max, chunks),
            run(
              max,
              chunks.map((c) => c.toString('latin1')),
            ),
          );
        },
      ),
      runs(300),
    );
  });
});
