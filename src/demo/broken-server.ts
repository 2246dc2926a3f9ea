// A small MCP server (Streamable HTTP, protocol 2025-11-25, written by hand) that breaks several of
// the protocol's error rules on purpose, so the demo has something to show. Each WRONG marks a
// fault mcp-warden is there to catch; the rest is what a correct server does.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const PROTOCOL_VERSION = '2025-11-25';

type Id = string | number;
type Params = Record<string, unknown>;

const object = (properties: Params = {}, required: string[] = []) => ({ type: 'object', properties, required });

const TOOLS = [
  { name: 'get_weather', description: 'Current weather for a city', inputSchema: object({ city: { type: 'string' } }, ['city']) },
  { name: 'divide', description: 'Divide a by b', inputSchema: object({ a: { type: 'number' }, b: { type: 'number' } }, ['a', 'b']) },
  { name: 'export_report', description: 'Export the monthly report', inputSchema: object() },
  { name: 'lookup_user', description: 'Look up a user by id', inputSchema: object({ id: { type: 'string' } }, ['id']) },
  {
    name: 'send_email',
    description: 'Send an email',
    inputSchema: object({ to: { type: 'string' }, subject: { type: 'string' } }, ['to']),
  },
  { name: 'slow_report', description: 'Build a report, with progress', inputSchema: object() },
];

const HTML_500 = `<!DOCTYPE html>
<html>
<head><title>500 Internal Server Error</title></head>
<body>
<h1>Internal Server Error</h1>
<p>The server encountered an internal error and was unable to complete your request.</p>
<hr><address>nginx/1.24.0 (Ubuntu) at mcp.example.internal Port 80</address>
</body>
</html>
`;

const STACK = [
  "TypeError: Cannot read properties of undefined (reading 'id')",
  '    at lookupUser (/srv/app/src/users.js:42:17)',
  '    at Pool.query (/srv/app/node_modules/pg-pool/index.js:45:11) [db-primary.internal:5432]',
  '    at async handleToolCall (/srv/app/src/mcp/tools.js:118:20)',
].join('\n');

const text = (t: string, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });

/** How a tools/call is answered: a JSON-RPC result or error, a raw HTTP reply, or an SSE stream. */
type Reply =
  | { result: unknown }
  | { error: { code: number; message: string } }
  | { http: number; contentType: string; body: string }
  | { sse: { progressToken: unknown; result: unknown } };

function callTool(name: unknown, args: Params, meta: Params): Reply {
  switch (name) {
    case 'get_weather':
      return { result: text(`Sunny, 21 °C in ${String(args.city)}`) };
    case 'divide':
      return args.b === 0 ? { result: text('b must not be 0', true) } : { result: text(String(Number(args.a) / Number(args.b))) };
    // WRONG: a server fault as an HTML page on HTTP 500, not a JSON-RPC error.
    case 'export_report':
      return { http: 500, contentType: 'text/html', body: HTML_500 };
    // WRONG: a stack trace with internal paths and hostnames, handed to the client.
    case 'lookup_user':
      return { error: { code: -32603, message: STACK } };
    // WRONG: a failure reported as success ("silent success"): no isError.
    case 'send_email':
      return { result: text('Error: SMTP connection refused') };
    case 'slow_report':
      return { sse: { progressToken: meta.progressToken, result: text('Report ready: 42 rows') } };
    // WRONG: an unknown tool is a protocol error, -32602 "Unknown tool: NAME", not a tool result.
    default:
      return { result: text('Tool not found', true) };
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<{ id?: Id; method?: string; params?: Params } | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

export async function startBrokenServer(): Promise<{ url: URL; close(): Promise<void> }> {
  const sessions = new Set<string>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.url !== '/mcp') return void res.writeHead(404).end();
    const sid = req.headers['mcp-session-id'];
    if (req.method === 'DELETE') return void res.writeHead(typeof sid === 'string' && sessions.delete(sid) ? 200 : 404).end();
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST, DELETE' }).end();

    const msg = await readJson(req);
    if (!msg) return send(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
    if (msg.id === undefined) return void res.writeHead(202).end(); // notifications: accepted, no body
    const { id, method, params = {} } = msg;
    const reply = (r: Reply, headers?: OutgoingHttpHeaders) => {
      if ('http' in r) return void res.writeHead(r.http, { 'content-type': r.contentType }).end(r.body);
      if ('sse' in r) return void streamReport(res, id, r.sse);
      send(res, 200, { jsonrpc: '2.0', id, ...r }, headers);
    };

    if (method === 'initialize') {
      const newSid = randomUUID();
      sessions.add(newSid);
      const result = {
        protocolVersion: PROTOCOL_VERSION,
        capabilities: { tools: {} },
        serverInfo: { name: 'broken-weather', version: '1.0.0' },
      };
      return reply({ result }, { 'mcp-session-id': newSid });
    }
    if (typeof sid !== 'string') return send(res, 400, { jsonrpc: '2.0', id, error: { code: -32600, message: 'Missing Mcp-Session-Id' } });
    if (!sessions.has(sid)) return send(res, 404, { jsonrpc: '2.0', id, error: { code: -32001, message: 'Session not found' } });
    if (method === 'ping') return reply({ result: {} });
    if (method === 'tools/list') return reply({ result: { tools: TOOLS } });
    if (method === 'tools/call') return reply(callTool(params.name, (params.arguments ?? {}) as Params, (params._meta ?? {}) as Params));
    // WRONG: an unknown method is -32601 "Method not found"; -32000 is implementation-defined.
    return reply({ error: { code: -32000, message: 'Not supported' } });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The one SSE answer: a progress notification (if the client asked for progress), then the result. */
function streamReport(res: ServerResponse, id: Id | undefined, r: { progressToken: unknown; result: unknown }): void {
  const event = (message: unknown) => res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (r.progressToken !== undefined) {
    event({
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: r.progressToken, progress: 1, total: 2, message: 'querying' },
    });
  }
  // A moment of "work" between the two events, so the stream is a stream.
  setTimeout(() => {
    event({ jsonrpc: '2.0', id, result: r.result });
    res.end();
  }, 30);
}
