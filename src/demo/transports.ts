// The demo's other two transports: one exchange over the legacy HTTP+SSE transport and one over
// stdio, each with a server that answers an unknown tool the wrong way (an isError result), under
// the policy given. The stdio server also writes a banner to its stdout. What the client received
// is set beside what the proxy logged.
import { createServer, type ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { Logger } from 'pino';
import { hasData, parseBlock } from '../codec/sse.ts';
import { SseSplitter } from '../codec/sse-splitter.ts';
import type { Policy } from '../config/types.ts';
import { createProxy } from '../proxy/server.ts';
import { listenOn } from '../proxy/listen.ts';
import { createStdioProxy } from '../proxy/stdio.ts';
import { clip, describeResponse, type LogRecord, type Paint } from './print.ts';

/** A call of a tool neither server has. */
export const UNKNOWN_TOOL = 'forecast';
const INIT = { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'mcp-warden-demo', version: '1.0.0' } };
const TIMEOUT_MS = 5_000;

/** What one transport's client sent and received. */
export interface TransportRun {
  transport: 'legacy HTTP+SSE' | 'stdio';
  /** The answer to the tools/call, as received. */
  answer: Record<string, unknown> | undefined;
  /** Lines the client read that were not JSON-RPC (stdio). */
  junk: string[];
}

/** The answer to an unknown tool the wrong way (WRONG: isError instead of JSON-RPC error -32602), and everything else right. */
const answerOf = (msg: { id?: unknown; method?: string; params?: { name?: string } }): unknown =>
  msg.method === 'initialize'
    ? {
        jsonrpc: '2.0',
        id: msg.id,
        result: { protocolVersion: '2024-11-05', capabilities: { tools: {} }, serverInfo: { name: 'weather', version: '1' } },
      }
    : { jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text: `Unknown tool: ${msg.params?.name}` }], isError: true } };

/** The stdio server, run with `node -e`: a banner on stdout (WRONG: logs go to stderr), then answers. */
const STDIO_SERVER = `
process.stdout.write('Weather server ready\\n');
const answer = ${answerOf.toString()};
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id !== undefined) process.stdout.write(JSON.stringify(answer(msg)) + '\\n');
});`;

/** A legacy HTTP+SSE server: GET /sse names /message; POSTs are accepted and answered on the stream. */
async function startLegacyServer(): Promise<{ url: URL; close(): Promise<void> }> {
  let stream: ServerResponse | undefined;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url === '/sse') {
      stream = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' }).write('event: endpoint\ndata: /message?sessionId=demo\n\n');
      return;
    }
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      res.writeHead(202).end('Accepted');
      stream?.write(`event: message\ndata: ${JSON.stringify(answerOf(JSON.parse(body)))}\n\n`);
    });
  });
  const base = await listenOn(server, 0, '127.0.0.1');
  return {
    url: new URL('/sse', base),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: UNKNOWN_TOOL, arguments: {} } });

/** One legacy session through the proxy: initialize, then the unknown tool. */
export async function runLegacy(policy: Policy, logger: Logger): Promise<TransportRun> {
  const server = await startLegacyServer();
  const proxy = await createProxy({ upstream: server.url, logger, policy: () => policy }).listen(0, '127.0.0.1');
  const abort = new AbortController();
  try {
    const res = await fetch(proxy.url, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    const events = eventsOf(res.body!);
    const endpoint = new URL(String((await events.next()).value), proxy.url);
    const post = (m: unknown) =>
      fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(m) });
    await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT });
    await events.next();
    await post(call(2));
    const answer = JSON.parse(String((await events.next()).value)) as Record<string, unknown>;
    return { transport: 'legacy HTTP+SSE', answer, junk: [] };
  } finally {
    abort.abort();
    await proxy.close();
    await server.close();
  }
}

/** The data of each SSE event of a body, in order (the demo's own reading, bounded by its timeout). */
async function* eventsOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const splitter = new SseSplitter(1024 * 1024);
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await Promise.race([
      reader.read(),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the legacy SSE stream went quiet')), TIMEOUT_MS).unref()),
    ]);
    if (done) return;
    for (const piece of splitter.push(Buffer.from(value))) {
      if (piece.kind !== 'block') continue;
      const event = parseBlock(piece.raw);
      if (hasData(event)) yield event.data!;
    }
  }
}

/** One stdio session through `createStdioProxy`: initialize, then the unknown tool; the child exits when its stdin ends. */
export async function runStdio(policy: Policy, logger: Logger): Promise<TransportRun> {
  const input = new PassThrough();
  const output = new PassThrough();
  const proxy = createStdioProxy({
    command: process.execPath,
    args: ['-e', STDIO_SERVER],
    policy: () => policy,
    logger,
    client: { input, output },
    stderr: 'ignore',
  });
  const lines: string[] = [];
  let waiting: (() => void) | undefined;
  let rest = '';
  output.on('data', (c: Buffer) => {
    const parts = (rest + c.toString('utf8')).split('\n');
    rest = parts.pop()!;
    lines.push(...parts);
    waiting?.();
  });
  const answerTo = async (id: number): Promise<Record<string, unknown> | undefined> => {
    const until = Date.now() + TIMEOUT_MS;
    for (;;) {
      const found = lines.map(parseLine).find((m) => m?.id === id);
      if (found || Date.now() > until) return found;
      await new Promise<void>((resolve) => {
        waiting = resolve;
        setTimeout(resolve, 100).unref();
      });
    }
  };
  input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: INIT })}\n`);
  await answerTo(1);
  input.write(`${JSON.stringify(call(2))}\n`);
  const answer = await answerTo(2);
  input.end();
  await proxy.exited;
  return { transport: 'stdio', answer, junk: lines.filter((l) => parseLine(l) === undefined) };
}

function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** One row per tools/call exchange of each transport, and one per line the stdio server wrote that the client never saw. */
export function renderTransports(records: readonly LogRecord[], runs: readonly TransportRun[], paint: Paint): string {
  const rows: string[][] = [['TRANSPORT', 'SERVER SENT', 'FINDINGS', 'CLIENT RECEIVED']];
  for (const run of runs) {
    const wire = run.transport === 'stdio' ? 'stdio' : 'get-sse';
    const exchange = records.find((r) => r.msg === 'exchange' && r.tool === UNKNOWN_TOOL && r.transport === wire);
    const found = records.filter((r) => r.msg === 'violation' && r.tool === UNKNOWN_TOOL && r.session === (exchange?.session ?? null));
    rows.push([
      run.transport,
      `tools/call ${UNKNOWN_TOOL}: ${String(exchange?.outcome ?? 'not logged')}`,
      found.map((f) => String(f.rule)).join(', '),
      run.answer ? describeResponse(run.answer) : 'no answer',
    ]);
    if (run.transport !== 'stdio') continue;
    for (const f of records.filter((r) => r.msg === 'violation' && r.rule === 'stdio-not-a-message'))
      rows.push([
        '',
        `stdout line ${clip(String(f.evidence), 30)}`,
        String(f.rule),
        run.junk.length === 0 ? 'nothing (not relayed)' : run.junk.join(' | '),
      ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row, n) => {
      const text = row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ');
      return `  ${n === 0 ? paint('bold', text) : text}`.trimEnd();
    })
    .map((line) => `${line}\n`)
    .join('');
}
