// Writes to the client: upstream headers minus hop-by-hop ones, and the proxy's own failures as
// JSON-RPC errors carrying the request's id, never HTML, never an empty body.
import { STATUS_CODES, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { JsonRpcId } from '../codec/jsonrpc.ts';
import type { ProxyError } from '../errors.ts';
import { HOP_BY_HOP } from '../mcp/headers.ts';
import type { StreamAnswer } from '../engine/plans.ts';
import { messageText } from '../rewrite/encode.ts';
import { connectionTokens } from './ingress.ts';

/** Response headers for the client: end-to-end ones as they came, minus content-length when the body is re-framed. */
export function clientHeaders(upstream: IncomingHttpHeaders, keepContentLength: boolean): OutgoingHttpHeaders {
  const named = connectionTokens(upstream);
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    if (name === 'content-length' && !keepContentLength) continue;
    out[name] = value;
  }
  return out;
}

/**
 * The JSON-RPC error body for a proxy failure. One error per request id the client is waiting on
 * (an array for a batch); a body that carried no request gets a single error with id null.
 */
export function proxyErrorBody(err: ProxyError, ids: readonly JsonRpcId[], batch: boolean): string {
  const one = (id: JsonRpcId | null) => ({
    jsonrpc: '2.0',
    id,
    error: { code: err.rpcCode, message: err.message, data: { reason: err.code, by: 'mcp-warden' } },
  });
  if (batch && ids.length > 0) return JSON.stringify(ids.map(one));
  return JSON.stringify(one(ids[0] ?? null));
}

/** The text of an answer the proxy writes for a request still waiting: the policy's message (with the request's id token), or its own error with the id. */
export const answerText = (a: StreamAnswer): string => ('message' in a ? messageText(a.message) : proxyErrorBody(a.error, [a.id], false));

function errorHeaders(err: ProxyError, body: string): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
  };
  // An overloaded proxy says when to come back (RFC 9110 §10.2.3).
  if (err.status === 503) headers['retry-after'] = '1';
  return headers;
}

/** Sends a proxy failure if nothing was sent yet; otherwise ends what was started. */
export function sendProxyError(res: ServerResponse, err: ProxyError, ids: readonly JsonRpcId[], batch: boolean): void {
  if (res.headersSent) {
    // The client already has a status line and part of a body: cutting the connection is the only
    // way to tell it the body is incomplete (an SSE stream ends cleanly in sse-relay instead).
    res.destroy();
    return;
  }
  const body = proxyErrorBody(err, ids, batch);
  res.writeHead(err.status, errorHeaders(err, body));
  res.end(body);
}

/** A whole HTTP/1.1 response carrying a proxy failure, for a socket no request was parsed on; the connection closes after it. */
export function rawProxyError(err: ProxyError): string {
  const body = proxyErrorBody(err, [], false);
  const headers = { ...errorHeaders(err, body), connection: 'close' };
  const lines = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? ''}\r\n${lines}\r\n${body}`;
}

/** Writes a chunk honouring backpressure; resolves false if the client went away. */
export function writeChunk(res: ServerResponse, chunk: Uint8Array): Promise<boolean> | boolean {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      res.off('drain', onDrain).off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once('drain', onDrain).once('close', onClose);
  });
}
