// Classifies any decoded JSON value as a JSON-RPC 2.0 message. Total: every input yields a value,
// nothing throws. Rules (issue 3) judge the shape; this module only names what it sees.

export type JsonRpcId = string | number;

export type Message =
  | { kind: 'request'; id: JsonRpcId; method: string; params: unknown; value: Record<string, unknown> }
  | { kind: 'notification'; method: string; params: unknown; value: Record<string, unknown> }
  | { kind: 'result'; id: JsonRpcId | null; result: unknown; value: Record<string, unknown> }
  | { kind: 'error'; id: JsonRpcId | null | undefined; code: unknown; message: unknown; data: unknown; value: Record<string, unknown> }
  | { kind: 'invalid'; reason: string; id: JsonRpcId | null | undefined; value: unknown };

/** A decoded body or SSE payload: one message, or a batch (a JSON array). */
export type Payload = { batch: false; messages: [Message] } | { batch: true; messages: Message[] };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const isId = (v: unknown): v is JsonRpcId =>
  typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

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

/** Key of an id that keeps 1 and "1" apart. */
export const idKey = (id: JsonRpcId): string => (typeof id === 'number' ? `n:${id}` : `s:${id}`);
