// Re-encodes what a rewrite changed, and nothing else: one message inside a body, or the data of
// one SSE event with its id, event name, retry and comments kept in place.
import { jsonText } from '../codec/json-text.ts';

/** A body whose messages are `values` (a batch when `batch`), as JSON bytes (at any depth: the other messages of a batch are as deep as they came). */
export function encodeBody(values: readonly unknown[], batch: boolean): Buffer {
  return Buffer.from(jsonText(batch ? values : values[0]), 'utf8');
}

const LINE = /\r\n|\r|\n/;

/**
 * The same SSE event with its data replaced by `data` (one line of JSON). Field lines other than
 * data keep their order; the data line takes the place of the first data line; the event keeps
 * its line-ending style.
 */
export function encodeSseEvent(raw: Uint8Array, data: string): Buffer {
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  const eol = /\r\n/.test(text) ? '\r\n' : /\r(?!\n)/.test(text) ? '\r' : '\n';
  const lines = text.split(LINE);
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const out: string[] = [];
  let placed = false;
  for (const line of lines) {
    const isData = line === 'data' || line.startsWith('data:');
    if (!isData) out.push(line);
    else if (!placed) {
      out.push(`data: ${data}`);
      placed = true;
    }
  }
  if (!placed) out.push(`data: ${data}`);
  return Buffer.from(`${out.join(eol)}${eol}${eol}`, 'utf8');
}

/** A new SSE event carrying one message (for a response the server never sent). */
export function sseEvent(data: string): Buffer {
  return Buffer.from(`event: message\ndata: ${data}\n\n`, 'utf8');
}
