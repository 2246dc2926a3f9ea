// Moves an upstream body to the client. Bodies up to the audit limit are collected whole so the
// pipeline can read them; larger ones stream through as they come, unaudited, never held in memory.
// A body with a Content-Encoding is decoded as it is collected, and the limit bounds what it
// decodes to (a small body may inflate to gigabytes); its bytes as they came are kept to forward.
import type { ServerResponse } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import { decoderFor, type Coding } from './content-coding.ts';
import { toProxyError } from './upstream.ts';
import { writeChunk } from './egress.ts';

/** Bytes read so far, and the same stream positioned after them: to relay as they came. */
interface Unread {
  head: Buffer[];
  rest: AsyncIterator<Buffer>;
}

export type Collected =
  /** `bytes` is what the pipeline reads (decoded), `wire` what the server sent (the same buffer without a coding). */
  | { kind: 'complete'; bytes: Buffer; wire: Buffer }
  /** Not read: over the limit (raw or decoded), or in a coding the proxy cannot undo. */
  | ({ kind: 'unread'; reason: 'too-large' | 'unknown-coding' } & Unread)
  /** The bytes are not in the coding the server named; `error` is the decoder's. */
  | ({ kind: 'undecodable'; error: Error } & Unread);

const concat = (chunks: Buffer[], size: number): Buffer => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));

/** Collects a body in the upstream's Content-Encoding, checked once: identity bodies take the plain path. */
export function collect(body: Readable, coding: Coding, limit: number): Promise<Collected> {
  if (coding.kind === 'identity') return collectBody(body, limit);
  const rest = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  if (coding.kind === 'unknown') return Promise.resolve({ kind: 'unread', reason: 'unknown-coding', head: [], rest });
  return collectDecoded(rest, decoderFor(coding), limit);
}

export async function collectBody(body: Readable, limit: number): Promise<Collected> {
  const chunks: Buffer[] = [];
  let size = 0;
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    for (;;) {
      const { value, done } = await it.next();
      if (done) {
        const bytes = concat(chunks, size);
        return { kind: 'complete', bytes, wire: bytes };
      }
      chunks.push(value);
      size += value.length;
      if (size > limit) return { kind: 'unread', reason: 'too-large', head: chunks, rest: it };
    }
  } catch (err) {
    throw toProxyError(err);
  }
}

/**
 * Feeds the body to the decoder chunk by chunk and stops as soon as either side passes the limit.
 * The decoder honours backpressure inside a chunk (it stops once its output is not read), so a
 * decompression bomb costs at most the limit plus one decoder buffer.
 */
async function collectDecoded(it: AsyncIterator<Buffer>, decoder: Duplex, limit: number): Promise<Collected> {
  const wire: Buffer[] = [];
  let wireSize = 0;
  const out: Buffer[] = [];
  let outSize = 0;
  let failure: Error | undefined;
  let stop!: () => void;
  // Settles when the decoder fails or its output passes the limit; whatever is pending then stays so.
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  decoder.on('data', (chunk: Buffer) => {
    out.push(chunk);
    outSize += chunk.length;
    if (outSize > limit) {
      decoder.pause();
      stop();
    }
  });
  decoder.on('error', (err: Error) => {
    failure = err;
    stop();
  });
  const ended = new Promise<void>((resolve) => decoder.once('end', resolve));
  const unread = (): Collected => {
    decoder.destroy();
    if (failure) return { kind: 'undecodable', error: failure, head: wire, rest: it };
    return { kind: 'unread', reason: 'too-large', head: wire, rest: it };
  };
  try {
    for (;;) {
      const { value, done } = await it.next();
      if (done) break;
      wire.push(value);
      wireSize += value.length;
      if (wireSize > limit) return unread();
      await Promise.race([new Promise<void>((resolve) => decoder.write(value, () => resolve())), stopped]);
      if (failure || outSize > limit) return unread();
    }
  } catch (err) {
    decoder.destroy();
    throw toProxyError(err);
  }
  decoder.end();
  await Promise.race([ended, stopped]);
  if (failure || outSize > limit) return unread();
  return { kind: 'complete', bytes: concat(out, outSize), wire: concat(wire, wireSize) };
}

/** Writes the head, then the rest of the stream, with backpressure: whether it all went out (the client may leave), and the bytes sent. */
export async function streamRest(res: ServerResponse, head: Buffer[], rest: AsyncIterator<Buffer>): Promise<{ delivered: boolean; bytes: number }> {
  let bytes = 0;
  const send = async (chunk: Buffer): Promise<boolean> => {
    bytes += chunk.length;
    const w = writeChunk(res, chunk);
    return w === true || (await w);
  };
  for (const chunk of head) if (!(await send(chunk))) return { delivered: false, bytes };
  try {
    for (;;) {
      const { value, done } = await rest.next();
      if (done) return { delivered: true, bytes };
      if (!(await send(value))) return { delivered: false, bytes };
    }
  } catch (err) {
    throw toProxyError(err);
  }
}
