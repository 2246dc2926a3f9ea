// The Content-Encoding of an upstream response: whether the proxy can undo it to judge the body,
// and the streams that do. A coding Node cannot decode is `unknown`: such a body is relayed as it
// came and not judged (read as text it would look like garbage).
import zlib from 'node:zlib';
import * as streams from 'node:stream';
import { pipeline, type Duplex, type Readable } from 'node:stream';

export type Coding =
  | { kind: 'identity' }
  /** `name` is the header as sent; `codings` in the order the server applied them. */
  | { kind: 'known'; name: string; codings: readonly string[] }
  | { kind: 'unknown'; name: string };

// stream.compose (Node 16.9, a stable API since 23) is missing from @types/node 20.
const compose = (streams as unknown as { compose: (...stages: Duplex[]) => Duplex }).compose;

const IDENTITY: Coding = { kind: 'identity' };

// As lenient as the clients (undici's fetch, curl): a body cut short decodes to what arrived, as
// it does for the client, and is then judged as what it is (not JSON); bytes that are not the
// coding at all fail. Flushing on every write hands a server's flushed SSE event on at once.
const ZLIB = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI = { flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };

// zstd: from Node 22.15/23.8; Node 20 has none, so there it is an unknown coding.
const zstd = (zlib as { createZstdDecompress?: () => Duplex }).createZstdDecompress;

const DECODERS: ReadonlyMap<string, () => Duplex> = new Map([
  ['gzip', () => zlib.createGunzip(ZLIB)],
  // RFC 9110 section 8.4.1.3: a recipient should treat x-gzip as gzip.
  ['x-gzip', () => zlib.createGunzip(ZLIB)],
  // RFC 9110 "deflate" is the zlib format (what compression middleware sends); raw deflate fails.
  ['deflate', () => zlib.createInflate(ZLIB)],
  ['br', () => zlib.createBrotliDecompress(BROTLI)],
  ...(zstd ? [['zstd', () => zstd()] as const] : []),
]);

/** Reads a Content-Encoding header; a list (`gzip, br`) is known when every coding in it is. */
export function codingOf(header: string | string[] | undefined): Coding {
  if (header === undefined) return IDENTITY;
  const name = Array.isArray(header) ? header.join(', ') : header;
  const codings = name
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return IDENTITY;
  return codings.every((c) => DECODERS.has(c)) ? { kind: 'known', name, codings } : { kind: 'unknown', name };
}

/** One stream that undoes every coding, the last applied first. */
export function decoderFor(coding: Extract<Coding, { kind: 'known' }>): Duplex {
  const stages = coding.codings.map((c) => DECODERS.get(c)!()).reverse();
  return stages.length === 1 ? stages[0]! : compose(...stages);
}

/** The body decoded, as one stream: destroying it destroys the body, whose own errors come through as they are. */
export function decodedBody(body: Readable, coding: Extract<Coding, { kind: 'known' }>): Readable {
  // The callback only keeps the failure from going unhandled: the returned stream carries it.
  return pipeline(body, decoderFor(coding), () => {});
}

/** Whether an error is a decoder's (the data is not in its coding), not the upstream's or the socket's. */
export function isDecodeError(err: unknown): err is Error & { code: string } {
  const { code, errno } = (err ?? {}) as { code?: unknown; errno?: unknown };
  // zlib's codes are Z_* (Z_DATA_ERROR, Z_BUF_ERROR...), brotli's ERR__ERROR_FORMAT_* and ERR_BROTLI_*, zstd's ERR_ZSTD_*.
  return typeof errno === 'number' && typeof code === 'string' && /^(Z_|ERR__ERROR_|ERR_BROTLI|ERR_ZSTD)/.test(code);
}

/** What a decode failure is called in logs and findings: the coding and zlib's reason. */
export const undecodableDetail = (coding: Coding, err: Error): string =>
  `${coding.kind === 'identity' ? 'identity' : coding.name} data that does not decode (${err.message})`;
