// The Content-Encoding of an upstream response: whether the proxy can undo it to judge the body,
// and how, bounded by what the body decodes to. A coding Node cannot decode is `unknown`: such a
// body is relayed as it came and not judged (read as text it would look like garbage).
import zlib from 'node:zlib';
import * as streams from 'node:stream';
import { PassThrough, type Duplex, type Readable } from 'node:stream';

export type Coding =
  | { kind: 'identity' }
  /** `name` is the header as sent; `codings` in the order the server applied them. */
  | { kind: 'known'; name: string; codings: readonly string[] }
  | { kind: 'unknown'; name: string };

type Known = Extract<Coding, { kind: 'known' }>;

// stream.compose (Node 16.9, a stable API since 23) is missing from @types/node 20.
type Stage = Duplex | AsyncIterable<Buffer> | ((source: AsyncIterable<Buffer>) => AsyncIterable<Buffer>);
const compose = (streams as unknown as { compose: (...stages: Stage[]) => Duplex }).compose;

const IDENTITY: Coding = { kind: 'identity' };

// As lenient as the clients (undici's fetch, curl): a body cut short decodes to what arrived, as
// it does for the client, and is then judged as what it is (not JSON); bytes that are not the
// coding at all fail. Flushing on every write hands a server's flushed SSE event on at once.
const ZLIB = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
const BROTLI = { flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH };

interface Decoder {
  stream(): Duplex;
  /**
   * One synchronous call, output capped (zlib stops once it passes the cap). Only where the work
   * before the cap is bounded: inflate's is. Brotli's is not (it fills its window first: 8 ms for
   * a 470-byte bomb with the default 4 MiB window, 40 ms with 16 MiB), so br always streams.
   */
  sync?(bytes: Buffer, maxOutputLength: number): Buffer;
}

const gzip: Decoder = {
  stream: () => zlib.createGunzip(ZLIB),
  sync: (bytes, maxOutputLength) => zlib.gunzipSync(bytes, { ...ZLIB, maxOutputLength }),
};

// zstd: from Node 22.15/23.8; Node 20 has none, so there it is an unknown coding. Always a stream:
// its window may be up to 128 MiB, like brotli's filled before any output cap applies.
const zstd = (zlib as { createZstdDecompress?: (options: object) => Duplex }).createZstdDecompress;
const ZSTD_FLUSH = (zlib.constants as { ZSTD_e_flush?: number }).ZSTD_e_flush;

const DECODERS: ReadonlyMap<string, Decoder> = new Map([
  ['gzip', gzip],
  // RFC 9110 section 8.4.1.3: a recipient should treat x-gzip as gzip.
  ['x-gzip', gzip],
  // RFC 9110 "deflate" is the zlib format (what compression middleware sends); raw deflate fails.
  [
    'deflate',
    {
      stream: () => zlib.createInflate(ZLIB),
      sync: (bytes: Buffer, maxOutputLength: number) => zlib.inflateSync(bytes, { ...ZLIB, maxOutputLength }),
    },
  ],
  ['br', { stream: () => zlib.createBrotliDecompress(BROTLI) }],
  ...(zstd ? [['zstd', { stream: () => zstd({ flush: ZSTD_FLUSH, finishFlush: ZSTD_FLUSH }) }] as const] : []),
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

/** The decoders of a coding, the last one applied first. */
const decodersOf = (coding: Known): Decoder[] => coding.codings.map((c) => DECODERS.get(c)!).reverse();

/** One stream that undoes every coding. */
export function decoderFor(coding: Known): Duplex {
  const stages = decodersOf(coding).map((d) => d.stream());
  return stages.length === 1 ? stages[0]! : compose(...stages);
}

/**
 * The body decoded, as one stream: destroying it, or bytes that stop decoding, destroy the body.
 * When the body breaks, what it sent before is decoded and read out first, then the stream fails
 * with the body's error: the decoder works off the thread, and a break that came while it still
 * held bytes (they arrive together) lost events that had come whole.
 */
export function decodedBody(body: Readable, coding: Known): Readable {
  let broken: { error: unknown } | undefined;
  async function* untilBroken(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) yield chunk;
    } catch (error) {
      // The decoder ends on what it has (a cut decodes to what arrived: ZLIB's finishFlush).
      broken = { error };
    }
  }
  async function* thenBroken(decoded: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    yield* decoded;
    if (broken) throw broken.error;
  }
  // A stream of bytes out (not of objects). It closes when the stream ends, fails (bytes that stop
  // decoding too: compose destroys every stage) or is destroyed, and then ends a body that is
  // idle: the generator reading it would otherwise wait for its next chunk.
  const out = new PassThrough();
  out.once('close', () => body.destroy());
  return compose(untilBroken(), decoderFor(coding), thenBroken, out);
}

export type Decoding =
  | { kind: 'decoded'; bytes: Buffer }
  /** It decodes to more than the limit: the decoding stopped there. */
  | { kind: 'too-large' }
  | { kind: 'undecodable'; error: Error };

/**
 * Most answers decode in one synchronous call: ~10 µs of CPU where a zlib stream costs ~75 µs in
 * thread-pool round trips (a 2.6 KB body, measured in-process).
 */
const SYNC_OUTPUT_BYTES = 256 * 1024;
const SLICE = 64 * 1024;

/** Decodes a whole body, holding at most `limit` decoded bytes (a small body may inflate to gigabytes). */
export async function decodeBounded(wire: Buffer, coding: Known, limit: number): Promise<Decoding> {
  const decoders = decodersOf(coding);
  const cap = Math.min(limit, SYNC_OUTPUT_BYTES);
  if (decoders.every((d) => d.sync)) {
    try {
      let bytes = wire;
      for (const d of decoders) bytes = d.sync!(bytes, cap);
      return { kind: 'decoded', bytes };
    } catch (err) {
      if (isDecodeError(err)) return { kind: 'undecodable', error: err };
      if ((err as { code?: unknown }).code !== 'ERR_BUFFER_TOO_LARGE') throw err;
      if (limit <= cap) return { kind: 'too-large' };
    }
  }
  return decodeStreaming(wire, decoderFor(coding), limit);
}

/**
 * Feeds the body to the decoder a slice at a time and stops as soon as the output passes the
 * limit. The decoder honours backpressure inside a slice (it stops once its output is not read),
 * so a bomb costs at most the limit plus one decoder buffer.
 */
async function decodeStreaming(wire: Buffer, decoder: Duplex, limit: number): Promise<Decoding> {
  const out: Buffer[] = [];
  let size = 0;
  let failure: Error | undefined;
  let stop!: () => void;
  // Settles on the decoder's end, its failure, or its output passing the limit.
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  decoder.on('data', (chunk: Buffer) => {
    out.push(chunk);
    size += chunk.length;
    if (size > limit) {
      decoder.pause();
      stop();
    }
  });
  decoder.on('error', (err: Error) => {
    failure = err;
    stop();
  });
  decoder.once('end', stop);
  const over = (): boolean => failure !== undefined || size > limit;
  for (let at = 0; at < wire.length && !over(); at += SLICE) {
    await Promise.race([new Promise<void>((resolve) => decoder.write(wire.subarray(at, at + SLICE), () => resolve())), stopped]);
  }
  if (!over()) {
    decoder.end();
    await stopped;
  }
  decoder.destroy();
  if (failure) return { kind: 'undecodable', error: failure };
  if (size > limit) return { kind: 'too-large' };
  return { kind: 'decoded', bytes: out.length === 1 ? out[0]! : Buffer.concat(out, size) };
}

/** Whether an error is a decoder's (the data is not in its coding), not the upstream's or the socket's. */
export function isDecodeError(err: unknown): err is Error & { code: string } {
  const { code, errno } = (err ?? {}) as { code?: unknown; errno?: unknown };
  // zlib's codes are Z_* (Z_DATA_ERROR, Z_BUF_ERROR...), brotli's ERR__ERROR_FORMAT_* and ERR_BROTLI_*, zstd's ZSTD_error_*.
  return typeof errno === 'number' && typeof code === 'string' && /^(Z_|ZSTD_error_|ERR__ERROR_|ERR_BROTLI)/.test(code);
}

/** What a decode failure is called in logs and findings: the coding and zlib's reason. */
export const undecodableDetail = (coding: Coding, err: Error): string =>
  `${coding.kind === 'identity' ? 'identity' : coding.name} data that does not decode (${err.message})`;
