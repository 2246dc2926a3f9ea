// The benchmark's MCP client side: opens a session through a target (initialize, initialized,
// tools/list, so mcp-warden knows the version and the tool catalogue, as with a real client), and
// checks one call per workload before it is measured: a benchmark that checks what it measures.
import { request } from 'undici';

export const PROTOCOL = '2025-11-25';

export interface Workload {
  name: string;
  /** Body autocannon sends; `[<id>]` becomes a fresh id on every request (ids never repeat in a session). */
  body: string;
  /** What a correct answer looks like: its body size in bytes (about), or its SSE event count. */
  expect: { minBytes: number; maxBytes: number; events?: number };
}

/** A `tools/call` body whose id (and progress token) autocannon fills in per request. */
export const call = (name: string, args: Record<string, unknown>, progress = false): string =>
  JSON.stringify({
    jsonrpc: '2.0',
    id: '[<id>]',
    method: 'tools/call',
    params: { name, arguments: args, ...(progress ? { _meta: { progressToken: '[<id>]' } } : {}) },
  });

const ARGS = { city: 'Paris', units: 'metric', detail: 'brief' };

/** The fast upstream's workloads: ~200 B, 10 KB, 1 MB results and an SSE stream of 100 progress events + result. */
export const FAST_WORKLOADS: Workload[] = [
  { name: 'small', body: call('small', ARGS), expect: { minBytes: 150, maxBytes: 300 } },
  { name: '10KB', body: call('kb10', ARGS), expect: { minBytes: 10_000, maxBytes: 10_300 } },
  { name: '1MB', body: call('mb1', ARGS), expect: { minBytes: 1_000_000, maxBytes: 1_000_300 } },
  { name: 'SSE 100+1', body: call('sse', ARGS, true), expect: { minBytes: 10_000, maxBytes: 30_000, events: 101 } },
];

/** The SDK fixture's: echo (small), echo of 10 KB (the request is 10 KB too), countdown of 100 progress events. */
export const SDK_WORKLOADS: Workload[] = [
  { name: 'small', body: call('echo', { text: 'weather in Paris, metric, brief' }), expect: { minBytes: 80, maxBytes: 300 } },
  { name: '10KB', body: call('echo', { text: 'x'.repeat(10_000) }), expect: { minBytes: 10_000, maxBytes: 10_300 } },
  {
    name: 'SSE 100+1',
    body: call('countdown', { steps: 100, delayMs: 0 }, true),
    expect: { minBytes: 10_000, maxBytes: 40_000, events: 101 },
  },
];

export type Headers = Record<string, string>;

const BASE: Headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The JSON-RPC messages of a body, JSON or SSE. */
function messages(type: string, text: string): unknown[] {
  if (!type.startsWith('text/event-stream')) return text.length > 0 ? [JSON.parse(text)] : [];
  return text
    .split(/\r?\n\r?\n/)
    .map((block) =>
      block
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).trimStart())
        .join('\n'),
    )
    .filter((d) => d.length > 0)
    .map((d) => JSON.parse(d));
}

async function post(
  url: URL,
  headers: Headers,
  body: unknown,
): Promise<{ status: number; headers: Record<string, unknown>; messages: unknown[]; bytes: number }> {
  const res = await request(url, { method: 'POST', headers, body: JSON.stringify(body), headersTimeout: 10_000, bodyTimeout: 30_000 });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    headers: res.headers,
    messages: messages(String(res.headers['content-type'] ?? ''), text),
    bytes: Buffer.byteLength(text),
  };
}

/** Opens an MCP session through `url`; returns the headers every later request carries. */
export async function openSession(url: URL): Promise<Headers> {
  const init = await post(url, BASE, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'warden-bench', version: '1.0.0' } },
  });
  const sid = init.headers['mcp-session-id'];
  if (init.status !== 200 || typeof sid !== 'string') throw new Error(`initialize through ${url.href}: HTTP ${init.status}, no session id`);
  const version = (init.messages[0] as { result?: { protocolVersion?: string } })?.result?.protocolVersion ?? PROTOCOL;
  const headers: Headers = { ...BASE, 'mcp-session-id': sid, 'mcp-protocol-version': version };
  const initialized = await post(url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (initialized.status !== 202) throw new Error(`notifications/initialized through ${url.href}: HTTP ${initialized.status}`);
  const list = await post(url, headers, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  if ((list.messages[0] as { result?: { tools?: unknown[] } })?.result?.tools === undefined)
    throw new Error(`tools/list through ${url.href} failed`);
  return headers;
}

let checkSeq = 0;

/** Sends one request of the workload and checks the answer; throws with what was wrong. */
export async function checkWorkload(url: URL, headers: Headers, w: Workload): Promise<void> {
  const id = `check-${++checkSeq}`;
  const res = await request(url, {
    method: 'POST',
    headers,
    body: w.body.replaceAll('[<id>]', id),
    headersTimeout: 10_000,
    bodyTimeout: 30_000,
  });
  const text = await res.body.text();
  const bytes = Buffer.byteLength(text);
  const msgs = messages(String(res.headers['content-type'] ?? ''), text);
  const last = msgs[msgs.length - 1] as { id?: unknown; result?: { isError?: boolean } } | undefined;
  const problems: string[] = [];
  if (res.statusCode !== 200) problems.push(`HTTP ${res.statusCode}`);
  if (bytes < w.expect.minBytes || bytes > w.expect.maxBytes)
    problems.push(`${bytes} bytes, expected ${w.expect.minBytes}..${w.expect.maxBytes}`);
  if (w.expect.events !== undefined && msgs.length !== w.expect.events) problems.push(`${msgs.length} events, expected ${w.expect.events}`);
  if (last?.id !== id || last.result === undefined || last.result.isError)
    problems.push(`last message is not the result for ${id}: ${text.slice(-200)}`);
  if (problems.length > 0) throw new Error(`${w.name} through ${url.href}: ${problems.join('; ')}`);
}
