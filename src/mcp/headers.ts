// Header names the MCP transports define (lower case, as node:http exposes them).

import type { IncomingHttpHeaders } from 'node:http';
import { asRecord } from '../codec/json-value.ts';

export const H = {
  sessionId: 'mcp-session-id',
  protocolVersion: 'mcp-protocol-version',
  method: 'mcp-method',
  name: 'mcp-name',
  paramPrefix: 'mcp-param-',
  lastEventId: 'last-event-id',
  wwwAuthenticate: 'www-authenticate',
} as const;

/** A header's first value: node gives an array for a header sent more than once. */
export const firstValue = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** A header's value (the first, if repeated); undefined when absent. */
export function headerOf(headers: IncomingHttpHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  if (Array.isArray(v)) return v[0];
  return typeof v === 'string' ? v : undefined;
}

/** Every value of a header (a repeated header gives several). */
export function headerValues(headers: IncomingHttpHeaders | undefined, name: string): string[] {
  const v = headers?.[name];
  if (Array.isArray(v)) return v;
  return typeof v === 'string' ? [v] : [];
}

/** Hop-by-hop headers (RFC 9110 §7.6.1); never forwarded. Host is end-to-end: it goes upstream as the client sent it. */
export const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const SAFE_HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/** A header value as the 2026-07-28 transport sends it: plain visible ASCII, else the base64 sentinel (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#value-encoding). */
export function encodeHeaderValue(value: string): string {
  if (SAFE_HEADER_VALUE.test(value) && !/^=\?base64\?.*\?=$/.test(value)) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** Decodes a `=?base64?...?=` header value (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#value-encoding); plain values come back as they are. */
export function decodeHeaderValue(value: string): { ok: true; value: string } | { ok: false } {
  if (!(value.length >= 11 && value.startsWith('=?base64?') && value.endsWith('?='))) return { ok: true, value };
  const b64 = value.slice(9, -2);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.replace(/=+$/, '').length % 4 === 1) return { ok: false };
  try {
    return { ok: true, value: new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64')) };
  } catch {
    return { ok: false };
  }
}

/**
 * The headers a 2026-07-28 request must carry, derived from its body: MCP-Protocol-Version from
 * _meta, Mcp-Method, Mcp-Name (tools/call and prompts/get: params.name; resources/read:
 * params.uri), and Mcp-Param-{Name} for arguments whose property carries `x-mcp-header` in the
 * tool's inputSchema. A proxy that edits a request must send these, or the server answers -32020
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#request-metadata).
 */
export function modernRequestHeaders(method: string, params: unknown, inputSchema?: unknown): Record<string, string> {
  const p = asRecord(params);
  const out: Record<string, string> = { [H.method]: encodeHeaderValue(method) };
  const version = asRecord(p?._meta)?.['io.modelcontextprotocol/protocolVersion'];
  if (typeof version === 'string') out[H.protocolVersion] = version;
  const name = method === 'tools/call' || method === 'prompts/get' ? p?.name : method === 'resources/read' ? p?.uri : undefined;
  if (typeof name === 'string') out[H.name] = encodeHeaderValue(name);
  const properties = asRecord(asRecord(inputSchema)?.properties);
  const args = asRecord(p?.arguments);
  for (const [prop, schema] of Object.entries(properties ?? {})) {
    const header = asRecord(schema)?.['x-mcp-header'];
    const value = args?.[prop];
    if (typeof header !== 'string' || value === undefined || value === null) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out[`${H.paramPrefix}${header.toLowerCase()}`] = encodeHeaderValue(String(value));
    }
  }
  return out;
}
