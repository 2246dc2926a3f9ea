// The official SDK client over Streamable HTTP with a `fetch` that keeps a copy of every HTTP
// exchange the transport made: the request body, and the response bytes exactly as the client
// received them (a tee of the body the SDK reads). Tests check both what the SDK made of an answer
// and the bytes it was made from. The transport never reconnects (a test run leaves no timers).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

export interface WireExchange {
  method: string;
  /** The request body as sent ('' for GET and DELETE). */
  request: string;
  status: number;
  contentType: string;
  /** The response body exactly as received; resolves when the body ended. */
  body: Promise<Buffer>;
}

export interface WireClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Every HTTP exchange so far, in order. */
  wire: WireExchange[];
  /** The POST whose JSON-RPC body is a request of `method` (for tools/call: naming `tool`). */
  post(method: string, tool?: string): WireExchange;
  close(): Promise<void>;
}

const NO_BODY = new Set([101, 204, 205, 304]);

export async function connectWireClient(url: URL): Promise<WireClient> {
  const wire: WireExchange[] = [];
  const capturing = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    const entry = {
      method: init?.method ?? 'GET',
      request: typeof init?.body === 'string' ? init.body : '',
      status: res.status,
      contentType: res.headers.get('content-type') ?? '',
    };
    if (!res.body || NO_BODY.has(res.status)) {
      wire.push({ ...entry, body: Promise.resolve(Buffer.alloc(0)) });
      return res;
    }
    const [forSdk, forTest] = res.body.tee();
    wire.push({ ...entry, body: new Response(forTest).arrayBuffer().then((b) => Buffer.from(b)) });
    return new Response(forSdk, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const client = new Client({ name: 'warden-wire-client', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: capturing,
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 10, maxReconnectionDelay: 10, reconnectionDelayGrowFactor: 1 },
  });
  await client.connect(transport);
  const post = (method: string, tool?: string): WireExchange => {
    const found = wire.find((w) => {
      if (w.method !== 'POST') return false;
      try {
        const m = JSON.parse(w.request) as { method?: string; params?: { name?: unknown } };
        return m.method === method && (tool === undefined || m.params?.name === tool);
      } catch {
        return false;
      }
    });
    if (!found)
      throw new Error(
        `no POST of ${method}${tool ? ` (${tool})` : ''} on the wire; saw ${wire.map((w) => w.request || w.method).join(' | ')}`,
      );
    return found;
  };
  return { client, transport, wire, post, close: () => client.close() };
}

/** One SSE event block as it travelled: its raw text (blank line included) and its fields. */
export interface RawSseEvent {
  raw: string;
  id: string | undefined;
  event: string | undefined;
  data: string;
}

/** Cuts an SSE body (LF line ends, as the fixtures write them) into its event blocks. */
export function sseBlocks(text: string): RawSseEvent[] {
  const out: RawSseEvent[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = rest.indexOf('\n\n');
    const raw = end < 0 ? rest : rest.slice(0, end + 2);
    rest = end < 0 ? '' : rest.slice(end + 2);
    let id: string | undefined;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of raw.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    out.push({ raw, id, event, data: data.join('\n') });
  }
  return out;
}

const isResponse = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && ('result' in v || 'error' in v);

/** The JSON-RPC response a body carries: a JSON body, or the SSE event holding a response. */
export function responseIn(contentType: string, body: string): Record<string, unknown> {
  if (contentType.startsWith('text/event-stream')) {
    for (const e of sseBlocks(body)) {
      if (e.data === '') continue;
      const value: unknown = JSON.parse(e.data);
      if (isResponse(value)) return value;
    }
    throw new Error(`no response event in the stream: ${body}`);
  }
  const value: unknown = JSON.parse(body);
  if (!isResponse(value)) throw new Error(`not a JSON-RPC response: ${body}`);
  return value;
}
