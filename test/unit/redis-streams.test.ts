import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHeldStream } from '../../src/state/redis-streams.ts';

const address = { host: '10.0.3.7', port: 8788, token: 't' };

test('a stream as the store holds it: open and end facts, with the holder and its address', () => {
  const open = { fact: { kind: 'open', key: '/message?sessionId=1', path: '/message', named: '1' }, holder: 'r1', address };
  assert.deepEqual(parseHeldStream(JSON.stringify(open)), open);
  const end = { fact: { kind: 'end', key: '/message?sessionId=1' }, holder: 'r1', address };
  assert.deepEqual(parseHeldStream(JSON.stringify(end)), end);
});

test('anything else in the store or on the channel is ignored, never thrown on', () => {
  for (const text of [
    null,
    undefined,
    '',
    'not json',
    'null',
    '[]',
    JSON.stringify({ fact: { kind: 'open', key: 'k', path: '/m' }, holder: 'r1' }),
    JSON.stringify({ fact: { kind: 'open', key: 'k' }, holder: 'r1', address }),
    JSON.stringify({ fact: { kind: 'open', key: 'k', path: '/m', named: 7 }, holder: 'r1', address }),
    JSON.stringify({ fact: { kind: 'gone', key: 'k' }, holder: 'r1', address }),
    JSON.stringify({ fact: { kind: 'end', key: 'k' }, holder: 1, address }),
    JSON.stringify({ fact: { kind: 'end', key: 'k' }, holder: 'r1', address: { ...address, port: '8788' } }),
  ])
    assert.equal(parseHeldStream(text), undefined, String(text));
});
