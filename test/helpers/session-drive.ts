// One MCP session of the demo's calls against the demo's broken server, each request on a new
// connection: behind --workers they alternate between workers, behind a balancer they go where it
// sends them. The findings a proxy logged for it, as `id rule` lines, to compare two setups.
import { Agent, type Dispatcher, request } from 'undici';
import { CALLS } from './report-traffic.ts';

type LogRecord = Record<string, unknown>;

/**
 * One JSON-RPC request to `url` on a new connection (in `session` at 2025-11-25, when given): the
 * session id the answer names, and its body when it parses as JSON ({} otherwise).
 */
export async function postRpc(
  url: URL,
  id: number,
  method: string,
  params: LogRecord = {},
  session?: string,
  options: { headers?: Record<string, string>; dispatcher?: Dispatcher } = {},
): Promise<{ session?: string; body: LogRecord }> {
  const res = await request(url, {
    method: 'POST',
    reset: true,
    dispatcher: options.dispatcher,
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' } : {}),
      ...options.headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  const text = await res.body.text();
  let body: LogRecord = {};
  try {
    body = JSON.parse(text) as LogRecord;
  } catch {
    // not JSON (an SSE stream, an HTML error page, a broken body): the caller reads the findings
  }
  return { session: res.headers['mcp-session-id'] as string | undefined, body };
}

/** Drives the session through `url` (from `localAddress`, a loopback address: another client); returns how many requests it sent. */
export async function driveSession(url: URL, localAddress?: string): Promise<number> {
  const dispatcher = localAddress ? new Agent({ localAddress }) : undefined;
  let id = 0;
  let session: string | undefined;
  const post = async (method: string, params: LogRecord = {}) => {
    const answer = await postRpc(url, ++id, method, params, session, { dispatcher });
    session ??= answer.session;
  };
  await post('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'session-drive', version: '1' } });
  await post('tools/list');
  for (let round = 0; round < 2; round++) for (const [name, args] of CALLS) await post('tools/call', { name, arguments: args });
  await post('resources/list');
  await dispatcher?.close();
  return id;
}

/** The violation records among `records`, as sorted `id rule` lines. */
export const findingsOf = (records: readonly LogRecord[]): string[] =>
  records
    .filter((r) => r.msg === 'violation')
    .map((r) => `${String(r.id)} ${String(r.rule)}`)
    .sort();
