// Who sent a request and which trace it belongs to, for its exchange record: the W3C trace id
// (params._meta.traceparent, else the HTTP traceparent header) and the client's self-reported
// name and version (2026-07-28: _meta clientInfo on every request; before: initialize's clientInfo,
// remembered by the session). Self-reported: for logs, never for decisions (spec R12).
import type { IncomingHttpHeaders } from 'node:http';
import { asRecord } from '../codec/json-value.ts';
import { firstValue } from '../mcp/headers.ts';
import { META } from '../mcp/versions.ts';

/** A client's name and version as it reported them. */
export interface ClientInfo {
  name: string | undefined;
  version: string | undefined;
}

const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-[\da-f]{16}-[\da-f]{2}/;

/** A W3C traceparent, normalised, when it is one (an all-zero trace id is invalid). */
const traceparentIn = (value: unknown): string | undefined => {
  const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
  const id = text === undefined ? undefined : TRACEPARENT.exec(text)?.[1];
  return id && !/^0+$/.test(id) ? text : undefined;
};

/** A message's own `_meta.traceparent`, as written (any string; traceparentOf says whether it is valid). */
export const metaTraceparent = (params: unknown): string | undefined => {
  const value = asRecord(asRecord(params)?._meta)?.traceparent;
  return typeof value === 'string' ? value : undefined;
};

/** The trace context a request carries: its own _meta first (it travels with the message), else its HTTP request's. */
export const traceparentOf = (params: unknown, headers: IncomingHttpHeaders): string | undefined =>
  traceparentIn(asRecord(asRecord(params)?._meta)?.traceparent) ?? traceparentIn(firstValue(headers.traceparent));

/** The trace id of a (valid) traceparent. */
export const traceIdOf = (traceparent: string | undefined): string | undefined => traceparent?.slice(3, 35);

/** A clientInfo object's name and version (strings only). */
export function clientInfoIn(value: unknown): ClientInfo | undefined {
  const info = asRecord(value);
  if (!info) return undefined;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  return { name: str(info.name), version: str(info.version) };
}

/** The client of a request: its own _meta clientInfo (2026-07-28), initialize's clientInfo, else what its session remembers. */
export function clientOf(method: string, params: unknown, remembered: ClientInfo | undefined): ClientInfo | undefined {
  const p = asRecord(params);
  return clientInfoIn(asRecord(p?._meta)?.[META.clientInfo]) ?? (method === 'initialize' ? clientInfoIn(p?.clientInfo) : remembered);
}
