// Re-encodes what a rewrite changed, and nothing else: one message inside a body, or the data of
// one SSE event with its id, event name, retry and comments kept in place.
import { jsonText } from '../codec/json-text.ts';

/** The raw id token a message built by the proxy must carry (withIdToken). */
const ID_TOKENS = new WeakMap<object, string>();

/**
 * Marks `message` to go out with `token` as its id's JSON text, byte for byte (the request's id
 * as the client wrote it: `1.0`, `1e2`, `-0`, 12345678901234567890, `"\u0041"`). The token is
 * written only while it still reads as the message's id (same type and value); a message whose id
 * changed since goes out with its own. Returns the message.
 */
export function withIdToken<T extends object>(message: T, token: string | undefined): T {
  if (token !== undefined) ID_TOKENS.set(message, token);
  return message;
}

/** Whether `token` is JSON text of `id` (what JSON.parse makes of it is `id`, type included). */
function spells(token: string, id: unknown): boolean {
  try {
    return Object.is(JSON.parse(token), id) || (typeof id === 'number' && JSON.parse(token) === id);
  } catch {
    return false;
  }
}

/** JSON text of one message: its marked id token (withIdToken) in place of the id's value, every other member as jsonText writes it. */
export function messageText(value: unknown): string {
  const token = typeof value === 'object' && value !== null ? ID_TOKENS.get(value) : undefined;
  const record = value as Record<string, unknown>;
  if (token === undefined || !('id' in record) || !spells(token, record.id)) return jsonText(value);
  const members: string[] = [];
  for (const key of Object.keys(record)) {
    const v = record[key];
    if (key === 'id') members.push(`"id":${token}`);
    else if (v !== undefined && typeof v !== 'function' && typeof v !== 'symbol') members.push(`${JSON.stringify(key)}:${jsonText(v)}`);
  }
  return `{${members.join(',')}}`;
}

/**
 * A body whose messages are `values` (a batch when `batch`), as JSON bytes (at any depth: the
 * other messages of a batch are as deep as they came). A message marked withIdToken carries that
 * id token verbatim.
 */
export function encodeBody(values: readonly unknown[], batch: boolean): Buffer {
  const text = batch ? `[${values.map((v) => (v === undefined ? 'null' : messageText(v))).join(',')}]` : messageText(values[0]);
  return Buffer.from(text, 'utf8');
}

const LINE = /\r\n|\r|\n/;

/**
 * `data` as SSE data lines: one per line of it. A rewritten body is one line of JSON, but the
 * other messages of a rewritten batch keep the bytes they came in, line breaks between tokens
 * included; a client joins the lines back with "\n", which JSON reads as the same whitespace.
 */
const dataLines = (data: string): string[] => data.split(LINE).map((line) => `data: ${line}`);

/**
 * The same SSE event with its data replaced by `data` (JSON). Field lines other than data keep
 * their order; the data lines take the place of the first data line; the event keeps its
 * line-ending style.
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
      out.push(...dataLines(data));
      placed = true;
    }
  }
  if (!placed) out.push(...dataLines(data));
  return Buffer.from(`${out.join(eol)}${eol}${eol}`, 'utf8');
}

/** A new SSE event carrying one message (for a response the server never sent). */
export function sseEvent(data: string): Buffer {
  return Buffer.from(`event: message\n${dataLines(data).join('\n')}\n\n`, 'utf8');
}
