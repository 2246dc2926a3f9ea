// A minimal MCP client for the demo (Streamable HTTP on undici). It never fails on what a broken
// server sends: every call returns what arrived (JSON, an SSE stream, an HTML page) for display.
import { asRecord } from '../codec/json-value.ts';
import { Agent, request } from 'undici';
import { hasData, parseBlock } from '../codec/sse.ts';
import { SseSplitter } from '../codec/sse-splitter.ts';

export type JsonObject = Record<string, unknown>;

export interface Received {
  status: number;
  /** Media type without parameters; '' when there was none. */
  contentType: string;
  bytes: number;
  /** The JSON-RPC response to the call, when one came. */
  response: JsonObject | undefined;
  /** Other JSON-RPC messages on the same response (notifications on an SSE stream). */
  others: JsonObject[];
  /** The start of the body, when it held no JSON-RPC response. */
  excerpt: string;
  /** Mcp-Session-Id issued on this response. */
  sessionId: string | undefined;
}

export interface DemoClient {
  /** Sends a request; resolves with its id and what came back. */
  request(method: string, params?: JsonObject): Promise<Received & { id: number }>;
  notify(method: string, params?: JsonObject): Promise<Received>;
  /** DELETE: ends the session. */
  end(): Promise<Received>;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;
const EXCERPT = 200;
/** The version this client proposes in initialize. */
export const PROTOCOL_VERSION = '2025-11-25';

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

export function createClient(url: URL, timeoutMs = 2000): DemoClient {
  const agent = new Agent();
  let nextId = 1;
  let sessionId: string | undefined;
  let protocolVersion: string | undefined;

  async function send(method: 'POST' | 'DELETE', body: JsonObject | undefined, id: number | undefined): Promise<Received> {
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
    if (body) headers['content-type'] = 'application/json';
    if (sessionId) headers['mcp-session-id'] = sessionId;
    if (protocolVersion) headers['mcp-protocol-version'] = protocolVersion;
    const what = body ? String(body.method) : method;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(url, { dispatcher: agent, method, headers, body: body && JSON.stringify(body), signal });
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > MAX_BODY) throw new Error(`${what}: response over ${MAX_BODY} bytes`);
        chunks.push(chunk);
      }
      const issued = res.headers['mcp-session-id'];
      const contentType = String(res.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      const messages = contentType === 'text/event-stream' ? sseMessages(chunks) : [parseJson(Buffer.concat(chunks).toString('utf8'))];
      const isResponse = (m: JsonObject | undefined) => m !== undefined && m.id === id && ('result' in m || 'error' in m);
      const objects = messages.map(asRecord);
      const response = id === undefined ? undefined : objects.find(isResponse);
      return {
        status: res.statusCode,
        contentType,
        bytes,
        response,
        others: objects.filter((m): m is JsonObject => m !== undefined && m !== response),
        excerpt: response ? '' : Buffer.concat(chunks).toString('utf8', 0, EXCERPT),
        sessionId: typeof issued === 'string' ? issued : undefined,
      };
    } catch (err) {
      throw signal.aborted ? new Error(`${what}: no answer within ${timeoutMs} ms`) : err;
    }
  }

  return {
    async request(method, params = {}) {
      const id = nextId++;
      const received = await send('POST', { jsonrpc: '2.0', id, method, params }, id);
      if (method === 'initialize') {
        sessionId = received.sessionId;
        const negotiated = asRecord(received.response?.result)?.protocolVersion;
        protocolVersion = typeof negotiated === 'string' ? negotiated : undefined;
      }
      return { id, ...received };
    },
    notify: (method, params = {}) => send('POST', { jsonrpc: '2.0', method, params }, undefined),
    end: () => send('DELETE', undefined, undefined),
    close: () => agent.close(),
  };
}

/** The JSON payloads of an SSE body's events (undefined for data that is not JSON). */
function sseMessages(chunks: readonly Buffer[]): unknown[] {
  const splitter = new SseSplitter(MAX_BODY);
  const pieces = [...chunks.flatMap((c) => splitter.push(c)), ...splitter.end()];
  return pieces.flatMap((piece, i) => {
    if (piece.kind !== 'block') return [];
    const event = parseBlock(piece.raw, i === 0);
    return hasData(event) ? [parseJson(event.data!)] : [];
  });
}
