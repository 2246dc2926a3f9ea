// Relays an SSE body event by event: each complete event block is read, handed to onEvent, and
// written to the client before the next one: byte for byte, or as onEvent re-encoded it (when
// nothing can be rewritten: written first, read after). Nothing is held beyond the event in
// progress; an event over the size limit passes through unread.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { ProxyError } from '../errors.ts';
import { parseBlock, hasData } from '../codec/sse.ts';
import { SseSplitter, type SsePiece } from '../codec/sse-splitter.ts';
import { writeChunk } from './egress.ts';
import { toProxyError } from './upstream.ts';

export interface SseSummary {
  /** Complete events relayed. */
  events: number;
  /** Events over the size limit, relayed unread. */
  unaudited: number;
  bytes: number;
  /** Whether any event carried an id (a legacy stream that can be resumed). */
  sawEventId: boolean;
  /** Why the upstream stream broke, if it did. */
  error: ProxyError | undefined;
  /** The client went away before the stream ended. */
  clientGone: boolean;
}

export async function relaySse(
  body: Readable,
  res: ServerResponse,
  maxEventBytes: number,
  /** Read each event after it was written (nothing can be rewritten), so reading never delays it. */
  readAfterWrite: boolean,
  /** Reads an event with data; returns the bytes to send instead, if the event was rewritten. */
  onEvent: (data: string, size: number, raw: Buffer) => Buffer | undefined,
): Promise<SseSummary> {
  const summary: SseSummary = { events: 0, unaudited: 0, bytes: 0, sawEventId: false, error: undefined, clientGone: false };
  const splitter = new SseSplitter(maxEventBytes);

  const forward = async (pieces: SsePiece[]): Promise<boolean> => {
    // Events that arrived in one chunk leave in one write: a write per event cost a system call
    // each. Read-after-write events are read once their chunk is out.
    let corked = pieces.length > 1;
    if (corked) res.cork();
    let unread: Array<{ data: string; raw: Buffer }> = [];
    const flush = (): void => {
      if (corked) res.uncork();
      corked = false;
      for (const e of unread) onEvent(e.data, e.raw.length, e.raw);
      unread = [];
    };
    try {
      for (const piece of pieces) {
        let out = piece.raw;
        let data: string | undefined;
        if (piece.kind === 'block') {
          summary.events++;
          const event = parseBlock(piece.raw, summary.events === 1 && summary.bytes === 0);
          if (event.id !== undefined) summary.sawEventId = true;
          if (hasData(event)) data = event.data!;
          if (data !== undefined && !readAfterWrite) out = onEvent(data, piece.raw.length, piece.raw) ?? piece.raw;
        } else if (piece.last) {
          summary.unaudited++;
        }
        summary.bytes += out.length;
        const written = writeChunk(res, out);
        if (data !== undefined && readAfterWrite) unread.push({ data, raw: piece.raw });
        if (written !== true) {
          // The client is slow: what is buffered goes now, the rest waits for it to drain.
          const more = pieces.length > 1;
          flush();
          if (!(await written)) return false;
          if (more) res.cork();
          corked = more;
        }
      }
    } finally {
      flush();
    }
    return true;
  };

  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (!(await forward(splitter.push(chunk)))) {
        summary.clientGone = true;
        body.destroy();
        return summary;
      }
    }
    // A tail without its closing blank line is still a message that can be delivered.
    if (!(await forward(splitter.end()))) summary.clientGone = true;
  } catch (err) {
    summary.error = toProxyError(err);
  }
  return summary;
}
