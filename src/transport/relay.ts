// Moves an upstream body to the client. Bodies up to the audit limit are collected whole so the
// pipeline can read them; larger ones stream through as they come, unaudited, never held in memory.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { toProxyError } from './upstream.ts';
import { writeChunk } from './egress.ts';

export type Collected =
  | { complete: true; bytes: Buffer }
  /** Over the limit: `head` is what was read so far, `rest` the same stream, positioned after it. */
  | { complete: false; head: Buffer[]; rest: AsyncIterator<Buffer> };

export async function collectBody(body: Readable, limit: number): Promise<Collected> {
  const chunks: Buffer[] = [];
  let size = 0;
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  try {
    for (;;) {
      const { value, done } = await it.next();
      if (done) return { complete: true, bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) };
      chunks.push(value);
      size += value.length;
      if (size > limit) return { complete: false, head: chunks, rest: it };
    }
  } catch (err) {
    throw toProxyError(err);
  }
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
