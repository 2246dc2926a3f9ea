// A client's request body with a Content-Encoding (gzip, deflate, br): decoded, bounded by the
// body limit, so the client's rules and blocks see what the server will read. The bytes forwarded
// stay the client's own; a coding the proxy cannot undo is refused with 415, never passed unread.
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ProxyError } from '../errors.ts';
import { codingOf } from './content-coding.ts';

type Decode = (buf: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>;

const DECODE: ReadonlyMap<string, Decode> = new Map([
  ['gzip', promisify(zlib.gunzip) as Decode],
  ['x-gzip', promisify(zlib.gunzip) as Decode],
  ['deflate', promisify(zlib.inflate) as Decode],
  ['br', promisify(zlib.brotliDecompress) as Decode],
]);

/** The body as the server will read it: `body` itself when it carries no coding. */
export async function decodedRequestBody(body: Buffer, header: string | string[] | undefined, maxBytes: number): Promise<Buffer> {
  const coding = codingOf(header);
  if (coding.kind === 'identity') return body;
  const codings = coding.kind === 'known' ? coding.codings : [];
  if (coding.kind === 'unknown' || !codings.every((c) => DECODE.has(c))) {
    throw new ProxyError('WARDEN_UNSUPPORTED_ENCODING', `Request Content-Encoding "${coding.name}" cannot be read by the proxy; send gzip, deflate, br or none`);
  }
  let out = body;
  try {
    // The last coding applied is undone first.
    for (const c of [...codings].reverse()) out = await DECODE.get(c)!(out, { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new ProxyError('WARDEN_BODY_TOO_LARGE', `Decoded request body exceeds the limit of ${maxBytes} bytes`);
    }
    throw new ProxyError('WARDEN_BAD_REQUEST', `Request body is not valid ${coding.name} data`, { cause: err });
  }
  return out;
}
