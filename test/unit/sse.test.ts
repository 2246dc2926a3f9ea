import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasData, parseBlock, type SseEvent } from '../../src/codec/sse.ts';
import { SseSplitter } from '../../src/codec/sse-splitter.ts';

const parse = (text: string) => parseBlock(Buffer.from(text));
const event = (fields: Partial<SseEvent> = {}): SseEvent => ({
  event: undefined,
  data: undefined,
  id: undefined,
  retry: undefined,
  comments: [],
  ...fields,
});

test('data lines are joined with "\\n", with one leading space dropped', () => {
  assert.deepEqual(parse('data: {"a":\ndata:1}\ndata:  two spaces\n\n'), event({ data: '{"a":\n1}\n two spaces' }));
  assert.deepEqual(parse('data\n\n'), event({ data: '' }), 'a bare "data" line is an empty data line');
});

test('event name and id come with the data', () => {
  assert.deepEqual(parse('event: message\nid: 7\ndata: {}\n\n'), event({ event: 'message', id: '7', data: '{}' }));
  assert.equal(parse('event:\ndata: x\n\n').event, undefined, 'an empty event name is no name');
});

test('an id-only block still reports its id', () => {
  assert.deepEqual(parse('id: 8\n\n'), event({ id: '8' }));
  assert.deepEqual(parse('id\n\n'), event({ id: '' }), 'a bare "id" line resets the id to empty');
  assert.deepEqual(parse('id: 1\nid: 2\r\n'), event({ id: '2' }), 'the last id wins');
  assert.deepEqual(parse('id: a\0b\n\n'), event(), 'an id containing NUL is ignored');
  assert.equal(parse('data: x\nid: a\0b\n\n').id, undefined);
});

test('the priming event has an id and empty data, which is not worth decoding', () => {
  const e = parse('id: 0\ndata: \n\n');
  assert.deepEqual(e, event({ id: '0', data: '' }));
  assert.equal(hasData(e), false);
});

test('retry and comments', () => {
  assert.deepEqual(parse('retry: 3000\n\n'), event({ retry: 3000 }));
  assert.equal(parse('retry: 3s\n\n').retry, undefined, 'a retry that is not digits is ignored');
  assert.deepEqual(parse(': ping\n:no space\n:\n\n'), event({ comments: ['ping', 'no space', ''] }));
  assert.deepEqual(parse(': progress\nretry: 10\ndata: x\n\n'), event({ comments: ['progress'], retry: 10, data: 'x' }));
});

test('CR and CRLF terminators', () => {
  const fields = event({ event: 'message', id: '3', data: 'a\nb' });
  assert.deepEqual(parse('event: message\rid: 3\rdata: a\rdata: b\r\r'), fields);
  assert.deepEqual(parse('event: message\r\nid: 3\r\ndata: a\r\ndata: b\r\n\r\n'), fields);
  assert.deepEqual(parse('id: 4\r\r'), event({ id: '4' }));
});

test('UTF-8: multibyte text decodes, invalid bytes become U+FFFD and never throw', () => {
  assert.equal(parse('data: café 😀\n\n').data, 'café 😀');
  const bad = Buffer.concat([Buffer.from('id: 1\ndata: a'), Buffer.from([0xff, 0xc3]), Buffer.from('\n\n')]);
  assert.deepEqual(parseBlock(bad), event({ id: '1', data: 'a\uFFFD\uFFFD' }));
  assert.doesNotThrow(() => parseBlock(Uint8Array.from([0xfe, 0xff, 0x0a, 0x80, 0x0d])));
});

test('a BOM at the start of the stream is not part of the first field name; later, it is text', () => {
  const bytes = (s: string) => Buffer.from(s, 'utf8');
  assert.deepEqual(parseBlock(bytes('\uFEFFid: 0\ndata: \n\n'), true), event({ id: '0', data: '' }));
  assert.deepEqual(parseBlock(bytes('\uFEFFid: 8\n\n'), true), event({ id: '8' }));
  assert.deepEqual(parseBlock(bytes('\uFEFFdata: b\n\n')), event(), 'an unknown field "\\uFEFFdata" dispatches nothing');
});

test('a tail block without its blank line is read all the same', () => {
  assert.deepEqual(parse('data: tail'), event({ data: 'tail' }));
  assert.deepEqual(parse('data: tail\n'), event({ data: 'tail' }));
  assert.deepEqual(parse('data: tail\r'), event({ data: 'tail' }));
  assert.deepEqual(parse('event: x\r\ndata: tail\r\n'), event({ event: 'x', data: 'tail' }));
  assert.deepEqual(parse(''), event());
});

test('hasData is true only for a non-blank payload', () => {
  assert.equal(hasData(parse('data: {"jsonrpc":"2.0"}\n\n')), true);
  assert.equal(hasData(parse('data: \ndata: \n\n')), false);
  assert.equal(hasData(parse(': ping\n\n')), false);
  assert.equal(hasData(parse('id: 8\n\n')), false);
});

test('the blocks of a split stream read as the events of the stream', () => {
  const stream = Buffer.from(
    '\uFEFFid: 0\r\ndata: \r\n\r\n: ping\r\rretry: 3000\n\nid: 8\r\r\n\nevent: message\rid: 9\rdata: {"t":"é"}\r\rdata: end',
  );
  const splitter = new SseSplitter(1024);
  const blocks = [...stream].flatMap((b) => splitter.push(Uint8Array.of(b))).concat(splitter.end());
  assert.deepEqual(
    blocks.map((b, i) => parseBlock(b.raw, i === 0)),
    [
      event({ id: '0', data: '' }),
      event({ comments: ['ping'] }),
      event({ retry: 3000 }),
      event({ id: '8' }),
      event(),
      event({ event: 'message', id: '9', data: '{"t":"é"}' }),
      event({ data: 'end' }),
    ],
  );
});
