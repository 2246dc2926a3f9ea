// With traces exported, a request goes upstream with the proxy's span in the client's place, the
// way the client sent its own: in the HTTP `traceparent` header, in the message's
// `_meta.traceparent`, or both. The span is begun here and ended with its exchange (sinks/tracing.ts).
// The body is edited in place only where that cannot change anything else: the client's value
// occurs once in the bytes, the proxy's has the same length (the body's size, its other bytes and
// its Content-Length stay as they were), and the edited body, read back, differs from the original
// in that one value (a value written with escapes in _meta and plainly elsewhere is left alone).
import type { Decoded } from '../codec/json-body.ts';
import { metaTraceparent, traceparentOf } from '../exchange/identity.ts';
import { requestKey } from '../exchange/table.ts';
import type { ExchangeState } from '../engine/state.ts';
import type { Tracing } from '../sinks/tracing.ts';

export interface UpstreamTrace {
  /** The header to send in the client's place (only when the client sent one in the same trace). */
  header: { traceparent: string } | undefined;
  /** The body with the proxy's span in `_meta.traceparent` (undefined: the body as it came). */
  body: Buffer | undefined;
}

/**
 * The trace context for the request's way upstream, or undefined (no export, no request, or no
 * trace the client named). `editable`: the body's bytes as forwarded, when they are the JSON
 * itself (not compressed).
 */
export function upstreamTrace(
  tracing: Tracing | undefined,
  x: ExchangeState,
  decoded: Decoded,
  headers: Parameters<typeof traceparentOf>[1],
  editable: Buffer | undefined,
): UpstreamTrace | undefined {
  if (!tracing || x.requestIds.length === 0 || !decoded.ok) return undefined;
  const first = decoded.payload.messages.find((m) => m.kind === 'request');
  const params = first && 'params' in first ? first.params : undefined;
  const parent = traceparentOf(params, headers);
  if (!parent) return undefined;
  const own = tracing.begin(requestKey(x.flow.scope, 'client', x.requestIds[0]!, x.requestTokens[0]), parent);
  const header = traceparentOf(undefined, headers) === parent ? { traceparent: own } : undefined;
  const written = metaTraceparent(params);
  const edited = written && traceparentOf(params, {}) === parent && editable ? replacedOnce(editable, written, own) : undefined;
  const at = decoded.payload.messages.indexOf(first!);
  return {
    header,
    body: edited && onlyTraceparentChanged(editable!, edited, decoded.payload.batch ? at : undefined, own) ? edited : undefined,
  };
}

/** Whether `edited`, read back, is `original` with the request's (at `at` in a batch) _meta.traceparent set to `own`, and nothing else changed. */
function onlyTraceparentChanged(original: Buffer, edited: Buffer, at: number | undefined, own: string): boolean {
  try {
    const expected = JSON.parse(original.toString('utf8')) as unknown;
    const message = (at === undefined ? expected : (expected as unknown[])[at]) as { params: { _meta: { traceparent: string } } };
    message.params._meta.traceparent = own;
    return JSON.stringify(JSON.parse(edited.toString('utf8'))) === JSON.stringify(expected);
  } catch {
    return false;
  }
}

/** `bytes` with its one occurrence of `from` replaced by `to` (same length), else undefined. */
function replacedOnce(bytes: Buffer, from: string, to: string): Buffer | undefined {
  if (from.length !== to.length) return undefined;
  const at = bytes.indexOf(from);
  if (at < 0 || bytes.indexOf(from, at + 1) >= 0) return undefined;
  const out = Buffer.from(bytes);
  out.write(to, at, 'latin1');
  return out;
}
