import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJson, decodeJsonText, type Decoded } from '../../src/codec/json-body.ts';

const bytes = (...b: number[]): Uint8Array => new Uint8Array(b);
const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const BOM = [0xef, 0xbb, 0xbf];
const PING = '{"jsonrpc":"2.0","id":1,"method":"ping"}';

function problem(d: Decoded): string {
  assert.equal(d.ok, false, `expected a problem, got ${JSON.stringify(d)}`);
  if (d.ok) throw new Error('unreachable');
  assert.equal(typeof d.detail, 'string');
  assert.ok(d.detail.length > 0, 'detail is not empty');
  return d.problem;
}

function ok(d: Decoded) {
  if (!d.ok) assert.fail(`expected ok, got ${d.problem}: ${d.detail}`);
  return d.payload;
}

describe('empty bodies', () => {
  test('no bytes, and whitespace-only bodies are empty', () => {
    assert.equal(problem(decodeJson(new Uint8Array(0))), 'empty');
    assert.equal(problem(decodeJson(utf8(' \r\n\t '))), 'empty');
    assert.equal(problem(decodeJsonText('')), 'empty');
    assert.equal(problem(decodeJsonText('   \n\n\t')), 'empty');
  });

  test('a body that is only a BOM is empty', () => {
    assert.equal(problem(decodeJson(bytes(...BOM))), 'empty');
    assert.equal(problem(decodeJson(bytes(...BOM, 0x20, 0x0a))), 'empty');
  });
});

describe('not UTF-8', () => {
  const cases: Array<[string, Uint8Array]> = [
    ['0xff', bytes(0xff)],
    ['a lone continuation byte', bytes(0x7b, 0x80, 0x7d)],
    ['a two-byte lead without continuation', bytes(0xc3, 0x28)],
    ['an overlong encoding of "/"', bytes(0xc0, 0xaf)],
    ['an encoded UTF-16 surrogate', bytes(0xed, 0xa0, 0x80)],
    ['a sequence truncated at the end', bytes(0x7b, 0x7d, 0xe2, 0x82)],
    ['a code point above U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80)],
    ['Latin-1 "é" inside JSON', bytes(...utf8('{"a":"'), 0xe9, ...utf8('"}'))],
  ];
  for (const [name, body] of cases) {
    test(`${name} is not-utf8`, () => {
      assert.equal(problem(decodeJson(body)), 'not-utf8');
    });
  }

  test('a failed decode leaves the shared decoder usable for the next body', () => {
    assert.equal(problem(decodeJson(bytes(0xe2, 0x82))), 'not-utf8');
    const p = ok(decodeJson(utf8(PING)));
    assert.equal(p.messages[0]!.kind, 'request');
    // and a truncated tail does not leak into the next decode
    assert.equal(problem(decodeJson(bytes(0x7b, 0xf0, 0x9f))), 'not-utf8');
    assert.equal(ok(decodeJson(utf8('{"jsonrpc":"2.0","method":"x"}'))).messages[0]!.kind, 'notification');
  });
});

describe('HTML', () => {
  for (const body of [
    '<!DOCTYPE html><html><body>502 Bad Gateway</body></html>',
    '<html>',
    '\n  <html><head></head></html>',
    '<?xml version="1.0"?><a/>',
  ]) {
    test(`${JSON.stringify(body.slice(0, 24))} is html`, () => {
      assert.equal(problem(decodeJsonText(body)), 'html');
      assert.equal(problem(decodeJson(utf8(body))), 'html');
    });
  }

  test('a BOM before HTML is still html', () => {
    assert.equal(problem(decodeJson(bytes(...BOM, ...utf8('<!DOCTYPE html>')))), 'html');
  });

  test('a JSON string containing HTML is JSON, not html', () => {
    const p = ok(decodeJsonText('"<html>"'));
    assert.equal(p.batch, false);
    assert.equal(p.messages[0]!.kind, 'invalid');
  });
});

describe('not JSON', () => {
  for (const body of [
    '{"jsonrpc":"2.0","id":1',
    '{"jsonrpc":"2.0","id":1,"method":"pi',
    '[{"jsonrpc":"2.0","id":1,"method":"ping"},',
    '{"a":1}}',
    "{'a':1}",
    'nul',
    'undefined',
    'NaN',
    '{"a":1}\n{"b":2}',
    'data: {"jsonrpc":"2.0"}',
  ]) {
    test(`${JSON.stringify(body)} is not-json with the parser's message`, () => {
      assert.equal(problem(decodeJsonText(body)), 'not-json');
      assert.equal(problem(decodeJson(utf8(body))), 'not-json');
    });
  }
});

describe('valid JSON', () => {
  test('a single message decodes, surrounding whitespace ignored', () => {
    const p = ok(decodeJsonText(`\r\n\t ${PING} \n`));
    assert.equal(p.batch, false);
    assert.equal(p.messages.length, 1);
    const m = p.messages[0]!;
    assert.equal(m.kind, 'request');
    if (m.kind === 'request') assert.equal(m.method, 'ping');
  });

  test('a batch decodes with batch: true and every element classified', () => {
    const p = ok(decodeJson(utf8(`[${PING},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)));
    assert.equal(p.batch, true);
    assert.deepEqual(
      p.messages.map((m) => m.kind),
      ['request', 'notification'],
    );
  });

  test('an empty array is an empty batch', () => {
    const p = ok(decodeJsonText('[]'));
    assert.equal(p.batch, true);
    assert.equal(p.messages.length, 0);
  });

  test('JSON that is not a message decodes to an invalid message', () => {
    for (const body of ['42', 'null', '"x"', '{}']) {
      const p = ok(decodeJsonText(body));
      assert.equal(p.batch, false);
      assert.equal(p.messages[0]!.kind, 'invalid');
    }
  });

  test('multi-byte UTF-8 text survives decoding', () => {
    const p = ok(decodeJson(utf8('{"jsonrpc":"2.0","id":"é😀","method":"naïve/✓"}')));
    const m = p.messages[0]!;
    assert.equal(m.kind, 'request');
    if (m.kind !== 'request') return;
    assert.equal(m.id, 'é😀');
    assert.equal(m.method, 'naïve/✓');
  });

  test('a UTF-8 BOM before valid JSON is dropped by the decoder (ignoreBOM: false)', () => {
    // TextDecoder with ignoreBOM:false strips one leading BOM instead of returning it as U+FEFF.
    assert.equal(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes(...BOM, 0x7b, 0x7d)), '{}');
    const p = ok(decodeJson(bytes(...BOM, ...utf8(PING))));
    assert.equal(p.batch, false);
    assert.equal(p.messages[0]!.kind, 'request');
  });

  test('a BOM-prefixed batch is still a batch', () => {
    const p = ok(decodeJson(bytes(...BOM, ...utf8(`[${PING}]`))));
    assert.equal(p.batch, true);
    assert.equal(p.messages.length, 1);
  });

  test('a U+FEFF at the start of text is trimmed like whitespace', () => {
    const p = ok(decodeJsonText(`\uFEFF${PING}`));
    assert.equal(p.messages[0]!.kind, 'request');
  });

  test('the id and id type survive: 1 and "1" stay apart', () => {
    const p = ok(decodeJsonText('[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":"1","result":{}}]'));
    assert.deepEqual(
      p.messages.map((m) => (m.kind === 'result' ? m.id : undefined)),
      [1, '1'],
    );
  });
});
