// MessageJoiner (src/transport/stdio-joiner.ts): a JSON-RPC message a stdio child pretty-printed
// over several lines is put back together as one unit; every other line is a unit of its own; the
// join gives up past its bounds; no line is ever lost, doubled or reordered.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MessageJoiner, type LineUnit } from '../../src/transport/stdio-joiner.ts';
import { runs } from '../helpers/arbitraries.ts';
import { assertLinear, GROWTH } from '../helpers/growth.ts';

const BIG = 1 << 30;

/** A joiner of the given bounds and what it emitted. */
function joiner(maxBytes = BIG, maxLines = 10_000) {
  const out: LineUnit[] = [];
  const j = new MessageJoiner(maxBytes, maxLines, (u) => out.push(u));
  return { j, out };
}

/** The units `lines` (text, written or not) come out as, flushed at the end unless `flush` is false. */
function units(lines: readonly string[], o: { maxBytes?: number; maxLines?: number; written?: boolean; flush?: boolean } = {}): LineUnit[] {
  const { j, out } = joiner(o.maxBytes, o.maxLines);
  for (const l of lines) j.line(Buffer.from(l, 'utf8'), o.written ?? false);
  if (o.flush !== false) j.flush();
  return out;
}

/** The units `lines` come out as, and how many characters JSON.parse read to get them. */
function parsing(lines: readonly string[]): { parsed: number; out: LineUnit[] } {
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    parsed += text.length;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  try {
    const out = units(lines);
    return { out, parsed };
  } finally {
    JSON.parse = parse;
  }
}

const pretty = (msg: unknown): string[] => JSON.stringify(msg, null, 2).split('\n');
const oneLine = (msg: unknown): string => JSON.stringify(msg);
const summary = (out: readonly LineUnit[]) => out.map((u) => [u.lines, u.data]);

const RESULT = { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'ok' }], isError: false } };
const NOTE = { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } };

describe('MessageJoiner: a pretty-printed message', () => {
  test('is emitted once, as many lines as it took, its data the message and its raw the lines joined by \\n', () => {
    const lines = pretty(RESULT);
    assert.ok(lines.length > 5);
    const out = units(lines, { flush: false });
    assert.equal(out.length, 1, 'emitted when its last line came, before any flush');
    const [u] = out;
    assert.equal(u!.lines, lines.length);
    assert.deepEqual(JSON.parse(u!.data), RESULT);
    assert.equal(u!.raw.toString('utf8'), lines.join('\n'));
    assert.equal(u!.written, false);
  });

  test('a one-line message is a unit of its own, lines 1, data as it came', () => {
    const out = units([oneLine(RESULT), oneLine(NOTE)]);
    assert.deepEqual(summary(out), [
      [1, oneLine(RESULT)],
      [1, oneLine(NOTE)],
    ]);
  });

  test('a pretty-printed batch (a JSON array) is joined too', () => {
    const batch = [RESULT, { ...RESULT, id: 2 }];
    const out = units(pretty(batch));
    assert.equal(out.length, 1);
    assert.deepEqual(JSON.parse(out[0]!.data), batch);
  });

  test('CRLF lines: data without the \\r (joined by \\n), raw as the child wrote it', () => {
    const lines = pretty(RESULT).map((l) => `${l}\r`);
    const out = units(lines);
    assert.equal(out.length, 1);
    assert.equal(out[0]!.lines, lines.length);
    assert.deepEqual(JSON.parse(out[0]!.data), RESULT);
    assert.ok(!out[0]!.data.includes('\r'), 'no \\r in the data');
    assert.equal(out[0]!.raw.toString('utf8'), `${pretty(RESULT).join('\r\n')}\r`);
    // A single CRLF line: its data loses the \r, its raw keeps it.
    const [single] = units([`${oneLine(NOTE)}\r`]);
    assert.equal(single!.data, oneLine(NOTE));
    assert.equal(single!.raw.toString('utf8'), `${oneLine(NOTE)}\r`);
  });

  test('written: true only if every line of it was written', () => {
    const lines = pretty(RESULT);
    const emit = (written: (i: number) => boolean) => {
      const { j, out } = joiner();
      for (const [i, l] of lines.entries()) j.line(Buffer.from(l), written(i));
      assert.equal(out.length, 1);
      return out[0]!.written;
    };
    assert.equal(
      emit(() => true),
      true,
    );
    assert.equal(
      emit(() => false),
      false,
    );
    assert.equal(
      emit((i) => i !== 0),
      false,
      'the first line held back',
    );
    assert.equal(
      emit((i) => i !== lines.length - 1),
      false,
      'the last line held back',
    );
    // A line emitted alone keeps its own flag.
    assert.deepEqual(
      [true, false].map((w) => units(['banner'], { written: w })[0]!.written),
      [true, false],
    );
  });
});

describe('MessageJoiner: lines that are not (the start of) a message', () => {
  test('a banner, a blank line, and `{ not json` before a one-line message: each emitted alone, the message not swallowed', () => {
    const lines = ['Server started on stdio', '', '{ not json', oneLine(RESULT), '   ', oneLine(NOTE)];
    const out = units(lines, { flush: false });
    assert.deepEqual(
      summary(out),
      lines.map((l) => [1, l]),
    );
  });

  test('a banner and a blank line before a pretty-printed message: emitted alone, then the message joined', () => {
    const lines = ['Server started on stdio', '', ...pretty(RESULT)];
    const out = units(lines, { flush: false });
    assert.deepEqual(summary(out), [
      [1, 'Server started on stdio'],
      [1, ''],
      [pretty(RESULT).length, pretty(RESULT).join('\n')],
    ]);
  });

  test('a line that opens a value but never closes is held, then emitted alone at flush()', () => {
    const { j, out } = joiner();
    j.line(Buffer.from('{ unfinished'), false);
    assert.equal(j.holding, true);
    assert.deepEqual(out, []);
    j.flush();
    assert.equal(j.holding, false);
    assert.deepEqual(summary(out), [[1, '{ unfinished']]);
  });

  test('a line like `{ not json` before a pretty-printed message: emitted alone, and the message joined', () => {
    const message = pretty(RESULT);
    const out = units(['{ not json', ...message], { flush: false });
    assert.deepEqual(summary(out), [
      [1, '{ not json'],
      [message.length, message.join('\n')],
    ]);
  });

  test('a log line starting with `[` before a pretty-printed message: emitted alone, and the message joined', () => {
    const message = pretty(NOTE);
    const out = units(['[INFO] listening', ...message], { flush: false });
    assert.deepEqual(summary(out), [
      [1, '[INFO] listening'],
      [message.length, message.join('\n')],
    ]);
  });

  test('a pretty-printed message holding an empty object or array as an array element is joined', () => {
    for (const msg of [
      { jsonrpc: '2.0', id: 1, result: { content: [{}] } },
      { jsonrpc: '2.0', id: 2, result: { rows: [[1], []] } },
    ]) {
      const lines = pretty(msg);
      const out = units(lines);
      assert.deepEqual(summary(out), [[lines.length, lines.join('\n')]], JSON.stringify(msg));
    }
  });
});

describe('MessageJoiner: bounds', () => {
  // A message with no array of objects: after a give-up none of its lines opens a join of its own.
  const FLAT = { jsonrpc: '2.0', id: 1, result: { a: 'x'.repeat(40), b: 'y'.repeat(40), c: true, d: null } };
  const lines = pretty(FLAT);

  test('maxLines: a message of exactly maxLines lines is joined; with one line more the held lines go out singly', () => {
    const fits = units(lines, { maxLines: lines.length });
    assert.deepEqual(
      fits.map((u) => u.lines),
      [lines.length],
    );
    const over = units(lines, { maxLines: lines.length - 1 });
    assert.deepEqual(
      over.map((u) => u.lines),
      lines.map(() => 1),
    );
    assert.deepEqual(
      over.map((u) => u.data),
      lines,
    );
  });

  test('maxLines: given up before the end, the lines go out as they are held, not at the stream end', () => {
    const { j, out } = joiner(BIG, 3);
    for (const l of lines.slice(0, 3)) j.line(Buffer.from(l), false);
    assert.deepEqual(
      out.map((u) => u.data),
      lines.slice(0, 3),
      'the third line gave up: the two held go out, then it (it opens nothing)',
    );
  });

  test('maxBytes: once the held lines would pass it, the join gives up and they go out singly', () => {
    const maxBytes = lines.slice(0, 3).reduce((n, l) => n + Buffer.byteLength(l), 0);
    const out = units(lines, { maxBytes });
    assert.deepEqual(
      out.map((u) => u.lines),
      lines.map(() => 1),
    );
    assert.deepEqual(
      out.map((u) => u.data),
      lines,
    );
    const roomy = units(lines, { maxBytes: Buffer.byteLength(lines.join('')) });
    assert.deepEqual(
      roomy.map((u) => u.lines),
      [lines.length],
      'within maxBytes it is joined',
    );
  });

  test('maxLines 1: nothing is joined', () => {
    assert.deepEqual(
      units(['{', '}'], { maxLines: 1 }).map((u) => u.lines),
      [1, 1],
    );
  });

  test('joining a message costs time linear in its size: the bytes parsed stay within a few times the message', () => {
    const tools = Array.from({ length: 300 }, (_, i) => ({ name: `tool${i}`, description: 'does things' }));
    const message = pretty({ jsonrpc: '2.0', id: 1, result: { tools } });
    const { parsed, out } = parsing(message);
    assert.deepEqual(
      out.map((u) => u.lines),
      [message.length],
    );
    const size = Buffer.byteLength(message.join('\n'));
    assert.ok(parsed <= 4 * size, `parsed ${parsed} characters to join a message of ${size}`);
  });

  // Lines that keep a join open and end like a message's last line: re-parsing the join at each of
  // them was quadratic (`{` then 40,000 lines of `]` held a session for over a minute).
  const HOSTILE: ReadonlyArray<[string, (n: number) => string[]]> = [
    ['`{` then lines of `]`', (n) => ['{', ...Array.from({ length: n }, () => ']')]],
    ['`{` then lines of `}`', (n) => ['{', '  "a": [', ...Array.from({ length: n }, () => '}')]],
    ['`{` then column-0 lines closing their own brackets', (n) => ['{', ...Array.from({ length: n }, () => '"k": [1]')]],
  ];

  test('hostile lines: every line comes out once, and what is parsed stays within a few times the input', () => {
    for (const [label, hostile] of HOSTILE) {
      const lines = hostile(5_000);
      const { parsed, out } = parsing(lines);
      assert.deepEqual(
        out.map((u) => u.data),
        lines,
        label,
      );
      const size = lines.join('\n').length;
      assert.ok(parsed <= 4 * size, `${label}: parsed ${parsed} characters for ${size}`);
    }
  });

  test(`hostile lines: ${GROWTH} times the lines take about ${GROWTH} times as long, not ${GROWTH * GROWTH}`, () => {
    for (const [label, hostile] of HOSTILE) {
      const input = (scale: number) => hostile(500 * scale).map((l) => Buffer.from(l));
      assertLinear(label, (scale) => {
        const lines = input(scale);
        return () => {
          const j = new MessageJoiner(BIG, 100_000, () => {});
          for (const l of lines) j.line(l, false);
          j.flush();
        };
      });
    }
  });

  test('after a give-up the next message is joined again', () => {
    const next = pretty(NOTE);
    assert.ok(next.length < lines.length);
    const out = units([...lines, ...next], { maxLines: lines.length - 1 });
    assert.deepEqual(
      out.map((u) => u.lines),
      [...lines.map(() => 1), next.length],
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

/** JSON-RPC results of any shape, nested empty objects and arrays included. */
const jsonRpc = fc
  .record({ id: fc.oneof(fc.integer(), fc.string({ maxLength: 6 })), result: fc.jsonValue({ maxDepth: 3 }) })
  .map((m) => JSON.parse(JSON.stringify({ jsonrpc: '2.0', ...m })) as Record<string, unknown>);

/** A line that is no message and opens nothing: a log line, a banner, a blank line. */
const otherLine = fc.oneof(
  fc.constantFrom('', ' ', 'Server listening', 'INFO: ready', '42', '"text"', 'null'),
  fc.string({ maxLength: 20 }).map((s) => s.replace(/[\n\r]/g, ' ').replace(/^\s*[[{]/, 'x')),
);

type Item = { kind: 'pretty' | 'one'; msg: Record<string, unknown> } | { kind: 'other'; line: string };
const item: fc.Arbitrary<Item> = fc.oneof(
  jsonRpc.map((msg): Item => ({ kind: 'pretty', msg })),
  jsonRpc.map((msg): Item => ({ kind: 'one', msg })),
  otherLine.map((line): Item => ({ kind: 'other', line })),
);

const linesOf = (it: Item): string[] => (it.kind === 'other' ? [it.line] : it.kind === 'one' ? [oneLine(it.msg)] : pretty(it.msg));

describe('MessageJoiner: properties', () => {
  test('messages (pretty-printed or not) among lines that open nothing: each message is one unit, every other line one', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }), fc.boolean(), (items, crlf) => {
        const lines = items.flatMap(linesOf).map((l) => (crlf ? `${l}\r` : l));
        const out = units(lines, { flush: false });
        // One unit per item but the lines that open nothing, which are one each; a message's unit reads as the message.
        const expected = items.map((it) => ({ lines: linesOf(it).length, msg: it.kind === 'other' ? undefined : it.msg }));
        assert.deepEqual(
          out.map((u) => u.lines),
          expected.map((e) => e.lines),
        );
        for (const [i, e] of expected.entries()) if (e.msg !== undefined) assert.deepEqual(JSON.parse(out[i]!.data), e.msg);
      }),
      runs(300),
    );
  });

  test('any lines, any bounds: after flush every line comes out once, in order; a unit of several lines is a JSON object or array', () => {
    const anyLine = fc.oneof(
      otherLine,
      fc.constantFrom('{', '[', '}', ']', '{}', '[]', '  {', '{ "a": 1,', '"b": [', '  2', ']}', '{ not json', '[x'),
      jsonRpc.map(oneLine),
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            anyLine.map((l) => [l]),
            jsonRpc.map(pretty),
          ),
          { maxLength: 8 },
        ),
        fc.integer({ min: 1, max: 200 }),
        fc.integer({ min: 2, max: 12 }),
        fc.boolean(),
        (groups, maxBytes, maxLines, crlf) => {
          const lines = groups.flat().map((l) => (crlf ? `${l}\r` : l));
          const out = units(lines, { maxBytes, maxLines });
          assert.deepEqual(out.map((u) => u.raw.toString('utf8')).join('\n'), lines.join('\n'));
          assert.equal(
            out.reduce((n, u) => n + u.lines, 0),
            lines.length,
          );
          for (const u of out) {
            assert.equal(u.raw.toString('utf8').split('\n').length, u.lines);
            if (u.lines > 1) {
              assert.ok(u.lines <= maxLines, `a unit of ${u.lines} lines, maxLines ${maxLines}`);
              const v: unknown = JSON.parse(u.data);
              assert.ok(typeof v === 'object' && v !== null);
            }
          }
        },
      ),
      runs(500),
    );
  });
});

describe('a message too large to join', () => {
  test('its lines go on unread up to the line that closes it (first marked), then joining resumes', () => {
    const big = pretty({ jsonrpc: '2.0', id: 1, result: { rows: Array.from({ length: 40 }, (_, i) => ({ i })) } });
    const next = pretty(NOTE);
    const out = units([...big, ...next], { maxBytes: 200 });
    const unread = out.filter((u) => u.unread !== undefined);
    assert.equal(unread.length, big.length, 'every line of the big message, none of the next');
    assert.equal(unread[0]?.unread, 'first');
    assert.ok(unread.slice(1).every((u) => u.unread === 'more'));
    assert.deepEqual(
      out.slice(big.length).map((u) => u.lines),
      [next.length],
      'the next message is joined again',
    );
  });
});
