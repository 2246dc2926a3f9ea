// The lines of one input (a file, or `-` for stdin), plain or gzip (told by its first bytes, so a
// rotated `.log.1.gz` and a renamed one both read), as a stream in bounded memory: a line longer
// than `maxLine` is skipped whole (OVERSIZE in its place), never held.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { LineSplitter } from '../codec/line-splitter.ts';

export const OVERSIZE = Symbol('oversize');
export const MAX_LINE = 16 * 1024 * 1024;

const isGzip = (chunk: Buffer): boolean => chunk.length >= 2 && chunk[0] === 0x1f && chunk[1] === 0x8b;

/** The bytes of a source, gunzipped when they are gzip; `onBytes` counts what was read from the source itself. */
async function* decodedChunks(source: string, onBytes: (n: number) => void): AsyncGenerator<Buffer> {
  const raw = source === '-' ? process.stdin : createReadStream(source);
  const chunks = (raw as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  // Two bytes tell gzip: a pipe may hand them over one at a time.
  let first = await chunks.next();
  if (first.done) return;
  onBytes(first.value.length);
  while (first.value.length < 2) {
    const next = await chunks.next();
    if (next.done) break;
    onBytes(next.value.length);
    first = { done: false, value: Buffer.concat([first.value, next.value]) };
  }
  async function* rest(): AsyncGenerator<Buffer> {
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      onBytes(next.value.length);
      yield next.value;
    }
  }
  if (!isGzip(first.value)) {
    yield first.value;
    yield* rest();
    return;
  }
  const input = Readable.from(
    (async function* () {
      yield first.value;
      yield* rest();
    })(),
  );
  const gunzip = createGunzip();
  input.once('error', (err) => gunzip.destroy(err));
  yield* input.pipe(gunzip) as AsyncIterable<Buffer>;
}

/** The lines of a source, without their line ends (`\r\n` too); OVERSIZE for a line over `maxLine` bytes. */
export async function* inputLines(
  source: string,
  onBytes: (n: number) => void = () => {},
  maxLine = MAX_LINE,
): AsyncGenerator<string | typeof OVERSIZE> {
  const ready: Array<string | typeof OVERSIZE> = [];
  // A whole line is decoded at once: a character split across chunks was joined by the splitter.
  const text = (bytes: Buffer) => bytes.toString('utf8').replace(/\r$/, '');
  const splitter = new LineSplitter(maxLine, {
    line: (bytes) => ready.push(text(bytes)),
    oversize: (_piece, last) => {
      if (last) ready.push(OVERSIZE);
    },
  });
  for await (const chunk of decodedChunks(source, onBytes)) {
    splitter.push(chunk);
    yield* ready.splice(0);
  }
  splitter.end();
  yield* ready.splice(0);
}

/** Why a source could not be read, in a few words. */
export function whyUnreadable(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'no such file';
  if (e.code === 'EISDIR') return 'it is a directory';
  if (e.code === 'EACCES') return 'permission denied';
  if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR') return `broken gzip (${e.message})`;
  return e.message;
}
