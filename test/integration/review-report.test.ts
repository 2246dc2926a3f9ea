// Review of #14 (report, trace context upstream): the real proxy, real sockets. Each test showed a
// bug the review found (each failed before its fix).
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, test } from 'node:test';
import { request } from 'undici';
import { defaultPolicy } from '../../src/config/compile.ts';
import { ReportReader } from '../../src/report/reader.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { Tracing } from '../../src/sinks/tracing.ts';
import { jsonRpcResult, sequence, startRawServer } from '../fixtures/raw-server.ts';
import { startProxy } from '../helpers/proxy.ts';

const closers: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const close of closers.reverse()) await close();
});

const OK = { content: [{ type: 'text', text: 'ok' }] };
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

test("a POST-level finding logged after its exchange record is not joined to the next exchange that reuses the request's id", async () => {
  // A stateless server: its first answer goes as text/plain (response-content-type), its second as it should.
  const plain = (_req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const { id } = JSON.parse(body.toString('utf8')) as { id: number };
    res.writeHead(200, { 'content-type': 'text/plain' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: OK }));
  };
  const upstream = await startRawServer(sequence(plain, jsonRpcResult(OK)));
  closers.push(() => upstream.close());
  const proxy = await startProxy(new URL('/mcp', upstream.url));
  closers.push(() => proxy.close());
  for (const name of ['broken', 'clean']) {
    const res = await request(proxy.url, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } }),
    });
    await res.body.text();
    await proxy.log.waitFor((r) => r.msg === 'exchange' && r.tool === name);
  }
  const finding = await proxy.log.waitFor((r) => r.msg === 'violation' && r.rule === 'response-content-type');
  assert.equal(finding.tool, 'broken', 'the proxy logged the finding on the POST of tool "broken"');

  const reader = new ReportReader(defaultPolicy(REWRITABLE));
  for (const r of proxy.log.records) reader.line(JSON.stringify(r));
  const d = reader.data(['log']);
  assert.equal(d.tools.find((t) => t.key === 'clean')?.findings, 0, 'nothing was found on the call of tool "clean"');
  assert.equal(d.summary.flagged, proxy.exchanges().filter((r) => Number(r.violations) > 0).length);
});

test("trace context: a body is edited only at _meta.traceparent, never in a tool's arguments", async () => {
  const otlp = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => otlp.listen(0, '127.0.0.1', resolve));
  closers.push(() => new Promise((resolve) => otlp.close(resolve)));
  const upstream = await startRawServer(jsonRpcResult(OK));
  closers.push(() => upstream.close());
  const tracing = Tracing.fromOptions({
    endpoint: `http://127.0.0.1:${(otlp.address() as AddressInfo).port}/v1/traces`,
    env: {},
    version: '0.0.0-test',
  })!;
  closers.push(() => tracing.shutdown());
  const proxy = await startProxy(new URL('/mcp', upstream.url), { tracing });
  closers.push(() => proxy.close());

  const client = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  // Valid JSON: _meta.traceparent is the same value, its dashes written as \u002d.
  const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"note":"${client}"},"_meta":{"traceparent":"${client.replaceAll('-', '\\u002d')}"}}}`;
  assert.equal((JSON.parse(body) as { params: { _meta: { traceparent: string } } }).params._meta.traceparent, client);
  const res = await request(proxy.url, { method: 'POST', headers: HEADERS, body });
  await res.body.text();
  const sent = JSON.parse(upstream.requests[0]!.body.toString('utf8')) as { params: { arguments: { note: string } } };
  assert.equal(sent.params.arguments.note, client, "the tool's argument reaches the server as the client wrote it");
});
