// content-coding.ts: which Content-Encoding values the proxy decodes, and the bounded decode.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { PassThrough } from 'node:stream';
import { codingOf, decodeBounded, decodedBody, isDecodeError, type Coding } from '../../src/transport/content-coding.ts';

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

describe('decodedBody', () => {
  const gzip = known('gzip');
  /** A gzip stream flushed after `text`, not ended (what a server streaming events has sent so far). */
  const flushed = (text: string): Buffer => zlib.gzipSync(text, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
  /** A body that sends `chunks`, then stays open until destroyed. */
  const idleBody = (...chunks: Buffer[]): PassThrough => {
    const body = new PassThrough();
    for (const chunk of chunks) body.write(chunk);
    return body;
  };
  const closed = (s: PassThrough): Promise<void> => (s.destroyed ? Promise.resolve() : new Promise((r) => s.once('close', () => r())));

  test('a body that breaks: what it sent is read out first, then its error', async () => {
    const body = new PassThrough();
    const decoded = decodedBody(body, gzip);
    body.write(flushed('event one\n\n'));
    // Broken once the chunk is read from it (as a socket's data is), while the decoder holds it.
    while (body.readableLength > 0) await new Promise((r) => setImmediate(r));
    body.destroy(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    let text = '';
    await assert.rejects(
      (async () => {
        for await (const chunk of decoded) text += String(chunk);
      })(),
      /other side closed/,
    );
    assert.equal(text, 'event one\n\n');
  });

  test('bytes that stop decoding fail the stream at once and destroy the body, though it sends nothing more', async () => {
    const body = idleBody(flushed('event one\n\n'), Buffer.alloc(64, 0xff));
    const decoded = decodedBody(body, gzip);
    await assert.rejects(
      (async () => {
        for await (const _ of decoded);
      })(),
      (err: Error) => isDecodeError(err),
    );
    await closed(body);
  });

  test('destroyed by its reader (the client left): the idle body is destroyed too', async () => {
    const body = idleBody(flushed('event one\n\n'));
    const decoded = decodedBody(body, gzip);
    for await (const _ of decoded) break;
    await closed(body);
  });

  test('a body that ends: the stream ends, in bytes', async () => {
    const body = new PassThrough();
    const decoded = decodedBody(body, gzip);
    body.end(zlib.gzipSync('a\n\nb\n\n'));
    const chunks: unknown[] = [];
    for await (const chunk of decoded) chunks.push(chunk);
    assert.ok(chunks.every((c) => Buffer.isBuffer(c)));
    assert.equal(Buffer.concat(chunks as Buffer[]).toString(), 'a\n\nb\n\n');
  });
});
