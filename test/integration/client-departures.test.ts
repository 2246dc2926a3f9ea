// Issue #44, item 3: a client that leaves (a TCP reset or a close between requests, while it sends
// its request, while its answer is written) is not a proxy error. It is logged at debug and counted
// in mcp_warden_client_disconnects_total{when}; mcp_warden_proxy_errors_total counts only answers the
// proxy gave itself. Raw sockets, so the reset comes exactly where each test puts it.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startRawServer } from '../fixtures/raw-server.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** Resolves when the server has a request it does not answer (resources/list). */
let held: () => void = () => {};

/** A proxy in front of a server that answers tools/list as JSON, holds resources/list unanswered, and answers anything else with an SSE stream it keeps open. */
async function setup(): Promise<TestProxy> {
  const upstream = await startRawServer((_req, res, body) => {
    const msg = JSON.parse(body.toString()) as { id: number; method: string };
    if (msg.method === 'resources/list') return held();
    if (msg.method === 'tools/list') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { tools: [] } }));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\n\n');
  });
  const proxy = await startProxy(new URL('/mcp', upstream.url));
  closers.push(
    () => upstream.close(),
    () => proxy.close(),
  );
  return proxy;
}

/** A raw keep-alive connection to the proxy. */
function open(proxy: TestProxy): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(proxy.url.port), '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

const head = (proxy: TestProxy, length: number) =>
  `POST /mcp HTTP/1.1\r\nhost: ${proxy.url.host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${length}\r\n\r\n`;

/** Resolves once `text` arrived on the socket. */
function received(socket: Socket, text: string): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      if (!seen.includes(text)) return;
      socket.off('data', onData);
      resolve();
    };
    socket.on('data', onData);
  });
}

async function assertDeparture(proxy: TestProxy, when: string): Promise<void> {
  const record = await proxy.log.waitFor((r) => r.msg === 'client disconnected');
  assert.equal(record.level, 20, 'logged at debug');
  assert.equal(record.when, when);
  const metrics = await proxy.metrics.registry.metrics();
  assert.match(metrics, new RegExp(`^mcp_warden_client_disconnects_total\\{when="${when}"\\} 1$`, 'm'));
  assert.doesNotMatch(metrics, /^mcp_warden_proxy_errors_total\{/m, 'no answer of the proxy counted');
  const warned = proxy.log.records.filter((r) => (r.level as number) >= 40);
  assert.deepEqual(warned, [], 'nothing at warn or above');
}

/** Sends `message`, leaves once `reached` resolves; the departure is counted by `when`, the exchange logged client-closed. */
async function leavesDuring(
  leave: (socket: Socket) => void,
  message: { id: number; [key: string]: unknown },
  reached: (socket: Socket) => Promise<unknown>,
  when: string,
): Promise<void> {
  const proxy = await setup();
  const socket = await open(proxy);
  const body = JSON.stringify(message);
  const at = reached(socket);
  socket.write(head(proxy, Buffer.byteLength(body)) + body);
  await at;
  leave(socket);
  await assertDeparture(proxy, when);
  const exchange = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === message.id);
  assert.equal(exchange.outcome, 'client-closed');
}

const LEAVES: Array<[string, (socket: Socket) => void]> = [
  ['resets', (socket) => socket.resetAndDestroy()],
  ['closes', (socket) => socket.end()],
];

for (const [how, leave] of LEAVES)
  describe(`a client that ${how} its connection is not a proxy error`, () => {
    test('between requests (idle keep-alive)', async () => {
      const proxy = await setup();
      const socket = await open(proxy);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const answered = received(socket, '"tools":[]');
      socket.write(head(proxy, Buffer.byteLength(body)) + body);
      await answered;
      await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 1);
      leave(socket);
      await assertDeparture(proxy, 'idle');
    });

    test('while it sends its request body', async () => {
      const proxy = await setup();
      const socket = await open(proxy);
      const reading = new Promise((resolve) => proxy.server.once('request', resolve));
      socket.write(`${head(proxy, 200)}{"jsonrpc":"2.0",`);
      // The head is read and the body awaited: the client leaves mid-request.
      await reading;
      leave(socket);
      await assertDeparture(proxy, 'request');
    });

    test('after its request, while the server has not answered yet', () =>
      leavesDuring(
        leave,
        { jsonrpc: '2.0', id: 4, method: 'resources/list' },
        () => new Promise<void>((resolve) => (held = resolve)),
        'request',
      ));

    test('while its answer (an SSE stream) is written', () =>
      leavesDuring(
        leave,
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } },
        (socket) => received(socket, 'notifications/progress'),
        'response',
      ));
  });

test('a connection the proxy closes itself (its answer said connection: close) is no departure', async () => {
  const proxy = await setup();
  const socket = await open(proxy);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
  const closed = new Promise((resolve) => socket.once('end', resolve).resume());
  socket.write(head(proxy, Buffer.byteLength(body)).replace('\r\n\r\n', '\r\nconnection: close\r\n\r\n') + body);
  await closed;
  socket.end();
  await new Promise((resolve) => socket.once('close', resolve));
  await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 3);
  assert.doesNotMatch(await proxy.metrics.registry.metrics(), /^mcp_warden_client_disconnects_total\{/m);
  assert.equal(
    proxy.log.find((r) => r.msg === 'client disconnected'),
    undefined,
  );
});
