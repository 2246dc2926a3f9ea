// Classifies any decoded JSON value as a JSON-RPC 2.0 message. Total: every input yields a value,
// nothing throws. Rules (issue 3) judge the shape; this module only names what it sees. It also
// keeps, for messages decoded from JSON text, the raw text of each id (idTokenOf, id-token.ts).
import { isObject } from './json-value.ts';
import { canonicalNumber, messageSpans, type MessageSpan } from './id-token.ts';

export type JsonRpcId = string | number;

export type Message =
  | { kind: 'request'; id: JsonRpcId; method: string; params: unknown; value: Record<string, unknown> }
  | { kind: 'notification'; method: string; params: unknown; value: Record<string, unknown> }
  | { kind: 'result'; id: JsonRpcId | null; result: unknown; value: Record<string, unknown> }
  | { kind: 'error'; id: JsonRpcId | null | undefined; code: unknown; message: unknown; data: unknown; value: Record<string, unknown> }
  | { kind: 'invalid'; reason: string; id: JsonRpcId | null | undefined; value: unknown };

/** A decoded body or SSE payload: one message, or a batch (a JSON array). */
export type Payload = { batch: false; messages: [Message] } | { batch: true; messages: Message[] };

const isId = (v: unknown): v is JsonRpcId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/** The id as a readable value if the object carries one of a valid type, else null/undefined. */
function readId(value: Record<string, unknown>): JsonRpcId | null | undefined {
  if (!('id' in value)) return undefined;
  return isId(value.id) ? value.id : null;
}

export function classify(value: unknown): Message {
  if (!isObject(value)) return { kind: 'invalid', reason: 'not an object', id: undefined, value };
  const id = readId(value);
  if (value.jsonrpc !== '2.0') return { kind: 'invalid', reason: 'jsonrpc is not "2.0"', id, value };
  const hasResult = 'result' in value;
  const hasError = 'error' in value;
  if (typeof value.method === 'string') {
    if (hasResult || hasError) return { kind: 'invalid', reason: 'method together with result or error', id, value };
    if (!('id' in value)) return { kind: 'notification', method: value.method, params: value.params, value };
    if (!isId(value.id)) return { kind: 'invalid', reason: 'request id is not a string or number', id: null, value };
    return { kind: 'request', id: value.id, method: value.method, params: value.params, value };
  }
  if ('method' in value) return { kind: 'invalid', reason: 'method is not a string', id, value };
  if (hasResult && hasError) return { kind: 'invalid', reason: 'both result and error', id, value };
  if (hasResult) {
    if (id === undefined) return { kind: 'invalid', reason: 'result without id', id, value };
    return { kind: 'result', id, result: value.result, value };
  }
  if (hasError) {
    const err = value.error;
    if (!isObject(err)) return { kind: 'invalid', reason: 'error is not an object', id, value };
    return { kind: 'error', id, code: err.code, message: err.message, data: err.data, value };
  }
  return { kind: 'invalid', reason: 'neither method, result nor error', id, value };
}

export function classifyPayload(value: unknown): Payload {
  if (Array.isArray(value)) return { batch: true, messages: value.map(classify) };
  return { batch: false, messages: [classify(value)] };
}

/**
 * Key of an id that keeps 1 and "1" apart. A number beyond 2^53 is keyed by its raw token when it
 * is given (idTokenOf): JSON.parse rounds 9007199254740993 and 9007199254740992 to one double, and
 * they are two ids. Every other number is keyed by its value (1, 1.0 and 1e0 are one id, as for
 * any JSON reader); a token is spelled one way whatever its form (9.007199254740993e15 is
 * 9007199254740993).
 */
export function idKey(id: JsonRpcId, token?: string): string {
  if (typeof id !== 'number') return `s:${id}`;
  if (token === undefined || Number.isSafeInteger(id) || !Number.isInteger(id)) return `n:${id}`;
  return `n:${canonicalNumber(token)}`;
}

interface Source {
  /** The JSON text the payload was parsed from. */
  text: string;
  batch: boolean;
  spans?: MessageSpan[];
}

/**
 * Where a message decoded from JSON text came from (its payload's text and its index in it), held
 * by the message itself under a hidden property. A WeakMap held it before: its entries are
 * ephemerons that a scavenge does not free, so every event's text of a long SSE stream waited for
 * a full GC (1 GiB SSE peaked at ~160 MB against ~130 without).
 */
const SOURCE = Symbol('source');
type Sourced = Message & { [SOURCE]?: { source: Source; index: number } };

/** Remembers the text a payload was parsed from (json-body.ts), for idTokenOf and rawTextOf; nothing is read until then. */
export function rememberSource(payload: Payload, text: string): void {
  const source: Source = { text, batch: payload.batch };
  payload.messages.forEach((m, index) => {
    // Not enumerable: no copy, log or comparison of the message sees it.
    Object.defineProperty(m, SOURCE, { value: { source, index }, enumerable: false, writable: true, configurable: true });
  });
}

/** The span of a message decoded from JSON text, read on first use (all the messages of its payload at once). */
function spanOf(m: Message): { span: MessageSpan | undefined; text: string } | undefined {
  const entry = (m as Sourced)[SOURCE];
  if (!entry) return undefined;
  const { source, index } = entry;
  source.spans ??= messageSpans(source.text, source.batch);
  return { span: source.spans[index], text: source.text };
}

/**
 * The raw JSON text of a message's id as it came on the wire (`1.0`, `"\u0041"`, `null`), when
 * the message was decoded from JSON text and has an id member; undefined otherwise. Read from the
 * text on first use, so it costs nothing until asked.
 */
export function idTokenOf(m: Message): string | undefined {
  return spanOf(m)?.span?.token;
}

/** The JSON text of a message as it came (for a batch, its element), when it was decoded from JSON text. */
export function rawTextOf(m: Message): string | undefined {
  const found = spanOf(m);
  return found?.span ? found.text.slice(found.span.start, found.span.end) : undefined;
}
