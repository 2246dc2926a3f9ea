// Reads the fields of one raw SSE block (as cut by sse-splitter.ts). Never throws. The fields are
// read by eventsource-parser, around three habits of its 3.1 release:
// - a block without data dispatches nothing, so an id-only block's id is read here instead;
// - a lone CR at the very end of what it was fed is held back, so a CR-terminated block is not
//   dispatched until more text arrives: a blank line is always fed after the block;
// - on its first feed it strips the three Latin-1 chars "ï»¿" as if they were a BOM: an empty
//   first feed keeps that from touching the block. A BOM is stripped only at the stream's start.
import { createParser } from 'eventsource-parser';

export interface SseEvent {
  event: string | undefined;
  /** undefined when the block had no data field; data lines joined with "\n". */
  data: string | undefined;
  id: string | undefined;
  retry: number | undefined;
  comments: string[];
}

// Not fatal: invalid UTF-8 becomes U+FFFD, as an EventSource client would see it. A BOM is kept:
// only the one at the very start of a stream is not part of the text.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

// One parser for every block, reset before each: building one per block cost more than reading
// the block. parseBlock is synchronous, so the callbacks always fill the block being read.
let reading: SseEvent = emptyEvent();
let dispatched = false;
const parser = createParser({
  onEvent: (message) => {
    dispatched = true;
    reading.event = message.event;
    reading.data = message.data;
    reading.id = message.id;
  },
  onRetry: (ms) => {
    reading.retry = ms;
  },
  onComment: (comment) => {
    reading.comments.push(comment);
  },
});

function emptyEvent(): SseEvent {
  return { event: undefined, data: undefined, id: undefined, retry: undefined, comments: [] };
}

/** The fields of one block; `streamStart`: the block opens the stream, where a BOM is not text. */
export function parseBlock(raw: Uint8Array, streamStart = false): SseEvent {
  const out = emptyEvent();
  reading = out;
  dispatched = false;
  parser.reset();
  const decoded = utf8.decode(raw);
  const text = streamStart && decoded.startsWith('\uFEFF') ? decoded.slice(1) : decoded;
  parser.feed('');
  parser.feed(text);
  // Ends an unterminated tail and releases a trailing CR; after a complete block it only adds
  // blank lines, which dispatch nothing.
  parser.feed('\n\n');
  if (!dispatched) out.id = readId(text);
  return out;
}

/** True when the event carries a data payload worth decoding as JSON (not absent, not blank). */
export function hasData(e: SseEvent): boolean {
  return e.data !== undefined && e.data.trim() !== '';
}

// The last `id` field of the block, by the spec's rules: one space after the colon is dropped,
// "id" alone means an empty id, a value containing NUL is ignored.
function readId(text: string): string | undefined {
  let id: string | undefined;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (line !== 'id' && !line.startsWith('id:')) continue;
    const value = line.slice(line.charCodeAt(3) === 0x20 ? 4 : 3);
    if (!value.includes('\0')) id = value;
  }
  return id;
}
