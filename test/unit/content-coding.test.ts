// content-coding.ts: which Content-Encoding values the proxy decodes, and the bounded decode.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { codingOf, decodeBounded, isDecodeError, type Coding } from '../../src/transport/content-coding.ts';

const known = (header: string): Extract<Coding, { kind: 'known' }> => {
  const c = codingOf(header);
  assert.equal(c.kind, 'known', header);
  return c as Extract<Coding, { kind: 'known' }>;
};

describe('codingOf', () => {
  test('no header, identity, or only identity in a list: identity', () => {
    for (const h of [undefined, 'identity', ' Identity ', 'identity, identity', ''])
      assert.deepEqual(codingOf(h), { kind: 'identity' }, String(h));
  });
  test('names are case-insensitive, x-gzip is gzip, lists are in the order applied', () => {
    assert.deepEqual(codingOf('GZIP'), { kind: 'known', name: 'GZIP', codings: ['gzip'] });
    assert.deepEqual(codingOf('x-gzip').kind, 'known');
    assert.deepEqual(codingOf('gzip, br'), { kind: 'known', name: 'gzip, br', codings: ['gzip', 'br'] });
    // Two Content-Encoding headers make one list (RFC 9110 section 5.3).
    assert.deepEqual(codingOf(['deflate', 'br']), { kind: 'known', name: 'deflate, br', codings: ['deflate', 'br'] });
  });
  test('one coding Node cannot undo makes the whole list unknown', () => {
    assert.deepEqual(codingOf('compress'), { kind: 'unknown', name: 'compress' });
    assert.deepEqual(codingOf('gzip, compress'), { kind: 'unknown', name: 'gzip, compress' });
    const zstd = typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress === 'function';
    assert.equal(codingOf('zstd').kind, zstd ? 'known' : 'unknown', `zstd where Node has it (${process.version})`);
  });
});

describe('decodeBounded', () => {
  const text = (n: number) => Buffer.alloc(n, 0x61);
  const CODINGS: Array<[string, (b: Buffer) => Buffer]> = [
    ['gzip', (b) => zlib.gzipSync(b)],
    ['deflate', (b) => zlib.deflateSync(b)],
    ['br', (b) => zlib.brotliCompressSync(b)],
    ['deflate, gzip', (b) => zlib.gzipSync(zlib.deflateSync(b))],
  ];
  const zstd = (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
  if (zstd) CODINGS.push(['zstd', (b) => zstd(b)]);
  for (const [header, encode] of CODINGS) {
    // 1000 bytes is under the synchronous cap, 300 KiB over it (inflate then finishes as a stream).
    for (const limit of [1000, 300 * 1024]) {
      test(`${header}, limit ${limit}: up to the limit decodes, one byte more is too large`, async () => {
        const at = await decodeBounded(encode(text(limit)), known(header), limit);
        assert.equal(at.kind, 'decoded');
        assert.ok(at.kind === 'decoded' && at.bytes.equals(text(limit)));
        assert.deepEqual(await decodeBounded(encode(text(limit + 1)), known(header), limit), { kind: 'too-large' });
      });
    }
    test(`${header}: bytes that are not in the coding are undecodable`, async () => {
      const d = await decodeBounded(Buffer.from('{"jsonrpc":"2.0"}'), known(header), 1 << 20);
      assert.equal(d.kind, 'undecodable');
      assert.ok(d.kind === 'undecodable' && isDecodeError(d.error), d.kind === 'undecodable' ? d.error.message : '');
    });
  }
  test('an empty body decodes to nothing, a truncated one to what arrived (as clients read them)', async () => {
    assert.deepEqual(await decodeBounded(Buffer.alloc(0), known('gzip'), 100), { kind: 'decoded', bytes: Buffer.alloc(0) });
    const gz = zlib.gzipSync(Buffer.from('{"jsonrpc":"2.0","id":1,"result":{}}'));
    const cut = await decodeBounded(gz.subarray(0, gz.length - 8), known('gzip'), 100);
    assert.equal(cut.kind, 'decoded');
  });
});

test('isDecodeError: zlib and brotli failures, not socket or upstream errors', () => {
  const zlibError = (() => {
    try {
      zlib.gunzipSync(Buffer.from('plain'));
    } catch (err) {
      return err;
    }
  })();
  const brotliError = (() => {
    try {
      zlib.brotliDecompressSync(Buffer.from('plain text, not brotli'));
    } catch (err) {
      return err;
    }
  })();
  assert.ok(isDecodeError(zlibError));
  assert.ok(isDecodeError(brotliError), String((brotliError as { code?: string }).code));
  const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', errno: -104 });
  assert.equal(isDecodeError(reset), false);
  assert.equal(isDecodeError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' })), false);
  assert.equal(isDecodeError(undefined), false);
});
