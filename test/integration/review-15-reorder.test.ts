// Review of #15 (JudgingQueue): a JSON body's judging is put off to setImmediate, but an SSE
// event that arrives in the same poll phase is judged at once. The server answered tools/list and
// THEN announced notifications/tools/list_changed on its GET stream; the proxy applied them (before its fix) in
// the opposite order: the catalogue it keeps reads as complete and fresh, and a call to the tool
// the change added is flagged as unknown.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startProxy } from '../helpers/proxy.ts';

const VERSION = '2025-06-18';
const SID = 'reorder-1';
const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of closers.reverse()) await c();
});

test('tools/list answered, then list_changed on the GET stream: the catalogue is stale, not complete', async () => {
  let getStream: ServerResponse | undefined;
  let gotGet: () => void = () => {};
  const getOpen = new Promise<void>((r) => (gotGet = r));
  const upstream = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': SID });
      res.flushHeaders();
      getStream = res;
      gotGet();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: number; method: string; params?: { name?: string } };
      const json = (result: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': SID });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result }));
      };
      if (msg.id === undefined) return void res.writeHead(202).end();
      if (msg.method === 'initialize')
        return json({ protocolVersion: VERSION, capabilities: { tools: { listChanged: true } }, serverInfo: { name: 's', version: '1' } });
      if (msg.method === 'tools/list') {
        json({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] });
        // The list changes right after this answer: the server says so on its stream, after it.
        getStream!.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
        return;
      }
      if (msg.method === 'tools/call') return json({ content: [{ type: 'text', text: `ran ${msg.params?.name}` }] });
      json({});
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => upstream.close(r)));
  upstream.on('close', () => {});
  const url = new URL(`http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`);
  const proxy = await startProxy(url);
  closers.push(async () => {
    getStream?.end();
    upstream.closeAllConnections();
    await proxy.close();
  });

  const headers = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': SID,
    'mcp-protocol-version': VERSION,
  };
  let id = 0;
  const post = async (method: string, params: unknown = {}) => {
    const res = await fetch(proxy.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
    });
    return res.text();
  };
  const { 'mcp-session-id': _sid, ...first } = headers;
  await fetch(proxy.url, {
    method: 'POST',
    headers: first,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++id,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    }),
  }).then((r) => r.text());

  // The standalone GET stream, read as it comes.
  const get = await fetch(proxy.url, {
    method: 'GET',
    headers: { accept: 'text/event-stream', 'mcp-session-id': SID, 'mcp-protocol-version': VERSION },
  });
  await getOpen;
  const reader = get.body!.getReader();
  let seen = '';
  const announced = (async () => {
    while (!seen.includes('list_changed')) {
      const { value, done } = await reader.read();
      if (done) break;
      seen += Buffer.from(value).toString('utf8');
    }
  })();

  await post('tools/list');
  await announced;
  await new Promise((r) => setTimeout(r, 50));

  // The tool the change added: the server answers it; nothing says it is unknown.
  await post('tools/call', { name: 'added', arguments: {} });
  const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.tool === 'added');
  const violations = proxy.log.records.filter((r) => r.msg === 'violation' && r.tool === 'added').map((r) => r.rule);
  assert.deepEqual(violations, [], `no finding on a call to the announced new tool (${JSON.stringify(record)})`);
  await reader.cancel();
  const session = proxy.sessions.find(`sid:${SID}`, performance.now());
  assert.ok(session, 'the session is known');
  assert.deepEqual([...session.tools.keys()], ['echo']);
  assert.equal(session.toolsComplete, false, 'the change announced after the list makes the catalogue stale');
});
