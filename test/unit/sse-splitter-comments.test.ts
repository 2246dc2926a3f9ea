// SseRelaySplitter: comment lines that cannot belong to an event (before the first field line of
// a block) come out as soon as their line is complete, so a keep-alive with no blank line after it
// reaches the client at once (issue 16). Everything else is split as SseSplitter splits it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseRelaySplitter, type SseRelayPiece } from '../../src/codec/sse-splitter.ts';
import { cut, splitAll } from '../helpers/chunks.ts';

const run = (chunks: Uint8Array[], max = 1 << 20): SseRelayPiece[] => splitAll(new SseRelaySplitter(max), chunks);

/** Pieces as strings: adjacent comment pieces merged (C:), oversize pieces of one block merged (OVERSIZE:). */
function units(pieces: SseRelayPiece[]): string[] {
  const out: string[] = [];
  let comment: Buffer[] | undefined;
  let big: Buffer[] | undefined;
  const closeComment = (): void => {
    if (comment) out.push(`C:${Buffer.concat(comment).toString('latin1')}`);
    comment = undefined;
  };
  for (const p of pieces) {
    if (p.kind === 'comment') {
      assert.equal(big, undefined, 'a comment inside an oversize block');
      (comment ??= []).push(p.raw);
      continue;
    }
    closeComment();
    if (p.kind === 'block') {
      assert.equal(big, undefined, 'a block inside an oversize one');
      out.push(p.raw.toString('latin1'));
      continue;
    }
    (big ??= []).push(p.raw);
    if (p.last) {
      out.push(`OVERSIZE:${Buffer.concat(big).toString('latin1')}`);
      big = undefined;
    }
  }
  closeComment();
  assert.equal(big, undefined, 'an oversize block without last:true');
  return out;
}

const show = (pieces: SseRelayPiece[]): string[] => pieces.map((p) => `${p.kind === 'comment' ? 'C:' : ''}${p.raw.toString('latin1')}`);

function checkUnits(input: Buffer, expected: string[], points: number[], max?: number): void {
  const pieces = run(cut(input, points), max);
  assert.deepEqual(units(pieces), expected, `cut at ${points.join(',')}`);
  assert.ok(Buffer.concat(pieces.map((p) => p.raw)).equals(input), 'the pieces concatenate to the input');
}

test('keep-alive comments with no blank line come out as each line completes', () => {
  const s = new SseRelaySplitter(1 << 20);
  assert.deepEqual(show(s.push(Buffer.from(': keepalive\n'))), ['C:: keepalive\n']);
  assert.deepEqual(show(s.push(Buffer.from(': keep'))), [], 'a comment line is held until it is complete');
  assert.deepEqual(show(s.push(Buffer.from('alive\n: again\n'))), ['C:: keepalive\n: again\n']);
  assert.deepEqual(show(s.push(Buffer.from('event: message\ndata: {"a":1}\n'))), [], 'an event is held until its blank line');
  assert.deepEqual(show(s.push(Buffer.from(': inside the event\n'))), [], 'a comment after a field line belongs to its block');
  assert.deepEqual(show(s.push(Buffer.from('\n: after\n'))), ['event: message\ndata: {"a":1}\n: inside the event\n\n', 'C:: after\n']);
  assert.deepEqual(s.end(), []);
});

test('a comment line ended by a CR at a chunk edge goes at once; the LF that follows goes with what comes next', () => {
  const s = new SseRelaySplitter(1 << 20);
  assert.deepEqual(show(s.push(Buffer.from(': ping\r'))), ['C:: ping\r']);
  assert.deepEqual(show(s.push(Buffer.from('\n: ping\r'))), ['C:\n: ping\r']);
  assert.deepEqual(show(s.push(Buffer.from('\ndata: x\r\n'))), ['C:\n'], 'the LF of the CRLF, not a blank line');
  assert.deepEqual(show(s.push(Buffer.from('\r'))), [], 'the blank line may still be a CRLF');
  assert.deepEqual(show(s.push(Buffer.from('\n: ping\r'))), ['data: x\r\n\r\n', 'C:: ping\r']);
  assert.deepEqual(show(s.push(Buffer.from('\r'))), [], 'a CR blank line after a comment: held until the next byte');
  assert.deepEqual(show(s.push(Buffer.from('data: y\n\n'))), ['\r', 'data: y\n\n']);
});

test('a blank line after comment lines is a block of its own, as blank lines between events are', () => {
  const s = new SseRelaySplitter(1 << 20);
  assert.deepEqual(show(s.push(Buffer.from(': ping\n\n: ping\n\n'))), ['C:: ping\n', '\n', 'C:: ping\n', '\n']);
});

// Streams with comment lines in every place, and what they split into (comment runs merged).
const STREAMS: Array<[string, string[]]> = [
  ['LF', ['\uFEFF: hello\n', '\n', 'id: 0\ndata: \n\n', ': ping\n: ping\n', 'event: message\n: kept\ndata: {"a":"é"}\n\n', ': tail']],
  ['CRLF', [': a\r\n', 'data: 1\r\n\r\n', ': b\r\n: c\r\n', '\r\n', 'retry: 10\r\n: kept\r\n\r\n', ': d\r\n']],
  ['CR', [': a\r', 'data: 1\r\r', ': b\r: c\r', '\r', 'id: 8\r: kept\r\r', ': d\r']],
  ['mixed', ['\uFEFF: a\r\n: b\r: c\n', 'data: x\r\n\n', '\r', ': d\r\n', 'data: y\r: e\r\r\n', ': f\n', 'data: tail']],
  ['not comments', ['\xEF\xBB: a partial BOM makes a field line\n\n', ' : a space first\n\n', 'data: x\n\n']],
];

for (const [name, expected] of STREAMS) {
  test(`${name} stream: the same pieces, byte for byte, for every cut point and every pair`, () => {
    const encode = (t: string) => (t.includes('\xEF\xBB') && !t.includes('\uFEFF') ? Buffer.from(t, 'latin1') : Buffer.from(t));
    const input = Buffer.concat(expected.map(encode));
    const want = expected.map((u) => {
      const bytes = encode(u).toString('latin1');
      return u.startsWith(':') || u.startsWith('\uFEFF:') ? `C:${bytes}` : bytes;
    });
    checkUnits(input, want, []);
    for (let a = 0; a <= input.length; a++) {
      for (let b = a; b <= input.length; b++) checkUnits(input, want, [a, b]);
    }
  });
}

test('one byte per chunk: every comment line comes out with its last byte', () => {
  const input = Buffer.from(': a\r\n: b\r: c\ndata: x\n\n');
  const s = new SseRelaySplitter(1024);
  const at: number[] = [];
  input.forEach((byte, k) => {
    if (s.push(Uint8Array.of(byte)).some((p) => p.kind === 'comment')) at.push(k);
  });
  // After the CR of ": a\r\n", its LF, the CR of ": b\r", the LF of ": c\n".
  assert.deepEqual(at, [3, 4, 8, 12]);
});

test('a comment line over the limit goes out as it arrives, as comment pieces: never an oversize block', () => {
  const max = 16;
  const long = `: ${'x'.repeat(100)}\n`;
  const input = Buffer.from(`${long}data: a\n\n`);
  for (let a = 0; a <= input.length; a++) {
    const chunks = cut(input, [a]);
    const s = new SseRelaySplitter(max);
    let pushed = 0;
    let returned = 0;
    const pieces: SseRelayPiece[] = [];
    for (const c of chunks) {
      const got = s.push(c);
      pushed += c.length;
      returned += got.reduce((n, p) => n + p.raw.length, 0);
      pieces.push(...got);
      assert.ok(pushed - returned <= max, `holds ${pushed - returned} bytes`);
    }
    pieces.push(...s.end());
    assert.deepEqual(units(pieces), [`C:${long}`, 'data: a\n\n'], `cut at ${a}`);
  }
});

test('end(): an unterminated comment line is a comment piece; a BOM alone is a block', () => {
  assert.deepEqual(show(run([Buffer.from('data: a\n\n: bye')])), ['data: a\n\n', 'C:: bye']);
  assert.deepEqual(show(run([Buffer.from('\uFEFF')])), [Buffer.from('\uFEFF').toString('latin1')]);
  assert.deepEqual(show(run([Buffer.from('\uFEFF'), Buffer.from(': c\n')])), [`C:${Buffer.from('\uFEFF: c\n').toString('latin1')}`]);
  assert.deepEqual(show(run([Buffer.from('data: a\n: not alone')])), ['data: a\n: not alone']);
});

test('an oversize event is unchanged by the comments before it', () => {
  const big = `data: ${'y'.repeat(40)}\n\n`;
  const input = Buffer.from(`: a\n${big}: b\n`);
  for (let a = 0; a <= input.length; a++) checkUnits(input, ['C:: a\n', `OVERSIZE:${big}`, 'C:: b\n'], [a], 16);
});
