// Relays an SSE body event by event: each complete event block is read, handed to onEvent, and
// written to the client before the next one: byte for byte, or as onEvent re-encoded it (when
// nothing can be rewritten: written first, read after). Nothing is held beyond the event in
// progress; an event over the size limit passes through unread. What cannot be part of an event
// (comment lines before a block's first field, keep-alives) is relayed as soon as its line is
// complete, without waiting for a blank line.
//
// A compressed stream is relayed in one of two ways. When events may be rewritten (enforce) the
// caller hands relaySse the decoded stream and sends it without Content-Encoding: an event can
// only be replaced in the clear. When they are only read (audit), mirrorSse sends the server's
// chunks as they came and reads a decoded copy.
import type { ServerResponse } from 'node:http';
import type { Duplex, Readable } from 'node:stream';
import type { StreamAnswer } from '../engine/plans.ts';
import type { ProxyError } from '../errors.ts';
import { parseBlock, hasData, type SseEvent } from '../codec/sse.ts';
import { SseRelaySplitter, type SseRelayPiece } from '../codec/sse-splitter.ts';
import { isDecodeError } from './content-coding.ts';
import { sseEvent } from '../rewrite/encode.ts';
import { answerText, writeChunk } from './egress.ts';
import { toProxyError } from './upstream.ts';

export interface SseSummary {
  /** Complete events relayed. */
  events: number;
  /** Events over the size limit, relayed unread (or withheld, see `withheld`). */
  unaudited: number;
  /** Of those, the events not relayed at all: the policy blocks what it cannot read. */
  withheld: number;
  bytes: number;
  /** Whether any event carried an id (a legacy stream that can be resumed). */
  sawEventId: boolean;
  /** Why the upstream stream broke, if it did. */
  error: ProxyError | undefined;
  /** The decoder's error when the stream's bytes stopped decoding (the rest, if any, was not read). */
  undecodable: Error | undefined;
  /** The client went away before the stream ended. */
  clientGone: boolean;
  /**
   * Where the client's copy of the stream stops when not at an event's end: inside an event the
   * server never finished ('event': at a line's start, 'line': in the middle of one). Set only by
   * relaySse (mirrorSse's client copy is in the server's coding: nothing can be appended to it).
   */
  cutInside: 'event' | 'line' | undefined;
}

/** The event type a cut-off event is closed under: MCP clients read only `message` events (and untyped ones). */
export const CUT_EVENT = 'mcp-warden-truncated';

/**
 * What to write before an event of the proxy's own so that the client reads it on its own: the
 * event the server left unfinished is ended and closed under CUT_EVENT, which clients ignore.
 * Empty when the stream stopped at an event's end.
 */
export function closeCut(summary: SseSummary): string {
  if (summary.cutInside === undefined) return '';
  return `${summary.cutInside === 'line' ? '\n' : ''}event: ${CUT_EVENT}\n\n`;
}

/** The bytes that end a stream with answers of the proxy's own: one event each, after closing what the server left unfinished. */
export function answerEvents(summary: SseSummary, answers: readonly StreamAnswer[]): Buffer {
  // A decided message goes out as the encoder writes it: with the request's id token (rewrite/encode.ts withIdToken).
  const events = answers.map((a) => sseEvent(answerText(a)));
  const cut = closeCut(summary);
  return Buffer.concat(cut === '' ? events : [Buffer.from(cut), ...events]);
}

const EMPTY = Buffer.alloc(0);
const LF = 0x0a;
const CR = 0x0d;

/** Where the client's stream stops after `piece` (`tail`: the stream's end returned it, maybe unterminated). */
function cutAfter(piece: SseRelayPiece, tail: boolean, before: SseSummary['cutInside']): SseSummary['cutInside'] {
  const raw = piece.raw;
  if (raw.length === 0) return before;
  const last = raw[raw.length - 1];
  const lineEnded = last === LF || last === CR;
  // Comment lines open no event; a block pushed whole (or an oversize one's last piece) closed its own.
  if (piece.kind === 'comment') return lineEnded ? undefined : 'line';
  if (!tail && (piece.kind === 'block' || piece.last)) return undefined;
  return lineEnded ? 'event' : 'line';
}

/** What a piece of the stream is to the reader: an event's data, if it has any; `foreign`: a block of a page that is no SSE. */
interface ReadPiece {
  data: string | undefined;
  foreign: boolean;
}

const NOTHING: ReadPiece = { data: undefined, foreign: false };

/** A block that sets no field at all (no data, event, id, retry, comment): no SSE client reads anything of it. */
const fieldless = (e: SseEvent): boolean =>
  e.data === undefined && e.event === undefined && e.id === undefined && e.retry === undefined && e.comments.length === 0;

/**
 * Event bookkeeping for one stream: counts what each piece is and returns an event's data, if it
 * has any. A fieldless block that opens with `<` is an HTML (or XML) page sent as the stream (an
 * error page behind a text/event-stream header): its text is read as the data of an event, so it
 * is judged as the broken answer it is, and the fieldless blocks after it are the rest of it.
 */
function eventReader(summary: SseSummary): (piece: SseRelayPiece) => ReadPiece {
  let before = 0; // bytes of the stream ahead of the piece
  let page = false;
  return (piece) => {
    const streamStart = before === 0;
    before += piece.raw.length;
    if (piece.kind === 'comment') return NOTHING;
    if (piece.kind === 'oversize') {
      if (piece.last) summary.unaudited++;
      return NOTHING;
    }
    summary.events++;
    const event = parseBlock(piece.raw, streamStart);
    if (event.id !== undefined) summary.sawEventId = true;
    if (!fieldless(event)) return { data: hasData(event) ? event.data! : undefined, foreign: false };
    if (page) return { data: undefined, foreign: true };
    const text = piece.raw.toString('utf8').replace(/^\uFEFF/, '');
    if (!text.trimStart().startsWith('<')) return NOTHING;
    page = true;
    return { data: text, foreign: true };
  };
}

const emptySummary = (): SseSummary => ({
  events: 0,
  unaudited: 0,
  withheld: 0,
  bytes: 0,
  sawEventId: false,
  error: undefined,
  undecodable: undefined,
  clientGone: false,
  cutInside: undefined,
});

/** How a stream failed: its bytes stopped decoding, or the upstream broke it. */
function failed(summary: SseSummary, err: unknown): void {
  if (isDecodeError(err)) summary.undecodable = err;
  else summary.error = toProxyError(err);
}

export async function relaySse(
  body: Readable,
  res: ServerResponse,
  maxEventBytes: number,
  /** Read each event after it was written (nothing can be rewritten), so reading never delays it. */
  readAfterWrite: boolean,
  /** Reads an event with data; returns the bytes to send instead, if the event was rewritten. */
  onEvent: (data: string, size: number, raw: Buffer) => Buffer | undefined,
  /** Under a policy that blocks unaudited-response: an event over the size limit is not relayed at all. */
  withholdOversize = false,
  /** Sees each event before it is written, in any mode: bytes returned go out in its place, and onEvent does not read it (a legacy `endpoint` event is routing, not a message). */
  reroute?: (data: string, raw: Buffer) => Buffer | undefined,
): Promise<SseSummary> {
  const summary = emptySummary();
  const splitter = new SseRelaySplitter(maxEventBytes);
  const read = eventReader(summary);
  let pageReplaced = false;

  const forward = async (pieces: SseRelayPiece[], tail = false): Promise<boolean> => {
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
        if (withholdOversize && piece.kind === 'oversize') {
          // Nothing of it reaches the client, so the stream stays at an event's end.
          read(piece);
          if (piece.last) summary.withheld++;
          continue;
        }
        const { data: read0, foreign } = read(piece);
        // The rest of a page that was replaced (enforce) goes with it: no client reads any of it.
        if (foreign && read0 === undefined && pageReplaced) continue;
        let out = piece.raw;
        let data = read0;
        const rerouted = data === undefined ? undefined : reroute?.(data, piece.raw);
        if (rerouted) {
          out = rerouted;
          data = undefined;
        }
        if (data !== undefined && !readAfterWrite) {
          // A page's lines are not the event's own fields: its replacement is an event of its own.
          const replaced = onEvent(data, piece.raw.length, foreign ? EMPTY : piece.raw);
          if (replaced && foreign) pageReplaced = true;
          out = replaced ?? piece.raw;
        }
        summary.bytes += out.length;
        summary.cutInside = piece.kind === 'block' && !tail ? undefined : cutAfter(piece, tail, summary.cutInside);
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
    if (!(await forward(splitter.end(), true))) summary.clientGone = true;
  } catch (err) {
    failed(summary, err);
  }
  return summary;
}

/**
 * Relays a compressed stream whose events are only read (audit): each chunk goes to the client as
 * the server sent it, then into the decoder, whose output is split into events and read. Once the
 * bytes stop decoding (or without a decoder: a coding the proxy cannot undo), the rest still goes
 * through, unread.
 */
export async function mirrorSse(
  body: Readable,
  res: ServerResponse,
  decoder: Duplex | undefined,
  maxEventBytes: number,
  onEvent: (data: string, size: number, raw: Buffer) => void,
): Promise<SseSummary> {
  const summary = emptySummary();
  const splitter = new SseRelaySplitter(maxEventBytes);
  const read = eventReader(summary);
  const readAll = (pieces: SseRelayPiece[]): void => {
    for (const piece of pieces) {
      const { data } = read(piece);
      if (data !== undefined) onEvent(data, piece.raw.length, piece.raw);
    }
  };
  decoder?.on('data', (chunk: Buffer) => {
    // Read in the decoder's event handler: a failure here must end as a summary, not a crash.
    try {
      readAll(splitter.push(chunk));
    } catch (err) {
      summary.error ??= toProxyError(err);
    }
  });
  decoder?.on('error', (err: Error) => (summary.undecodable ??= err));
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      summary.bytes += chunk.length;
      const written = writeChunk(res, chunk);
      if (written !== true && !(await written)) {
        summary.clientGone = true;
        body.destroy();
        return summary;
      }
      // The decoder's input is bounded too: a slow decoder holds the stream back, as a slow client does.
      if (decoder && !summary.undecodable && !decoder.write(chunk)) await settled(decoder, 'drain');
    }
    if (decoder && !summary.undecodable) {
      decoder.end();
      await settled(decoder, 'end');
      if (!summary.undecodable) readAll(splitter.end());
    }
  } catch (err) {
    failed(summary, err);
  } finally {
    decoder?.destroy();
  }
  return summary;
}

/** Resolves on `event` or on the stream's failure (recorded by its error listener). */
function settled(stream: Duplex, event: 'drain' | 'end'): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off(event, done).off('error', done).off('close', done);
      resolve();
    };
    stream.once(event, done).once('error', done).once('close', done);
  });
}
