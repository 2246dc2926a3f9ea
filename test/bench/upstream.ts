// The benchmark's upstreams. `startFastUpstream()` is a minimal MCP server on node:http that answers
// from canned bytes (only the id and progress token are spliced in), so what a benchmark measures is
// the proxy in front of it, not the server. Run as a process (`node --import tsx upstream.ts`) it
// also starts the official-SDK fixture (test/fixtures/sdk-server.ts) in json and sse modes and
// reports the URLs to its parent over IPC, with a minimal legacy HTTP+SSE server's
// (startLegacyUpstream); it exits when the parent goes away.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { closeServer, listen } from '../helpers/net.ts';

const FILLER = 'lorem ipsum dolor sit amet, consectetur adipiscing elit; ';
/** `n` bytes of plain text (ASCII, nothing JSON would escape). */
export const filler = (n: number): string => FILLER.repeat(Math.ceil(n / FILLER.length)).slice(0, n);

/** The result text of each sized tool: whole responses of about 200 B, 10 KB and 1 MB. */
const SIZED: Record<string, number> = { small: 130, kb10: 10_000, mb1: 1_000_000 };
const SSE_EVENTS = 100;
const STREAM_EVENT_BYTES = 64 * 1024;

export const TOOLS = ['small', 'kb10', 'mb1', 'sse', 'stream', 'bigjson', 'timed', 'sized'] as const;

const resultOf = (text: string): string => JSON.stringify({ content: [{ type: 'text', text }] });
const cannedResults = new Map(Object.entries(SIZED).map(([name, n]) => [name, Buffer.from(`,"result":${resultOf(filler(n))}}`)]));
const HEAD = Buffer.from('{"jsonrpc":"2.0","id":');

interface Call {
  id: string;
  method: string;
  name: string | undefined;
  args: Record<string, unknown>;
  progressToken: string | undefined;
}

function parse(raw: Buffer): Call | undefined {
  try {
    const msg = JSON.parse(raw.toString('utf8')) as {
      id?: unknown;
      method?: string;
      params?: { name?: string; arguments?: Record<string, unknown>; _meta?: { progressToken?: unknown } };
    };
    const token = msg.params?._meta?.progressToken;
    return {
      id: msg.id === undefined ? '' : JSON.stringify(msg.id),
      method: msg.method ?? '',
      name: msg.params?.name,
      args: msg.params?.arguments ?? {},
      progressToken: token === undefined ? undefined : JSON.stringify(token),
    };
  } catch {
    return undefined;
  }
}

function sendJson(res: ServerResponse, body: Buffer, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, ...headers });
  res.end(body);
}

const rpc = (id: string, result: unknown): Buffer => Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(result)}}`);

function initialize(res: ServerResponse, call: Call, args: unknown): void {
  const requested = (args as { protocolVersion?: string } | undefined)?.protocolVersion;
  const result = {
    protocolVersion: requested === '2025-06-18' || requested === '2025-03-26' ? requested : '2025-11-25',
    capabilities: { tools: {} },
    serverInfo: { name: 'bench-fast-upstream', version: '1.0.0' },
  };
  sendJson(res, rpc(call.id, result), { 'mcp-session-id': randomUUID() });
}

const toolEntry = (name: string) => ({
  name,
  description: `bench tool ${name}`,
  inputSchema: { type: 'object', properties: { bytes: { type: 'number' }, count: { type: 'number' }, gapMs: { type: 'number' } } },
});
const TOOL_LIST = TOOLS.map(toolEntry);

/** `make` answered once per number, then from memory (canned answers of each size). */
function oncePer(make: (n: number) => Buffer): (n: number) => Buffer {
  const made = new Map<number, Buffer>();
  return (n) => {
    let value = made.get(n);
    if (!value) made.set(n, (value = make(n)));
    return value;
  };
}

/** The tail of a tools/list answer: the bench's tools, and with `?tools=N` on the path as many more as make N in all. */
const catalogue = oncePer((size) => {
  const extra = Array.from({ length: Math.max(0, size - TOOL_LIST.length) }, (_, i) => toolEntry(`catalogue_tool_${i}`));
  return Buffer.from(`,"result":${JSON.stringify({ tools: [...TOOL_LIST, ...extra] })}}`);
});

/** Writes with backpressure; resolves false if the client went away. */
function write(res: ServerResponse, chunk: string | Buffer): Promise<boolean> | boolean {
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

const progress = (token: string, i: number, total: number, extra = ''): string =>
  `event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${token},"progress":${i},"total":${total}${extra}}}\n\n`;

const resultEvent = (id: string, text: string): string =>
  `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":${resultOf(text)}}\n\n`;

function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

/** `count` progress events (default 100, at most 10,000), then the result, each its own write. */
function sse(res: ServerResponse, call: Call): void {
  startSse(res);
  const token = call.progressToken ?? call.id;
  const count = Math.min(Number(call.args.count ?? SSE_EVENTS), 10_000);
  for (let i = 1; i <= count; i++) res.write(progress(token, i, count));
  res.end(resultEvent(call.id, 'done'));
}

/** `bytes` of SSE in 64 KiB progress events (each carries a message), then the result. */
async function stream(res: ServerResponse, call: Call): Promise<void> {
  startSse(res);
  const token = call.progressToken ?? call.id;
  const total = Math.ceil(Number(call.args.bytes ?? 0) / STREAM_EVENT_BYTES);
  const message = `,"message":"${filler(STREAM_EVENT_BYTES - 120)}"`;
  for (let i = 1; i <= total; i++) if (!(await write(res, progress(token, i, total, message)))) return;
  res.end(resultEvent(call.id, 'done'));
}

/** A JSON-RPC response of `bytes` bytes, written 1 MiB at a time with backpressure. */
async function bigJson(res: ServerResponse, call: Call): Promise<void> {
  const head = `{"jsonrpc":"2.0","id":${call.id},"result":{"content":[{"type":"text","text":"`;
  const tail = '"}]}}';
  const textBytes = Math.max(0, Number(call.args.bytes ?? 0) - head.length - tail.length);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': head.length + textBytes + tail.length });
  res.write(head);
  const chunk = Buffer.from(filler(1024 * 1024));
  for (let left = textBytes; left > 0; left -= chunk.length) {
    if (!(await write(res, left >= chunk.length ? chunk : chunk.subarray(0, left)))) return;
  }
  res.end(tail);
}

/** `count` progress events `gapMs` apart, each carrying `sentAt` (performance.now() just before its write). */
function timed(res: ServerResponse, call: Call): void {
  startSse(res);
  const token = call.progressToken ?? call.id;
  const count = Math.min(Number(call.args.count ?? 100), 10_000);
  const gap = Number(call.args.gapMs ?? 2);
  let i = 0;
  const tick = (): void => {
    if (res.destroyed) return;
    if (++i > count) {
      res.end(resultEvent(call.id, 'done'));
      return;
    }
    res.write(progress(token, i, count, `,"sentAt":${performance.now()}`));
    setTimeout(tick, gap);
  };
  setTimeout(tick, gap);
}

/** The tail of a response of about `bytes` bytes in all (the result's text fills it). */
const sizedResult = oncePer((bytes) => Buffer.from(`,"result":${resultOf(filler(Math.max(0, bytes - 80)))}}`));

/** A canned answer: its head, the request's id, its tail. */
function sendCanned(res: ServerResponse, id: string, tail: Buffer): void {
  sendJson(res, Buffer.concat([HEAD, Buffer.from(id), tail]));
}

function toolCall(res: ServerResponse, call: Call): void {
  const canned =
    call.name === 'sized' ? sizedResult(Number(call.args.bytes ?? 0)) : call.name !== undefined ? cannedResults.get(call.name) : undefined;
  if (canned) return void sendCanned(res, call.id, canned);
  if (call.name === 'sse') return void sse(res, call);
  if (call.name === 'timed') return void timed(res, call);
  if (call.name === 'stream') return void stream(res, call).catch(() => res.destroy());
  if (call.name === 'bigjson') return void bigJson(res, call).catch(() => res.destroy());
  sendJson(res, Buffer.from(`{"jsonrpc":"2.0","id":${call.id},"error":{"code":-32602,"message":"Unknown tool"}}`));
}

function handle(req: IncomingMessage, res: ServerResponse, raw: Buffer): void {
  if (req.method === 'DELETE') return void res.writeHead(200).end();
  if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST, DELETE' }).end();
  const call = parse(raw);
  if (!call)
    return void res
      .writeHead(400, { 'content-type': 'application/json' })
      .end('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}');
  if (call.id === '') return void res.writeHead(202).end();
  if (call.method === 'initialize') return void initialize(res, call, JSON.parse(raw.toString('utf8')).params);
  if (call.method === 'tools/list') {
    const size = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('tools') ?? TOOL_LIST.length);
    return void sendCanned(res, call.id, catalogue(size));
  }
  if (call.method === 'tools/call') return void toolCall(res, call);
  sendJson(res, Buffer.from(`{"jsonrpc":"2.0","id":${call.id},"error":{"code":-32601,"message":"Method not found"}}`));
}

export interface FastUpstream {
  url: URL;
  server: Server;
  close(): Promise<void>;
}

export async function startFastUpstream(): Promise<FastUpstream> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
  });
  server.keepAliveTimeout = 60_000;
  const base = await listen(server);
  return { url: new URL('/mcp', base), server, close: () => closeServer(server) };
}

/**
 * A legacy HTTP+SSE server (2024-11-05), on the wire as test/fixtures/legacy-sse-server.ts: GET
 * /sse opens a session and names `/message?sessionId=N` in its `endpoint` event; a POST there is
 * accepted with 202 and answered on the session's stream. Minimal and recording nothing (the
 * fixture keeps every request it saw): `echo` is answered from canned bytes, only the id and the
 * text spliced in.
 */
export async function startLegacyUpstream(): Promise<FastUpstream> {
  const streams = new Map<string, ServerResponse>();
  let next = 0;
  const answer = (call: Call): string => {
    if (call.method === 'tools/call' && call.name === 'echo')
      return `{"jsonrpc":"2.0","id":${call.id},"result":{"content":[{"type":"text","text":${JSON.stringify(`Echo: ${String(call.args.message ?? '')}`)}}]}}`;
    if (call.method === 'initialize')
      return rpc(call.id, {
        protocolVersion: '2024-11-05',
        capabilities: { tools: {} },
        serverInfo: { name: 'bench-legacy-upstream', version: '1.0.0' },
      }).toString();
    if (call.method === 'tools/list')
      return rpc(call.id, {
        tools: [
          { name: 'echo', description: 'bench tool echo', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } },
        ],
      }).toString();
    if (call.method === 'tools/call')
      return rpc(call.id, { content: [{ type: 'text', text: `Unknown tool: ${call.name}` }], isError: true }).toString();
    return `{"jsonrpc":"2.0","id":${call.id},"error":{"code":-32601,"message":"Method not found"}}`;
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const id = String(++next);
      streams.set(id, res);
      res.once('close', () => streams.delete(id));
      startSse(res);
      res.write(`event: endpoint\ndata: /message?sessionId=${id}\n\n`);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const stream =
        req.method === 'POST' && url.pathname === '/message' ? streams.get(url.searchParams.get('sessionId') ?? '') : undefined;
      if (!stream) return void res.writeHead(404).end();
      const call = parse(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      if (!call) return void res.writeHead(400, { 'content-type': 'text/plain' }).end('Invalid message');
      res.writeHead(202).end('Accepted');
      // As the fixture and the SDK's server: the answer follows the 202, on the stream.
      if (call.id !== '') setImmediate(() => stream.write(`event: message\ndata: ${answer(call)}\n\n`));
    });
  });
  server.keepAliveTimeout = 60_000;
  const base = await listen(server);
  return { url: new URL('/sse', base), server, close: () => closeServer(server) };
}

async function main(): Promise<void> {
  const { startSdkServer } = await import('../fixtures/sdk-server.ts');
  const fast = await startFastUpstream();
  const sdkJson = await startSdkServer({ mode: 'json' });
  const sdkSse = await startSdkServer({ mode: 'sse' });
  const legacy = await startLegacyUpstream();
  const stop = async (): Promise<void> => {
    await Promise.allSettled([fast.close(), sdkJson.close(), sdkSse.close(), legacy.close()]);
    process.exit(0);
  };
  process.on('disconnect', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.send?.({
    type: 'ready',
    urls: { fast: fast.url.href, sdkJson: sdkJson.url.href, sdkSse: sdkSse.url.href, legacySse: legacy.url.href },
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) void main();
