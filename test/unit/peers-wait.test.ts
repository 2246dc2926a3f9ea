// With --workers, a legacy session's stream fact reaches the other workers one IPC hop after the
// client may have read the endpoint event: a POST naming the session that lands on a worker which
// has not heard of it yet waits for the fact (then goes to the holder) instead of being answered
// "unknown session" at once; one whose fact never comes is served where it landed after the wait.
// Two real LegacyPeers on real loopback sockets; the fact is delivered by hand, late, as IPC would.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, test } from 'node:test';
import { request } from 'undici';
import { LegacyPeers, type PeerAddress } from '../../src/proxy/peers.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { LegacySessions } from '../../src/transport/legacy-sse.ts';
import { createLogCapture } from '../helpers/log-capture.ts';

const servers: Server[] = [];
after(() => {
  for (const s of servers) s.close();
});

/** A worker: its peers, its legacy sessions, and a server answering what it serves itself with its name. */
async function worker(
  name: string,
  headersTimeout?: number,
): Promise<{ peers: LegacyPeers; legacy: LegacySessions; port: number; address: PeerAddress }> {
  const peers = new LegacyPeers(createLogger({ destination: createLogCapture().stream }));
  const legacy = new LegacySessions('auto', '/mcp', 100);
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (peers.forward(req, res, () => server.emit('request', req, res))) return;
    req.resume();
    // Asked to, it says whom it takes the request to come from (the client's address, forwarded or not).
    req.once('end', () => res.end(req.headers['x-echo-peer'] ? `${name} ${req.socket.remoteAddress}` : name));
  });
  if (headersTimeout !== undefined) server.headersTimeout = headersTimeout;
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = await peers.listen({ server, legacy });
  return { peers, legacy, port: (server.address() as AddressInfo).port, address };
}

const post = async (port: number, path: string): Promise<string> => {
  const res = await request(`http://127.0.0.1:${port}${path}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
  return res.body.text();
};

test('a POST whose session fact is one hop behind waits for it and reaches the holder', async () => {
  const a = await worker('a');
  const b = await worker('b');
  a.peers.setPeer('2', b.address);
  const upstream = new URL('http://127.0.0.1:1/sse');
  b.legacy.learn('/messages?sessionId=s-1', upstream, 'http://127.0.0.1', 0);
  const answer = post(a.port, '/messages?sessionId=s-1');
  await new Promise((resolve) => setTimeout(resolve, 30));
  a.legacy.learnPeer({ kind: 'open', key: '/messages?sessionId=s-1', path: '/messages', named: 's-1' }, '2', 0);
  a.peers.learned();
  assert.equal(await answer, 'b');
});

test('a POST naming a session no worker turns out to hold is served where it landed, after the wait', async () => {
  const a = await worker('a');
  const b = await worker('b');
  a.peers.setPeer('2', b.address);
  // A fact about another session does not release it early to the wrong place.
  const answer = post(a.port, '/messages?sessionId=nobody');
  a.legacy.learnPeer({ kind: 'open', key: '/messages?sessionId=other', path: '/messages', named: 'other' }, '2', 0);
  a.peers.learned();
  assert.equal(await answer, 'a');
});

test("a worker's own session and Streamable HTTP traffic are served where they land", async () => {
  const a = await worker('a');
  const b = await worker('b');
  a.peers.setPeer('2', b.address);
  a.legacy.learn('/messages?sessionId=mine', new URL('http://127.0.0.1:1/sse'), 'http://127.0.0.1', 0);
  assert.equal(await post(a.port, '/messages?sessionId=mine'), 'a');
  assert.equal(await post(a.port, '/mcp'), 'a');
});

test("a client's own copy of the hop's client header does not reach the holder: the address it gives is the one the forwarder saw; one carrying the token's header is served where it landed", async () => {
  const a = await worker('a');
  const b = await worker('b');
  a.peers.setPeer('2', b.address);
  b.legacy.learn('/messages?sessionId=s-9', new URL('http://127.0.0.1:1/sse'), 'http://127.0.0.1', 0);
  a.legacy.learnPeer({ kind: 'open', key: '/messages?sessionId=s-9', path: '/messages', named: 's-9' }, '2', 0);
  const send = async (headers: Record<string, string>) =>
    (
      await request(`http://127.0.0.1:${a.port}/messages?sessionId=s-9`, {
        method: 'POST',
        headers: { 'x-echo-peer': '1', ...headers },
        body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
      })
    ).body.text();
  assert.equal(await send({ 'x-mcp-warden-peer-client': '6.6.6.6' }), 'b 127.0.0.1');
  // As if it had made the hop already (a store pointing a replica at another's MCP port): never sent on.
  assert.equal(await send({ 'x-mcp-warden-peer-client': '6.6.6.6', 'x-mcp-warden-peer-token': 'guess' }), 'a 127.0.0.1');
});

test('a connection to the peer port that sends no request is closed after the request-head timeout', { timeout: 10_000 }, async () => {
  const b = await worker('b', 300);
  const socket = connect(b.address.port, '127.0.0.1');
  // Read what the server may write first (node's 408): a paused socket would never see its end.
  socket.resume();
  const closed = await new Promise<boolean>((resolve) => {
    socket.once('close', () => resolve(true));
    socket.once('error', () => resolve(true));
  });
  assert.ok(closed);
});
