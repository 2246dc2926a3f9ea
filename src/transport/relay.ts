// Moves an upstream body to the client. Bodies up to the audit limit are collected whole so the
// pipeline can read them; larger ones stream through as they come, unaudited, never held in memory.
// A body with a Content-Encoding is collected as it came (the same limit), then decoded with the
// limit bounding what it decodes to; its bytes as they came are kept to forward.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { decodeBounded, type Coding } from './content-coding.ts';
import { toProxyError } from './upstream.ts';
import { writeChunk } from './egress.ts';

export type Collected =
  /** `bytes` is what the pipeline reads (decoded), `wire` what the server sent (the same buffer without a coding). */
  | { kind: 'complete'; bytes: Buffer; wire: Buffer }
  /**
   * Not read: over the limit (as it came, or decoded), or in a coding the proxy cannot undo.
   * `head` is what was read so far, `rest` the same stream, positioned after it.
   */
  | { kind: 'unread'; reason: 'too-large' | 'unknown-coding'; head: Buffer[]; rest: AsyncIterator<Buffer> }
  /** Not in the coding the server named; `error` is the decoder's. */
  | { kind: 'undecodable'; error: Error; wire: Buffer };

/** The rest of a body that was read to its end. */
const ENDED: AsyncIterator<Buffer> = { next: async () => ({ done: true, value: undefined }) };

/** Collects a body in the upstream's Content-Encoding, checked once: identity bodies take the plain path. */
export async function collect(body: Readable, coding: Coding, limit: number): Promise<Collected> {
  if (coding.kind === 'identity') return collectBody(body, limit);
  if (coding.kind === 'unknown')
    return { kind: 'unread', reason: 'unknown-coding', head: [], rest: body[Symbol.asyncIterator]() as AsyncIterator<Buffer> };
  const raw = await collectBody(body, limit);
  if (raw.kind !== 'complete') return raw;
  const { wire } = raw;
  const decoded = await decodeBounded(wire, coding, limit);
  if (decoded.kind === 'decoded') return { kind: 'complete', bytes: decoded.bytes, wire };
  if (decoded.kind === 'undecodable') return { kind: 'undecodable', error: decoded.error, wire };
  return { kind: 'unread', reason: 'too-large', head: [wire], rest: ENDED };
}

export async function collectBody(body: Readable, limit: number): Promise<Collected> {
  const chunks: Buffer[] = [];
  let size = 0;
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    for (;;) {
      const { value, done } = await it.next();
      if (done) {
        const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
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

/** Writes the head, then the rest of the stream, with backpressure: whether it all went out (the client may leave), and the bytes sent. */
export async function streamRest(
  res: ServerResponse,
  head: Buffer[],
  rest: AsyncIterator<Buffer>,
): Promise<{ delivered: boolean; bytes: number }> {
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
