// The lines of one input (a file, or `-` for stdin), plain or gzip (told by its first bytes, so a
// rotated `.log.1.gz` and a renamed one both read), as a stream in bounded memory and bounded CPU
// per byte read: a line too long is skipped whole (OVERSIZE in its place), never held; a gzip bomb
// and an input of too many lines stop at their limits (INPUT_BOUNDS).
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { LineSplitter } from '../codec/line-splitter.ts';
import { INPUT_BOUNDS } from '../config/defaults.ts';

export const OVERSIZE = Symbol('oversize');

export interface InputLimits {
  /** A line over this many bytes is skipped whole (OVERSIZE in its place). */
  lineBytes: number;
  /** A gzip input stops once it decodes to more than this many times the bytes read... */
  ratio: number;
  /** ...past this many decoded bytes (a small file always reads whole). */
  ratioFloorBytes: number;
  /** An input stops past this many lines. */
  lines: number;
}

/** A line's text, OVERSIZE for a line too long to read, or a count of empty lines in a row. */
export type InputLine = string | typeof OVERSIZE | number;

/** An input stopped at one of its limits: what was read before it still counts. */
export class InputLimitError extends Error {}

const isGzip = (chunk: Buffer): boolean => chunk.length >= 2 && chunk[0] === 0x1f && chunk[1] === 0x8b;
const mib = (n: number): string => `${(n / (1024 * 1024)).toFixed(1)} MiB`;

/** The bytes of a source, gunzipped when they are gzip; `onBytes` counts what was read from the source itself. */
async function* decodedChunks(source: string, onBytes: (n: number) => void, limits: InputLimits): AsyncGenerator<Buffer> {
  const raw = source === '-' ? process.stdin : createReadStream(source);
  const chunks = (raw as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let read = 0;
  const count = (n: number) => {
    read += n;
    onBytes(n);
  };
  // Two bytes tell gzip: a pipe may hand them over one at a time.
  let first = await chunks.next();
  if (first.done) return;
  count(first.value.length);
  while (first.value.length < 2) {
    const next = await chunks.next();
    if (next.done) break;
    count(next.value.length);
    first = { done: false, value: Buffer.concat([first.value, next.value]) };
  }
  async function* rest(): AsyncGenerator<Buffer> {
    for (;;) {
      const next = await chunks.next();
      if (next.done) return;
      count(next.value.length);
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
  let decoded = 0;
  try {
    for await (const chunk of input.pipe(gunzip) as AsyncIterable<Buffer>) {
      decoded += chunk.length;
      if (decoded > limits.ratioFloorBytes && decoded > read * limits.ratio) {
        throw new InputLimitError(
          `it decompresses to more than ${limits.ratio} times its size (${mib(decoded)} from ${mib(read)}), a decompression bomb; read stopped there`,
        );
      }
      yield chunk;
    }
  } finally {
    input.destroy();
    gunzip.destroy();
  }
}

/**
 * The lines of a source, without their line ends (`\r\n` too), a chunk's worth at a time (one
 * await per chunk, not per line); OVERSIZE for a line over `limits.lineBytes`; a run of empty
 * lines as their count (a file of nothing but line feeds costs a scan). Throws InputLimitError
 * past a limit, after the lines before it.
 */
export async function* inputLineBatches(
  source: string,
  onBytes: (n: number) => void = () => {},
  limits: InputLimits = INPUT_BOUNDS,
): AsyncGenerator<InputLine[]> {
  let ready: InputLine[] = [];
  let lines = 0;
  // A whole line is decoded at once: a character split across chunks was joined by the splitter.
  const text = (bytes: Buffer) => (bytes.length === 0 ? '' : bytes.toString('utf8').replace(/\r$/, ''));
  const splitter = new LineSplitter(limits.lineBytes, {
    line: (bytes) => ready.push(text(bytes)),
    blanks: (n) => ready.push(n),
    oversize: (_piece, last) => {
      if (last) ready.push(OVERSIZE);
    },
  });
  let stopped = false;
  const take = (): InputLine[] => {
    const batch = ready;
    ready = [];
    for (let i = 0; i < batch.length; i++) {
      const item = batch[i]!;
      const n = typeof item === 'number' ? item : 1;
      if (lines + n > limits.lines) {
        stopped = true;
        if (typeof item === 'number' && limits.lines > lines) batch[i++] = limits.lines - lines;
        batch.length = i;
        lines = limits.lines;
        break;
      }
      lines += n;
    }
    return batch;
  };
  const over = () => new InputLimitError(`it has more than ${limits.lines} lines; read stopped there`);
  for await (const chunk of decodedChunks(source, onBytes, limits)) {
    splitter.push(chunk);
    const batch = take();
    if (batch.length > 0) yield batch;
    if (stopped) throw over();
  }
  splitter.end();
  const batch = take();
  if (batch.length > 0) yield batch;
  if (stopped) throw over();
}

/** Why a source could not be read, in a few words. */
export function whyUnreadable(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'ENOENT') return 'no such file';
  if (e.code === 'EISDIR') return 'it is a directory';
  if (e.code === 'EACCES') return 'permission denied';
  if (err instanceof InputLimitError) return err.message;
  if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR') return `broken gzip (${e.message})`;
  return e.message;
}
