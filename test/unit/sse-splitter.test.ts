import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseSplitter, type SsePiece } from '../../src/codec/sse-splitter.ts';
import { cut, splitAll } from '../helpers/chunks.ts';

type Style = 'LF' | 'CRLF' | 'CR';
const TERM: Record<Style, string> = { LF: '\n', CRLF: '\r\n', CR: '\r' };

// The blocks of a realistic MCP stream, written with "\n"; the last one is an unterminated tail.
const BLOCKS = [
  '\uFEFFid: 0\ndata: \n\n', // BOM + priming event
  ': ping\n\n',
  'retry: 3000\n\n',
  'id: 8\n\n',
  'event: message\nid: 9\ndata: {"jsonrpc":"2.0","id":1,\ndata: "result":{"text":"café 😀"}}\n\n',
  '\n', // two extra blank lines between events
  '\n',
  'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress"}\n\n',
  ': bye\n',
];
const styled = (style: Style) => BLOCKS.map((b) => b.replaceAll('\n', TERM[style]));
// Every terminator style, never a CR right before an LF that is meant as another line.
const MIXED = [
  '\uFEFFid: 0\r\ndata: \r\r',
  ': ping\n\r\n',
  'retry: 3000\r\n\n',
  'id: 8\r\r\n',
  'event: message\ndata: {"a":"é",\r\ndata: "b":"😀"}\r\r',
  '\r\n',
  '\r',
  'data: {}\n\n',
  ': bye\r',
];
// BOM then a blank line, CR edges, a tail ending in CR.
const SHORT = ['\uFEFF\r\n', 'id: 8\r\r', '\r', 'data: é\r\n\r\n', 'data: x\r'];

const STREAMS: [string, string[]][] = [
  ['LF', styled('LF')],
  ['CRLF', styled('CRLF')],
  ['CR', styled('CR')],
  ['mixed', MIXED],
  ['short', SHORT],
];

const run = (chunks: Uint8Array[], max = 1 << 20): SsePiece[] => splitAll(new SseSplitter(max), chunks);

const show = (pieces: SsePiece[]) =>
  pieces.map((p) => (p.kind === 'block' ? p.raw.toString('latin1') : `${p.last ? 'LAST' : 'MORE'}:${p.raw.toString('latin1')}`));

function checkBlocks(input: Buffer, expected: string[], points: number[]): void {
  const pieces = run(cut(input, points));
  assert.deepEqual(show(pieces), expected, `cut at ${points.join(',')}`);
  assert.ok(Buffer.concat(pieces.map((p) => p.raw)).equals(input));
}

for (const [name, blocks] of STREAMS) {
  test(`${name} stream: the same blocks, byte for byte, for every cut point and every pair`, () => {
    const input = Buffer.from(blocks.join(''));
    const expected = blocks.map((b) => Buffer.from(b).toString('latin1'));
    checkBlocks(input, expected, []);
    for (let a = 0; a <= input.length; a++) {
      for (let b = a; b <= input.length; b++) checkBlocks(input, expected, [a, b]);
    }
  });
}

test('one byte per chunk, given as plain Uint8Arrays', () => {
  const input = Buffer.from(MIXED.join(''));
  const bytes = [...input].map((b) => new Uint8Array([b]));
  assert.deepEqual(
    show(run(bytes)),
    MIXED.map((b) => Buffer.from(b).toString('latin1')),
  );
});

test('a CRLF cut between CR and LF ends one block, not an extra empty one', () => {
  const s = new SseSplitter(1024);
  assert.deepEqual(show(s.push(Buffer.from('data: x\r'))), []);
  assert.deepEqual(show(s.push(Buffer.from('\n\r'))), []);
  assert.deepEqual(show(s.push(Buffer.from('\ndata: y\r\n\r'))), ['data: x\r\n\r\n']);
  assert.deepEqual(show(s.push(Buffer.from('\n'))), ['data: y\r\n\r\n']);
  assert.deepEqual(s.end(), []);
});

test('a block inside one chunk is a view of that chunk, not a copy', () => {
  const chunk = new TextEncoder().encode('data: a\n\ndata: b\n\n'); // its own ArrayBuffer, not the pool
  const pieces = new SseSplitter(1024).push(chunk);
  assert.deepEqual(
    pieces.map((p) => [p.raw.buffer === chunk.buffer, p.raw.byteOffset]),
    [
      [true, 0],
      [true, 9],
    ],
  );
});

test('only a whole BOM at the very start of the stream is skipped for line starts', () => {
  const cases: [string, string[]][] = [
    ['\uFEFF\n\ndata: a\n\n', ['\uFEFF\n', '\n', 'data: a\n\n']],
    ['\xEF\xBB\n\n', ['\xEF\xBB\n\n']], // a partial BOM is line content
    ['data: a\n\n\uFEFF\n\n', ['data: a\n\n', '\uFEFF\n\n']],
  ];
  for (const [text, expected] of cases) {
    const encode = (t: string) => (t.includes('\uFEFF') ? Buffer.from(t) : Buffer.from(t, 'latin1'));
    const input = encode(text);
    const want = expected.map((b) => encode(b).toString('latin1'));
    for (let a = 0; a <= input.length; a++) checkBlocks(input, want, [a]);
  }
});

test('end() returns an unterminated tail as a block, and nothing on a clean stream', () => {
  const s = new SseSplitter(1024);
  assert.deepEqual(show(s.push(Buffer.from('data: a\n\ndata: b'))), ['data: a\n\n']);
  assert.deepEqual(show(s.end()), ['data: b']);
  const clean = new SseSplitter(1024);
  assert.deepEqual(show(clean.push(Buffer.from('data: a\r'))), []);
  assert.deepEqual(show(clean.push(Buffer.from('\r'))), []); // an LF may still follow
  assert.deepEqual(show(clean.end()), ['data: a\r\r']);
  assert.deepEqual(clean.end(), []);
  assert.deepEqual(new SseSplitter(1024).end(), []);
});

// Oversize pieces of one block are merged for comparison; the lone last:true must be the final one
// and hold the whole blank line `term` that ends the block.
function merged(pieces: SsePiece[], term?: string): string[] {
  const out: string[] = [];
  let big: Buffer[] | undefined;
  for (const p of pieces) {
    if (p.kind === 'block') {
      assert.equal(big, undefined, 'a block inside an oversize one');
      out.push(p.raw.toString('latin1'));
      continue;
    }
    (big ??= []).push(p.raw);
    if (p.last) {
      if (term !== undefined) assert.ok(p.raw.toString('latin1').endsWith(term), 'blank line split off');
      out.push(`OVERSIZE:${Buffer.concat(big).toString('latin1')}`);
      big = undefined;
    }
  }
  assert.equal(big, undefined, 'an oversize block without last:true');
  return out;
}

for (const style of ['LF', 'CRLF', 'CR'] as Style[]) {
  test(`${style}: an oversize block comes out in pieces, then splitting resumes`, () => {
    const t = TERM[style];
    const big = `data: ${'x'.repeat(40)}${t}data: y${t}${t}`;
    const blocks = [`data: a${t}${t}`, big, `${t}`, `data: b${t}${t}`];
    const input = Buffer.from(blocks.join(''));
    const expected = [blocks[0], `OVERSIZE:${big}`, ...blocks.slice(2)];
    for (let a = 0; a <= input.length; a++) {
      for (let b = a; b <= input.length; b += 2) {
        const pieces = run(cut(input, [a, b]), 16);
        assert.deepEqual(merged(pieces, t), expected, `cut at ${a},${b}`);
        assert.equal(pieces.filter((p) => p.kind === 'oversize' && p.last).length, 1);
      }
    }
  });
}

test('the limit is on the whole block, however it is chunked', () => {
  const fits = 'data: 123456\n\n'; // 14 bytes
  const over = 'data: 1234567\n\n';
  assert.deepEqual(merged(run([Buffer.from(fits + over)], 14)), [fits, `OVERSIZE:${over}`]);
  assert.deepEqual(
    merged(
      run(
        [...Buffer.from(fits + over)].map((b) => Buffer.from([b])),
        14,
      ),
    ),
    [fits, `OVERSIZE:${over}`],
  );
});

test('an oversize block cut off by the end of the stream still ends with last:true', () => {
  const s = new SseSplitter(4);
  const pieces = [...s.push(Buffer.from('data: endless')), ...s.end()];
  assert.deepEqual(merged(pieces), ['OVERSIZE:data: endless']);
});

test('memory: a huge block is returned as it arrives, never more than the limit held', () => {
  const max = 1024;
  for (const [line, chunkSize] of [
    ['x'.repeat(1000), 4096],
    ['data: abc\r', 777],
    ['data: abc\r\n', 1000],
  ] as const) {
    const s = new SseSplitter(max);
    let fed = 0;
    let returned = 0;
    let lasts = 0;
    const chunk = Buffer.from(line.repeat(Math.ceil(chunkSize / line.length))).subarray(0, chunkSize);
    for (let k = 0; k < 2048; k++) {
      fed += chunk.length;
      for (const p of s.push(chunk)) {
        returned += p.raw.length;
        assert.equal(p.kind, 'oversize');
        if (p.kind === 'oversize' && p.last) lasts++;
      }
      assert.ok(fed - returned <= max, `holding ${fed - returned} bytes after ${fed}`);
    }
    const tail = [...s.push(Buffer.from('\n\n\ndata: next\n\n')), ...s.end()];
    assert.equal(lasts + tail.filter((p) => p.kind === 'oversize' && p.last).length, 1);
    assert.deepEqual(
      tail.filter((p) => p.kind === 'block').map((p) => p.raw.toString()),
      ['\n', 'data: next\n\n'],
    );
    assert.equal(returned + tail.reduce((n, p) => n + p.raw.length, 0), fed + 15);
  }
});
