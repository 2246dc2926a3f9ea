// The raw text of ids (issue 11): read back from the text a body was parsed from, byte for byte;
// big ids keyed apart; a rewritten message carries the request's token, the other messages of a
// batch their own bytes.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeJsonText } from '../../src/codec/json-body.ts';
import { canonicalNumber, messageSpans } from '../../src/codec/id-token.ts';
import { classify, idKey, idTokenOf, rawTextOf, type Message } from '../../src/codec/jsonrpc.ts';
import { rewriteBody } from '../../src/rewrite/apply.ts';
import { parseBlock } from '../../src/codec/sse.ts';
import { encodeBody, encodeSseEvent, messageText, sseEvent, withIdToken } from '../../src/rewrite/encode.ts';
import type { ResponseMessage } from '../../src/rewrite/types.ts';

const ODD_IDS = [
  '1.0',
  '1e2',
  '1E+2',
  '-0',
  '0.5',
  '12345678901234567890',
  '9007199254740993',
  '-9007199254740993',
  '"\\u0041"',
  '"a\\/b"',
  '"\\"q\\""',
  '"é"',
  '"\\ud800"',
  'null',
  '7',
];

const messagesOf = (text: string): Message[] => {
  const d = decodeJsonText(text);
  assert.ok(d.ok, text);
  return [...d.payload.messages];
};

describe('idTokenOf: the id as it came', () => {
  test('every spelling, in any member order and spacing, nested "id" members ignored', () => {
    for (const id of ODD_IDS) {
      const bodies = [
        `{"jsonrpc":"2.0","id":${id},"result":{}}`,
        ` {\n  "result" : {"id": 99, "x": [{"id": "no"}, "]}\\"", {}]} ,\r\n\t"id" :  ${id} , "jsonrpc":"2.0" } `,
        `{"jsonrpc":"2.0","method":"tools/call","params":{"id":{"id":3}},"id":${id}}`,
        `{"jsonrpc":"2.0","\\u0069d":${id},"result":null}`,
      ];
      for (const body of bodies) assert.equal(idTokenOf(messagesOf(body)[0]!), id, body);
    }
  });

  test('JSON.parse takes the last of two "id" members: so does the token', () => {
    assert.equal(idTokenOf(messagesOf('{"jsonrpc":"2.0","id":1,"id":1.0,"result":1}')[0]!), '1.0');
  });

  test('a batch: each element its own token and bytes; no id, no token; a message not decoded from text has none', () => {
    const body =
      '[ {"jsonrpc":"2.0","id":1.0,"result":1} ,{"jsonrpc":"2.0","method":"notifications/x"}, 5, {"jsonrpc":"2.0","id":"\\u0041","error":{"code":1,"message":"m"}}]';
    const ms = messagesOf(body);
    assert.deepEqual(ms.map(idTokenOf), ['1.0', undefined, undefined, '"\\u0041"']);
    assert.deepEqual(ms.map(rawTextOf), [
      '{"jsonrpc":"2.0","id":1.0,"result":1}',
      '{"jsonrpc":"2.0","method":"notifications/x"}',
      '5',
      '{"jsonrpc":"2.0","id":"\\u0041","error":{"code":1,"message":"m"}}',
    ]);
    assert.equal(idTokenOf(classify({ jsonrpc: '2.0', id: 1, result: 1 })), undefined);
    assert.deepEqual(messageSpans('[]', true), []);
  });

  test('property: for generated JSON with ids spelled any way, the token and spans are exact', () => {
    const spelled = fc.oneof(
      fc.integer().map(String),
      fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }).map(String),
      fc.tuple(fc.integer({ min: -1e6, max: 1e6 }), fc.nat(999), fc.integer({ min: -30, max: 30 })).map(([i, f, e]) => `${i}.${f}e${e}`),
      fc.string().map((s) => JSON.stringify(s)),
      fc.string().map((s) => JSON.stringify(s).replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)),
    );
    const ws = fc.constantFrom('', ' ', '\n', '\t ', '\r\n');
    const filler = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
    fc.assert(
      fc.property(fc.array(fc.tuple(spelled, filler, fc.boolean(), ws), { minLength: 1, maxLength: 4 }), fc.boolean(), (parts, batch) => {
        const objects = parts.map(([id, other, idFirst, w]) => {
          const members = [`${w}"id"${w}:${w}${id}${w}`, `"jsonrpc":"2.0"`, `"result":${other}`];
          return `{${(idFirst ? members : members.reverse()).join(',')}}`;
        });
        const text = batch ? `[${objects.join(' ,\n')}]` : objects[0]!;
        const spans = messageSpans(text, batch);
        const expected = batch ? objects : [objects[0]!];
        assert.deepEqual(
          spans.map((s) => s.token),
          (batch ? parts : [parts[0]!]).map(([id]) => id),
        );
        assert.deepEqual(
          spans.map((s) => text.slice(s.start, s.end)),
          expected,
        );
      }),
      { numRuns: 500 },
    );
  });
});

describe('idKey: big ids stay apart, equal ones meet', () => {
  test('two integers beyond 2^53 that JSON.parse rounds to one double get two keys', () => {
    const [a, b] = ['9007199254740993', '9007199254740992'].map((t) => messagesOf(`{"jsonrpc":"2.0","id":${t},"result":1}`)[0]!);
    assert.equal((a as { id: unknown }).id, (b as { id: unknown }).id, 'JSON.parse made them one number');
    assert.notEqual(idKey(9007199254740992, idTokenOf(a!)), idKey(9007199254740992, idTokenOf(b!)));
    // biome-ignore lint/correctness/noPrecisionLoss: a number beyond 2^53 as JSON.parse reads it, on purpose
    assert.equal(idKey(12345678901234567890, '12345678901234567890'), idKey(12345678901234567890, '1.2345678901234567890e19'));
  });

  test('safe integers and fractions are keyed by value: 1, 1.0, 1e0 are one id; 1 and "1" are two', () => {
    assert.equal(idKey(1, '1.0'), idKey(1));
    assert.equal(idKey(1, '1e0'), idKey(1, '1'));
    assert.equal(idKey(0.5, '0.50'), idKey(0.5, '5e-1'));
    assert.equal(idKey(-0, '-0'), idKey(0));
    assert.notEqual(idKey(1), idKey('1'));
    assert.equal(idKey('A', '"\\u0041"'), idKey('A'));
    // Without its token a big id keeps its old key (a message built by hand).
    assert.equal(idKey(2 ** 60), `n:${2 ** 60}`);
  });

  test('canonicalNumber', () => {
    assert.equal(canonicalNumber('9007199254740993'), '9007199254740993');
    assert.equal(canonicalNumber('9007199254740993.000'), '9007199254740993');
    assert.equal(canonicalNumber('9.007199254740993E15'), '9007199254740993');
    assert.equal(canonicalNumber('-0.0'), '0');
    assert.equal(canonicalNumber('90071992547409935e-1'), '90071992547409935e-1');
    assert.equal(canonicalNumber('1e-5'), '1e-5');
    assert.equal(canonicalNumber('"x"'), '"x"');
  });
});

describe("encoding: a rewritten message carries the request's id token", () => {
  const error = (id: unknown): ResponseMessage => ({ jsonrpc: '2.0', id: id as number, error: { code: -32603, message: 'x' } });

  test('every spelling, verbatim, where the token still reads as the id', () => {
    for (const token of ODD_IDS.filter((t) => t !== 'null')) {
      const value = JSON.parse(token) as unknown;
      const out = encodeBody([withIdToken(error(value), token)], false).toString('utf8');
      assert.equal(out, `{"jsonrpc":"2.0","id":${token},"error":{"code":-32603,"message":"x"}}`);
      const back = JSON.parse(out) as ResponseMessage;
      assert.ok(back.id === value, token);
      assert.deepEqual(back.error, error(value).error);
    }
  });

  test('a token that no longer reads as the id is not used', () => {
    assert.equal(messageText(withIdToken(error('1'), '1')), '{"jsonrpc":"2.0","id":"1","error":{"code":-32603,"message":"x"}}');
    assert.equal(messageText(withIdToken(error(2), '1.0')), '{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"x"}}');
    assert.equal(messageText(withIdToken(error(1), 'not json')), '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}');
    assert.equal(messageText(error(1)), JSON.stringify(error(1)));
  });

  test('rewriteBody: the decided message with its token, the other messages of the batch byte for byte', () => {
    const text = '[{"jsonrpc":"2.0","id":1.0,"result":{"a":1e2}},{"id":"\\u0042","jsonrpc":"2.0","error":{"code":-32050,"message":"m"}}]';
    const d = decodeJsonText(text);
    assert.ok(d.ok);
    const [first, second] = d.payload.messages;
    const replacement = withIdToken(
      { jsonrpc: '2.0', id: 'B', error: { code: -32603, message: 'm', data: { originalCode: -32050 } } } as ResponseMessage,
      '"\\u0042"',
    );
    const out = rewriteBody(d, [{ target: second, message: replacement }])!.toString('utf8');
    assert.equal(
      out,
      '[{"jsonrpc":"2.0","id":1.0,"result":{"a":1e2}},{"jsonrpc":"2.0","id":"\\u0042","error":{"code":-32603,"message":"m","data":{"originalCode":-32050}}}]',
    );
    assert.ok(first);
  });

  test('in an SSE event, a batch whose kept messages have line breaks goes out as several data lines, read back whole', () => {
    const data =
      '[\n  {"jsonrpc": "2.0",\r\n "id": 1, "result": {}},\n  {"jsonrpc": "2.0", "id": 2, "error": {"code": -32050, "message": "m"}}\n]';
    const d = decodeJsonText(data);
    assert.ok(d.ok);
    const body = rewriteBody(d, [
      { target: d.payload.messages[1], message: { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'm' } } as ResponseMessage },
    ])!.toString('utf8');
    assert.match(body, /\n/);
    const event = encodeSseEvent(Buffer.from('event: message\nid: 9\ndata: x\n\n'), body);
    const parsed = parseBlock(event);
    assert.equal(parsed.id, '9');
    assert.deepEqual(JSON.parse(parsed.data!), [
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, error: { code: -32603, message: 'm' } },
    ]);
    assert.deepEqual(JSON.parse(parseBlock(sseEvent(body)).data!), JSON.parse(parsed.data!));
  });
});
