// mediaType: what a Content-Type field names, when a server sends it once, twice, or joined (issue 16).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mediaType } from '../../src/mcp/media-type.ts';

test('one value: the type, lowercased, without parameters; absent is empty', () => {
  assert.equal(mediaType('Text/Event-Stream; charset=utf-8'), 'text/event-stream');
  assert.equal(mediaType('application/json'), 'application/json');
  assert.equal(mediaType(undefined), '');
  assert.equal(mediaType(''), '');
});

test('sent twice, as two header lines or one comma-joined value: one type when every copy names it', () => {
  assert.equal(mediaType(['text/event-stream', 'text/event-stream']), 'text/event-stream');
  assert.equal(mediaType('text/event-stream, text/event-stream'), 'text/event-stream');
  assert.equal(mediaType('text/event-stream,TEXT/EVENT-STREAM; charset=utf-8'), 'text/event-stream');
  assert.equal(mediaType(['text/event-stream, text/event-stream', 'text/event-stream']), 'text/event-stream');
  assert.equal(mediaType('text/event-stream, '), 'text/event-stream', 'an empty list member is no type');
});

test('copies that disagree name no type a transport or rule takes for one of them', () => {
  assert.equal(mediaType(['text/event-stream', 'application/json']), 'text/event-stream, application/json');
  assert.equal(mediaType('application/json, text/html'), 'application/json, text/html');
});

test('a comma inside a quoted parameter does not separate', () => {
  assert.equal(mediaType('text/event-stream; x="a,b"'), 'text/event-stream');
  assert.equal(mediaType('text/event-stream; x="a\\",b", text/event-stream'), 'text/event-stream');
});
