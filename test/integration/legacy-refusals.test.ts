// A legacy HTTP+SSE POST the server refuses (a 4xx or 5xx with an HTML page) under enforce: the
// official SDK's SSEClientTransport throws on a refused POST, so the client must still get the
// refusal's status, with a JSON-RPC error in the body instead of the page; a 202 would tell it the
// message went through, and an error with `id: null` on the stream matches none of its requests
// (issue 43). Each case is driven directly and through the proxy with the SDK's own client.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { loadPolicyFile } from '../../src/config/load.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { startLegacyServer } from '../fixtures/legacy-sse-server.ts';
import { startProxy } from '../helpers/proxy.ts';
import { shippedWith } from '../helpers/shipped-policy.ts';

const loaded = await loadPolicyFile(new URL('../../config/enforce.yaml', import.meta.url).pathname, { rewritable: REWRITABLE });
assert.ok(loaded.ok);
const enforce = loaded.policy;
/** enforce.yaml with a body that is not JSON forwarded (not blocked), so that the server's refusal of it is what enforce rewrites. */
const envelopeLogged = await shippedWith('enforce', { 'request-envelope': 'log' });

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

/** A tool name whose POST this client's fetch sends as a body that is not JSON (the SDK itself always writes JSON). */
const GARBLE = 'garble-this-post';
const garbling: typeof fetch = (input, init) =>
  fetch(input, typeof init?.body === 'string' && init.body.includes(GARBLE) ? { ...init, body: '{"jsonrpc":"2.0",}' } : init);

/** The SDK's legacy client connected to `url`; closed after the file. */
async function sdkClient(url: URL): Promise<{ client: Client; transport: SSEClientTransport }> {
  const transport = new SSEClientTransport(url, { fetch: garbling });
  const client = new Client({ name: 'legacy-refusal-test', version: '1.0.0' });
  await client.connect(transport);
  closers.push(() => client.close());
  return { client, transport };
}

/** The error the SDK's send throws for a refused POST: its status, and the body it quotes. */
function refusal(err: unknown): { status: number; body: string } {
  assert.ok(err instanceof Error, String(err));
  const m = /^Error POSTing to endpoint \(HTTP (\d+)\): ([\s\S]*)$/.exec(err.message);
  assert.ok(m, err.message);
  return { status: Number(m[1]), body: m[2]! };
}

describe('enforce keeps a refused legacy POST a failure the SDK client sees', async () => {
  const server = await startLegacyServer();
  closers.push(() => server.close());
  const proxy = await startProxy(server.sse, { policy: () => enforce });
  closers.push(() => proxy.close());
  const forwarding = await startProxy(server.sse, { policy: () => envelopeLogged });
  closers.push(() => forwarding.close());
  const message = { jsonrpc: '2.0' as const, id: 7, method: 'tools/call', params: { name: GARBLE } };

  test('a body that is not JSON, refused 400 with an HTML page: the send fails with 400 and -32700 (id null) in the body', async () => {
    const direct = await sdkClient(server.sse);
    const directErr = await direct.transport.send(message).then(() => undefined, refusal);
    assert.equal(directErr?.status, 400, 'the refusal the client sees without the proxy');
    const through = await sdkClient(forwarding.url);
    const err = await through.transport.send(message).then(() => undefined, refusal);
    assert.ok(err, 'the send through the proxy fails as it does directly: a 202 would hide the refusal');
    assert.equal(err.status, 400);
    const body = JSON.parse(err.body) as { id: unknown; error: { code: number; data: { reason: string } } };
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32700);
    assert.equal(body.error.data.reason, 'parse-error-unanswered', "the server's refusal, rewritten");
    assert.doesNotMatch(err.body, /node_modules|SyntaxError|<html/);
  });

  test('enforce.yaml blocks the body itself (request-envelope): the send fails with 400 and -32700 (id null), the server never gets it', async () => {
    const before = server.requests.filter((r) => r.method === 'POST').length;
    const { transport } = await sdkClient(proxy.url);
    const err = await transport.send(message).then(() => undefined, refusal);
    assert.ok(err, 'refused: a 202 would tell the client its message went through');
    assert.equal(err.status, 400);
    const body = JSON.parse(err.body) as { id: unknown; error: { code: number; data: { rule: string } } };
    assert.deepEqual([body.id, body.error.code, body.error.data.rule], [null, -32700, 'request-envelope']);
    // The SDK's initialize and initialized reached the server; the garbled POST did not.
    assert.equal(server.requests.filter((r) => r.method === 'POST').length, before + 2);
  });

  test('a tools/call refused 500 with a stack trace page: callTool fails, the status kept, a JSON-RPC error with its id instead of the page', async () => {
    const direct = await sdkClient(server.sse);
    await assert.rejects(direct.client.callTool({ name: 'crash', arguments: {} }), (e: unknown) => refusal(e).status === 500);
    const { client } = await sdkClient(proxy.url);
    let body = '';
    await assert.rejects(client.callTool({ name: 'crash', arguments: {} }), (e: unknown) => {
      const r = refusal(e);
      body = r.body;
      return r.status === 500;
    });
    const answer = JSON.parse(body) as { id: unknown; error: { code: number } };
    assert.equal(typeof answer.id, 'number');
    assert.equal(answer.error.code, -32603);
    assert.doesNotMatch(body, /node_modules|TypeError|<html/);
    // The session goes on: the refusal ended nothing.
    const ok = await client.callTool({ name: 'echo', arguments: { message: 'still here' } });
    assert.deepEqual(ok.content, [{ type: 'text', text: 'Echo: still here' }]);
  });
});
