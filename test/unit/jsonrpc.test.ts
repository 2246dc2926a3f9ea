import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { classify, classifyPayload, idKey, type Message } from '../../src/codec/jsonrpc.ts';

/** Classifies the JSON text, so every input is a value JSON.parse can actually produce. */
const c = (json: string): Message => classify(JSON.parse(json));

function expectInvalid(json: string, reason: RegExp): Extract<Message, { kind: 'invalid' }> {
  const m = c(json);
  assert.equal(m.kind, 'invalid', `${json} should be invalid, got ${m.kind}`);
  if (m.kind !== 'invalid') throw new Error('unreachable');
  assert.match(m.reason, reason, `reason for ${json}`);
  return m;
}

describe('classify: valid messages', () => {
  test('a request carries id, method and params, and keeps the original value', () => {
    const value = JSON.parse('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":1}}}');
    const m = classify(value);
    assert.equal(m.kind, 'request');
    if (m.kind !== 'request') return;
    assert.equal(m.id, 7);
    assert.equal(m.method, 'tools/call');
    assert.deepEqual(m.params, { name: 'echo', arguments: { x: 1 } });
    assert.equal(m.value, value);
  });

  test('a request without params has params undefined', () => {
    const m = c('{"jsonrpc":"2.0","id":"a","method":"ping"}');
    assert.equal(m.kind, 'request');
    if (m.kind !== 'request') return;
    assert.equal(m.id, 'a');
    assert.equal(m.params, undefined);
  });

  test('a notification has no id; an empty method name is still a notification', () => {
    const m = c('{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}');
    assert.equal(m.kind, 'notification');
    if (m.kind !== 'notification') return;
    assert.equal(m.method, 'notifications/initialized');
    assert.deepEqual(m.params, {});
    assert.equal('id' in m, false);
    assert.equal(c('{"jsonrpc":"2.0","method":""}').kind, 'notification');
  });

  test('a result carries its id and result; a null result is still a result', () => {
    const m = c('{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}');
    assert.equal(m.kind, 'result');
    if (m.kind !== 'result') return;
    assert.equal(m.id, 3);
    assert.deepEqual(m.result, { tools: [] });

    const n = c('{"jsonrpc":"2.0","id":"x","result":null}');
    assert.equal(n.kind, 'result');
    if (n.kind !== 'result') return;
    assert.equal(n.result, null);
  });

  test('a result with id null is a result with id null (not "without id")', () => {
    const m = c('{"jsonrpc":"2.0","id":null,"result":{}}');
    assert.equal(m.kind, 'result');
    assert.equal(m.id, null);
  });

  test('an error carries id, code, message and data', () => {
    const m = c('{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params","data":{"field":"x"}}}');
    assert.equal(m.kind, 'error');
    if (m.kind !== 'error') return;
    assert.equal(m.id, 4);
    assert.equal(m.code, -32602);
    assert.equal(m.message, 'Invalid params');
    assert.deepEqual(m.data, { field: 'x' });
  });

  test("an error keeps whatever code/message it has (judging them is not the classifier's job)", () => {
    const m = c('{"jsonrpc":"2.0","id":4,"error":{"code":"oops"}}');
    assert.equal(m.kind, 'error');
    if (m.kind !== 'error') return;
    assert.equal(m.code, 'oops');
    assert.equal(m.message, undefined);
    assert.equal(m.data, undefined);
  });

  test('an error without id has id undefined; with id null, id null; with an unreadable id, id null', () => {
    const noId = c('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}');
    assert.equal(noId.kind, 'error');
    assert.equal(noId.id, undefined);
    const nullId = c('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
    assert.equal(nullId.kind, 'error');
    assert.equal(nullId.id, null);
    const boolId = c('{"jsonrpc":"2.0","id":true,"error":{"code":-32600,"message":"x"}}');
    assert.equal(boolId.kind, 'error');
    assert.equal(boolId.id, null);
  });
});

describe('classify: ids of every JSON type', () => {
  const valid: Array<[string, string | number]> = [
    ['1', 1],
    ['"1"', '1'],
    ['0', 0],
    ['""', ''],
    ['-5', -5],
    ['1.5', 1.5],
    ['1e3', 1000],
    ['"\\u00e9\\ud83d\\ude00"', 'é😀'],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
  ];
  for (const [json, id] of valid) {
    test(`request id ${json} is valid`, () => {
      const m = c(`{"jsonrpc":"2.0","id":${json},"method":"ping"}`);
      assert.equal(m.kind, 'request');
      assert.equal(m.id, id);
      const r = c(`{"jsonrpc":"2.0","id":${json},"result":{}}`);
      assert.equal(r.kind, 'result');
      assert.equal(r.id, id);
    });
  }

  for (const json of ['null', 'true', 'false', '{}', '{"a":1}', '[]', '[1]', '1e400', '-1e400']) {
    test(`request id ${json} is invalid with id null`, () => {
      const m = expectInvalid(`{"jsonrpc":"2.0","id":${json},"method":"ping"}`, /request id/);
      assert.equal(m.id, null);
    });
  }

  test('in-memory NaN and Infinity ids are not ids', () => {
    for (const id of [NaN, Infinity, -Infinity]) {
      const m = classify({ jsonrpc: '2.0', id, method: 'ping' });
      assert.equal(m.kind, 'invalid');
      assert.equal(m.id, null);
      const r = classify({ jsonrpc: '2.0', id, result: {} });
      assert.equal(r.kind, 'result');
      assert.equal(r.id, null, 'an unreadable response id reads as null');
    }
  });

  test('a result with an id of the wrong type reads its id as null', () => {
    const m = c('{"jsonrpc":"2.0","id":{"x":1},"result":{}}');
    assert.equal(m.kind, 'result');
    assert.equal(m.id, null);
  });
});

describe('classify: invalid shapes', () => {
  test('values that are not objects', () => {
    for (const json of ['null', 'true', 'false', '0', '-1', '"2.0"', '""', '[]', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]']) {
      const m = expectInvalid(json, /not an object/);
      assert.equal(m.id, undefined);
    }
  });

  test('classify never unpacks an array, even a batch of valid messages', () => {
    const batch = JSON.parse('[{"jsonrpc":"2.0","id":1,"method":"ping"}]');
    const m = classify(batch);
    assert.equal(m.kind, 'invalid');
    assert.equal(m.value, batch);
  });

  test('missing or wrong jsonrpc, with the id still read when it is readable', () => {
    for (const jsonrpc of [
      '',
      '"jsonrpc":"1.0",',
      '"jsonrpc":2.0,',
      '"jsonrpc":2,',
      '"jsonrpc":"2",',
      '"jsonrpc":null,',
      '"jsonrpc":"2.0 ",',
      '"JSONRPC":"2.0",',
    ]) {
      const m = expectInvalid(`{${jsonrpc}"id":9,"method":"ping"}`, /jsonrpc/);
      assert.equal(m.id, 9, jsonrpc);
    }
    const noId = expectInvalid('{"method":"ping"}', /jsonrpc/);
    assert.equal(noId.id, undefined);
    const badId = expectInvalid('{"jsonrpc":"1.0","id":true,"method":"ping"}', /jsonrpc/);
    assert.equal(badId.id, null);
  });

  test('a method together with result or error', () => {
    const withResult = expectInvalid('{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}', /method together with result or error/);
    assert.equal(withResult.id, 1);
    expectInvalid('{"jsonrpc":"2.0","id":1,"method":"ping","error":{"code":1,"message":"x"}}', /method together/);
    const notif = expectInvalid('{"jsonrpc":"2.0","method":"ping","result":null}', /method together/);
    assert.equal(notif.id, undefined);
  });

  test('a method that is not a string', () => {
    for (const method of ['null', '1', '{}', '["ping"]', 'true']) {
      const m = expectInvalid(`{"jsonrpc":"2.0","id":1,"method":${method}}`, /method is not a string/);
      assert.equal(m.id, 1);
    }
  });

  test('both result and error', () => {
    const m = expectInvalid('{"jsonrpc":"2.0","id":2,"result":{},"error":{"code":1,"message":"x"}}', /both result and error/);
    assert.equal(m.id, 2);
  });

  test('error that is not an object', () => {
    for (const error of ['null', '"boom"', '-32600', '[]', '[{"code":1}]', 'true']) {
      const m = expectInvalid(`{"jsonrpc":"2.0","id":5,"error":${error}}`, /error is not an object/);
      assert.equal(m.id, 5);
    }
  });

  test('result without id', () => {
    const m = expectInvalid('{"jsonrpc":"2.0","result":{}}', /result without id/);
    assert.equal(m.id, undefined);
  });

  test('neither method, result nor error', () => {
    expectInvalid('{"jsonrpc":"2.0"}', /neither/);
    const m = expectInvalid('{"jsonrpc":"2.0","id":1,"params":{}}', /neither/);
    assert.equal(m.id, 1);
  });

  test('a "__proto__" key from JSON.parse does not make inherited fields count', () => {
    const m = c('{"__proto__":{"jsonrpc":"2.0","id":1,"method":"ping"}}');
    assert.equal(m.kind, 'invalid');
    assert.equal(m.id, undefined);
  });
});

describe('classifyPayload', () => {
  test('a single message is not a batch', () => {
    const p = classifyPayload(JSON.parse('{"jsonrpc":"2.0","id":1,"method":"ping"}'));
    assert.equal(p.batch, false);
    assert.equal(p.messages.length, 1);
    assert.equal(p.messages[0]!.kind, 'request');
  });

  test('a non-object single value is one invalid message, not a batch', () => {
    const p = classifyPayload(42);
    assert.equal(p.batch, false);
    assert.equal(p.messages.length, 1);
    assert.equal(p.messages[0]!.kind, 'invalid');
  });

  test('an array is a batch classified element by element, in order', () => {
    const p = classifyPayload(
      JSON.parse(
        '[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","id":1,"result":{}},' +
          '{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"m"}},1,[],null]',
      ),
    );
    assert.equal(p.batch, true);
    assert.deepEqual(
      p.messages.map((m) => m.kind),
      ['request', 'notification', 'result', 'error', 'invalid', 'invalid', 'invalid'],
    );
  });

  test('an empty array is an empty batch', () => {
    const p = classifyPayload([]);
    assert.equal(p.batch, true);
    assert.equal(p.messages.length, 0);
  });

  test('a nested batch is one level deep: inner arrays are invalid messages', () => {
    const p = classifyPayload(JSON.parse('[[{"jsonrpc":"2.0","id":1,"method":"a"}]]'));
    assert.equal(p.batch, true);
    assert.equal(p.messages.length, 1);
    assert.equal(p.messages[0]!.kind, 'invalid');
  });
});

describe('idKey', () => {
  test('1 and "1" give different keys', () => {
    assert.notEqual(idKey(1), idKey('1'));
  });

  test('equal ids give equal keys', () => {
    assert.equal(idKey(1), idKey(1));
    assert.equal(idKey('abc'), idKey('abc'));
    assert.equal(idKey(1), idKey(JSON.parse('1.0') as number));
  });

  test('0 and "" are valid ids with distinct keys', () => {
    const keys = new Set([idKey(0), idKey(''), idKey('0'), idKey(1), idKey('1'), idKey(-1), idKey('-1'), idKey(1.5), idKey('1.5')]);
    assert.equal(keys.size, 9);
  });

  test('a string id that looks like a number key does not collide with that number', () => {
    for (const n of [0, 1, -1, 42, 1.5]) {
      assert.notEqual(idKey(n), idKey(idKey(n)));
      assert.notEqual(idKey(n), idKey(String(n)));
    }
  });
});

describe('classify is total over JSON values', () => {
  const weird = [
    'null',
    'true',
    'false',
    '0',
    '-0',
    '1e308',
    '1e400',
    '-1e400',
    '""',
    '"2.0"',
    '"{\\"jsonrpc\\":\\"2.0\\"}"',
    '[]',
    '[[]]',
    '[null]',
    '[[[[[[[[[[1]]]]]]]]]]',
    '{}',
    '{"jsonrpc":"2.0"}',
    '{"jsonrpc":"2.0","id":1}',
    '{"jsonrpc":"2.0","id":[],"method":"x"}',
    '{"jsonrpc":"2.0","id":{},"result":1}',
    '{"jsonrpc":"2.0","id":null,"method":"x"}',
    '{"jsonrpc":"2.0","id":1e400,"method":"x"}',
    '{"jsonrpc":"2.0","id":-0,"method":"x"}',
    '{"jsonrpc":"2.0","method":"x","params":null}',
    '{"jsonrpc":"2.0","method":"x","params":[1,2]}',
    '{"jsonrpc":"2.0","error":null}',
    '{"jsonrpc":"2.0","error":{}}',
    '{"jsonrpc":"2.0","error":{"code":null,"message":null,"data":null}}',
    '{"jsonrpc":"2.0","result":null,"id":null}',
    '{"jsonrpc":"2.0","result":null,"error":null}',
    '{"jsonrpc":"2.0","method":"x","id":1,"result":1,"error":{}}',
    '{"__proto__":null}',
    '{"__proto__":{"method":"x"},"jsonrpc":"2.0"}',
    '{"constructor":{"prototype":{"id":1}},"jsonrpc":"2.0","id":2,"method":"x"}',
    '{"toString":"x","valueOf":1,"hasOwnProperty":null,"jsonrpc":"2.0","method":"x"}',
    '{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"x"}',
    '{"jsonrpc":"2.0","id":"\\u0000","method":"\\ud800"}',
    '{"":"","jsonrpc":"2.0","method":"x"}',
    '{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"a":[{"b":{"c":[null,true,1.5,"s"]}}]}}}',
    '[{"jsonrpc":"2.0","id":1,"method":"x"},"str",{"jsonrpc":"2.0","result":1},[[]]]',
  ];
  const kinds = new Set(['request', 'notification', 'result', 'error', 'invalid']);

  test(`${weird.length} hand-picked values classify without throwing and keep their invariants`, () => {
    assert.ok(weird.length >= 40);
    for (const json of weird) {
      const value: unknown = JSON.parse(json);
      let m: Message;
      let p: ReturnType<typeof classifyPayload>;
      try {
        m = classify(value);
        p = classifyPayload(value);
      } catch (err) {
        assert.fail(`classify threw for ${json}: ${String(err)}`);
      }
      assert.ok(kinds.has(m.kind), `${json}: kind ${m.kind}`);
      assert.equal(m.value, value, `${json}: value is the input itself`);
      assert.equal(p.batch, Array.isArray(value), `${json}: batch iff array`);
      assert.equal(p.messages.length, Array.isArray(value) ? value.length : 1);
      for (const msg of [m, ...p.messages]) {
        switch (msg.kind) {
          case 'request':
            assert.ok(typeof msg.id === 'string' || Number.isFinite(msg.id), `${json}: request id`);
            assert.equal(typeof msg.method, 'string');
            break;
          case 'notification':
            assert.equal(typeof msg.method, 'string');
            assert.equal(Object.hasOwn(msg.value, 'id'), false, `${json}: notification without id`);
            break;
          case 'result':
            assert.notEqual(msg.id, undefined, `${json}: a result always has an id field`);
            break;
          case 'error':
          case 'invalid':
            assert.ok(msg.id === undefined || msg.id === null || typeof msg.id === 'string' || Number.isFinite(msg.id));
            break;
        }
        if (msg.kind === 'invalid') assert.ok(msg.reason.length > 0);
        else if (msg.kind !== 'notification' && msg.id !== undefined && msg.id !== null) assert.equal(typeof idKey(msg.id), 'string');
      }
    }
  });

  test('non-JSON JavaScript values do not throw either', () => {
    for (const value of [undefined, NaN, Infinity, Symbol('s'), () => 1, new Map(), new Date(0), 10n, Object.create(null)]) {
      assert.equal(classify(value).kind, 'invalid');
    }
  });
});
