// Compressed answers (issue 10, item 3). A server behind compression middleware answers a client
// that sent Accept-Encoding: the proxy decodes to judge (bounded by the audit limit, on what the
// body decodes to), forwards unedited bytes as they came, and sends what it edited unencoded.
//
// 1. The official SDK client -> proxy -> the SDK's McpServer behind Express 5 + `compression`, JSON
//    and SSE, in gzip (what Node 20's fetch asks for: `accept-encoding: gzip, deflate`, checked on
//    the wire) and br (the client asks for it), under audit and under config/enforce.yaml.
// 2. A raw server for what middleware does not send: deflate, br and stacked codings, an unknown
//    coding, corrupt data, and a decompression bomb over the audit limit.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadPolicyFile } from '../../src/config/load.ts';
import type { Policy } from '../../src/config/types.ts';
import { REWRITABLE } from '../../src/rewrite/rewriters.ts';
import { REPORT, SILENT_FAILURE, SILENT_TEXT, startCompressedServer } from '../fixtures/compressed-server.ts';
import { byTool, startRawServer, type RawHandler } from '../fixtures/raw-server.ts';
import { call, post, within } from '../helpers/faults.ts';
import type { LogRecord } from '../helpers/log-capture.ts';
import { startProxy, type TestProxy } from '../helpers/proxy.ts';

const running: Array<{ close(): Promise<void> }> = [];
after(async () => {
  for (const r of running.reverse()) await r.close();
});

async function shipped(name: 'enforce.yaml'): Promise<Policy> {
  const loaded = await loadPolicyFile(`config/${name}`, { rewritable: REWRITABLE });
  assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.errors));
  return loaded.policy;
}
const enforce = await shipped('enforce.yaml');
type PolicyName = 'audit' | 'enforce';
/** Audit is the proxy's default policy (every rule logged, nothing changed). */
const policyOption = (p: PolicyName) => (p === 'enforce' ? { policy: () => enforce } : {});

const violations = (proxy: TestProxy, where: (r: LogRecord) => boolean = () => true): LogRecord[] =>
  proxy.log.records.filter((r) => r.msg === 'violation' && where(r));
const rulesOf = (records: LogRecord[]): string[] => records.map((r) => String(r.rule));

interface SeenResponse {
  method: string;
  status: number;
  contentEncoding: string | null;
}

/** The SDK client over Streamable HTTP, with a fetch that notes each response's Content-Encoding (fetch itself decodes). */
async function sdkClient(url: URL, acceptEncoding: string | undefined): Promise<{ client: Client; seen: SeenResponse[] }> {
  const seen: SeenResponse[] = [];
  const noting = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init);
    seen.push({ method: init?.method ?? 'GET', status: res.status, contentEncoding: res.headers.get('content-encoding') });
    return res;
  };
  const client = new Client({ name: 'warden-compression-client', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: noting,
    ...(acceptEncoding ? { requestInit: { headers: { 'accept-encoding': acceptEncoding } } } : {}),
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 10, maxReconnectionDelay: 10, reconnectionDelayGrowFactor: 1 },
  });
  await client.connect(transport);
  running.push(client);
  return { client, seen };
}

const textOf = (r: Record<string, unknown>): string => (r.content as Array<{ text?: string }>)[0]?.text ?? '';

/** The raw bytes of a tools/call answer, undecoded, and the headers they came with. */
async function rawCall(url: URL, id: string, tool: string, acceptEncoding: string) {
  const res = await post(url, call(id, tool), { 'accept-encoding': acceptEncoding });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, encoding: res.headers['content-encoding'], type: res.headers['content-type'], bytes };
}

describe('the SDK client through the proxy to an SDK server behind compression middleware', () => {
  // [coding the server answers in, Accept-Encoding the client sets (none: fetch's own)]
  const CODINGS = [
    ['gzip', undefined],
    ['br', 'br, gzip, deflate'],
  ] as const;
  for (const mode of ['json', 'sse'] as const) {
    for (const [coding, acceptEncoding] of CODINGS) {
      test(`${mode}, ${coding}, audit: connects, lists, calls; gets the server's bytes; judged decoded`, async () => {
        const upstream = await startCompressedServer({ mode });
        running.push(upstream);
        const proxy = await startProxy(upstream.url);
        running.push(proxy);
        const { client, seen } = await sdkClient(proxy.url, acceptEncoding);

        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['open_report', 'report']);
        const ok = await client.callTool({ name: 'report', arguments: {} });
        assert.equal(textOf(ok), REPORT);
        assert.equal(ok.isError, undefined);
        const silent = await client.callTool({ name: 'open_report', arguments: {} });
        assert.ok(textOf(silent).startsWith(SILENT_FAILURE));
        assert.equal(silent.isError, undefined, 'audit changes nothing');

        // What the client asked for reached the server, and every answer with a body came back in it.
        const posts = upstream.exchanges.filter((e) => e.method === 'POST');
        assert.equal(posts[0]!.headers['accept-encoding'], acceptEncoding ?? 'gzip, deflate', 'what fetch sends, forwarded upstream');
        const encoded = posts.filter((e) => e.contentEncoding !== undefined);
        assert.equal(encoded.length, 4, 'initialize, tools/list and both calls were compressed');
        assert.ok(encoded.every((e) => e.contentEncoding === coding));
        const bodies = seen.filter((s) => s.method === 'POST' && s.status === 200);
        assert.deepEqual(
          bodies.map((s) => s.contentEncoding),
          [coding, coding, coding, coding],
          "the client got them in the server's coding",
        );

        // Byte for byte what a direct connection gets.
        const direct = await rawCall(upstream.url, 'cmp', 'open_report', acceptEncoding ?? 'gzip, deflate');
        const proxied = await rawCall(proxy.url, 'cmp', 'open_report', acceptEncoding ?? 'gzip, deflate');
        assert.equal(direct.encoding, coding);
        assert.deepEqual(
          { status: proxied.status, encoding: proxied.encoding, type: proxied.type },
          { status: direct.status, encoding: direct.encoding, type: direct.type },
        );
        assert.ok(proxied.bytes.equals(direct.bytes), 'the same compressed bytes');

        const call = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.tool === 'open_report' && r.id === 'cmp');
        assert.equal(call.outcome, 'result');
        assert.equal(call.transport, mode);
        const all = violations(proxy);
        assert.ok(!rulesOf(all).some((r) => r.endsWith('-body')), `no body finding: ${rulesOf(all).join(', ')}`);
        assert.deepEqual(
          rulesOf(violations(proxy, (r) => r.tool === 'open_report')),
          ['silent-success', 'silent-success'],
          'both calls of open_report',
        );
        assert.deepEqual(rulesOf(violations(proxy, (r) => r.tool === 'report')), []);
        assert.equal(
          proxy.log.find((r) => String(r.msg).startsWith('undecodable') || String(r.msg).startsWith('unaudited')),
          undefined,
        );
      });

      test(`${mode}, ${coding}, enforce: the silent failure arrives as isError: true, and everything decodes`, async () => {
        const upstream = await startCompressedServer({ mode });
        running.push(upstream);
        const proxy = await startProxy(upstream.url, policyOption('enforce'));
        running.push(proxy);
        const { client, seen } = await sdkClient(proxy.url, acceptEncoding);

        const { tools } = await client.listTools();
        assert.equal(tools.length, 2);
        const ok = await client.callTool({ name: 'report', arguments: {} });
        assert.equal(textOf(ok), REPORT);
        assert.equal(ok.isError, undefined);
        const silent = await client.callTool({ name: 'open_report', arguments: {} });
        assert.equal(silent.isError, true, 'rewritten by silent-success');
        assert.ok(textOf(silent).startsWith(SILENT_FAILURE), 'the text is kept');

        const bodies = seen.filter((s) => s.method === 'POST' && s.status === 200);
        // JSON: unedited bodies as they came, the edited one unencoded. SSE: events can only be
        // replaced in the clear, so under enforce a compressed stream goes out decoded.
        const expected = mode === 'json' ? [coding, coding, coding, null] : [null, null, null, null];
        assert.deepEqual(
          bodies.map((s) => s.contentEncoding),
          expected,
        );

        const rewrite = await proxy.log.waitFor((r) => r.msg === 'rewrite' && r.tool === 'open_report');
        assert.deepEqual(rewrite.rules, ['silent-success']);
        const all = violations(proxy);
        assert.ok(!rulesOf(all).some((r) => r.endsWith('-body')), `no body finding: ${rulesOf(all).join(', ')}`);
      });
    }
  }
});

// ---- raw upstreams -------------------------------------------------------------------------

const silentResult = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: SILENT_TEXT }] } });
const sseOf = (json: string) => `event: message\ndata: ${json}\n\n`;

/** Answers a tools/call with `encode(body)` under `Content-Encoding: coding`, as JSON or as one SSE event. */
function encoded(coding: string, encode: (b: Buffer) => Buffer, transport: 'json' | 'sse' = 'json'): RawHandler {
  return (_req, res, body) => {
    const { id } = JSON.parse(body.toString('utf8')) as { id: string };
    const json = silentResult(id);
    const bytes = encode(Buffer.from(transport === 'json' ? json : sseOf(json)));
    res.writeHead(200, { 'content-type': transport === 'json' ? 'application/json' : 'text/event-stream', 'content-encoding': coding });
    res.end(bytes);
  };
}

const BR = (b: Buffer) => zlib.brotliCompressSync(b, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } });
const GZIP = (b: Buffer) => zlib.gzipSync(b);

async function rawSetup(handler: RawHandler, policy: PolicyName, limits: { auditBodyBytes?: number } = {}) {
  const upstream = await startRawServer(handler);
  running.push(upstream);
  const proxy = await startProxy(new URL('/mcp', upstream.url), { ...policyOption(policy), limits });
  running.push(proxy);
  return { upstream, proxy };
}

/** A plain call through the same proxy still works after the fault. */
async function assertStillServes(proxy: TestProxy): Promise<void> {
  const res = await post(proxy.url, call('after', 'plain'));
  assert.equal(res.statusCode, 200);
  assert.equal(((await res.body.json()) as { id: unknown }).id, 'after');
}

describe('codings the middleware rarely sends: deflate, br, x-gzip, a stacked list', () => {
  const CASES: Array<[string, (b: Buffer) => Buffer]> = [
    ['deflate', (b) => zlib.deflateSync(b)],
    ['br', BR],
    ['x-gzip', GZIP],
    // Applied in the order listed: gzip first, then br.
    ['gzip, br', (b) => BR(GZIP(b))],
  ];
  // Where Node has it (22.15+, 23.8+); Node 20 does not, and treats zstd as an unknown coding.
  const zstd = (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;
  if (zstd) CASES.push(['zstd', (b) => zstd(b)]);
  for (const [coding, encode] of CASES) {
    for (const transport of ['json', 'sse'] as const) {
      test(`${coding}, ${transport}: audit relays the bytes as they came and judges them decoded`, async () => {
        const { proxy } = await rawSetup(byTool({ silent: encoded(coding, encode, transport) }), 'audit');
        const direct = encode(Buffer.from(transport === 'json' ? silentResult('a') : sseOf(silentResult('a'))));
        const got = await rawCall(proxy.url, 'a', 'silent', 'gzip, deflate, br');
        assert.equal(got.encoding, coding);
        assert.ok(got.bytes.equals(direct), 'the same bytes');
        const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'a');
        assert.equal(record.outcome, 'result');
        assert.deepEqual(rulesOf(violations(proxy, (r) => r.id === 'a')), ['silent-success']);
      });

      test(`${coding}, ${transport}: enforce sends the edited answer unencoded`, async () => {
        const { proxy } = await rawSetup(byTool({ silent: encoded(coding, encode, transport) }), 'enforce');
        const got = await rawCall(proxy.url, 'e', 'silent', 'gzip, deflate, br');
        assert.equal(got.status, 200);
        assert.equal(got.encoding, undefined, 'no Content-Encoding on what the proxy wrote');
        const text = got.bytes.toString('utf8');
        const message = JSON.parse(transport === 'json' ? text : text.replace(/^event: message\ndata: /, '')) as {
          id: string;
          result: { isError?: boolean };
        };
        assert.equal(message.id, 'e');
        assert.equal(message.result.isError, true);
        const rewrite = await proxy.log.waitFor((r) => r.msg === 'rewrite' && r.id === 'e');
        assert.deepEqual(rewrite.rules, ['silent-success']);
      });
    }
  }
});

describe('a coding the proxy cannot decode', () => {
  // LZW ("compress") is registered for HTTP but Node has no decoder for it.
  const LZW = Buffer.from([0x1f, 0x9d, 0x90, 0x7b, 0x44, 0xe8, 0x80, 0x01, 0x02, 0xff, 0xfe]);
  const unknown =
    (transport: 'json' | 'sse'): RawHandler =>
    (_req, res) => {
      res.writeHead(200, {
        'content-type': transport === 'json' ? 'application/json' : 'text/event-stream',
        'content-encoding': 'compress',
      });
      res.end(LZW);
    };
  for (const policy of ['audit', 'enforce'] as const) {
    for (const transport of ['json', 'sse'] as const) {
      test(`${transport}, ${policy}: passes through unjudged and unchanged, and the log says why`, async () => {
        const { proxy } = await rawSetup(byTool({ lzw: unknown(transport) }), policy);
        const got = await rawCall(proxy.url, 'u', 'lzw', 'compress, gzip');
        assert.equal(got.status, 200);
        assert.equal(got.encoding, 'compress');
        assert.ok(got.bytes.equals(LZW), 'the bytes as they came');
        const unread = await proxy.log.waitFor((r) => r.msg === (transport === 'json' ? 'unaudited body' : 'unaudited stream'));
        assert.equal(unread.reason, 'unknown-content-encoding');
        assert.equal(unread.contentEncoding, 'compress');
        const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'u');
        assert.equal(record.outcome, 'unaudited');
        assert.deepEqual(rulesOf(violations(proxy, (r) => r.id === 'u')), ['unaudited-response'], 'not judged as garbage');
        await assertStillServes(proxy);
      });
    }
  }
});

describe('corrupt compressed data', () => {
  const json = Buffer.from(silentResult('c'));
  const gz = GZIP(json);
  const BODIES: Array<[string, Buffer]> = [
    // A common misconfiguration: the header says gzip, the body is plain.
    ['plain JSON labelled gzip', json],
    // A valid gzip header, then bytes that are not deflate data.
    ['gzip with its data overwritten', Buffer.concat([gz.subarray(0, 10), Buffer.alloc(gz.length - 10, 0xff)])],
  ];
  const corrupt =
    (bytes: Buffer, transport: 'json' | 'sse'): RawHandler =>
    (_req, res) => {
      res.writeHead(200, { 'content-type': transport === 'json' ? 'application/json' : 'text/event-stream', 'content-encoding': 'gzip' });
      res.end(bytes);
    };
  for (const [what, bytes] of BODIES) {
    for (const transport of ['json', 'sse'] as const) {
      test(`${what}, ${transport}, audit: relayed as it came, with a finding`, async () => {
        const { proxy } = await rawSetup(byTool({ bad: corrupt(bytes, transport) }), 'audit');
        const got = await rawCall(proxy.url, 'c', 'bad', 'gzip');
        assert.equal(got.encoding, 'gzip');
        assert.ok(got.bytes.equals(bytes), 'the bytes as they came');
        const undecodable = await proxy.log.waitFor((r) => r.msg === (transport === 'json' ? 'undecodable body' : 'undecodable stream'));
        assert.match(String(undecodable.detail), /^gzip data that does not decode \(.+\)$/);
        const finding = await proxy.log.waitFor((r) => r.msg === 'violation' && r.id === 'c');
        assert.equal(finding.rule, 'non-utf8-body');
        assert.match(String(finding.evidence), /gzip data that does not decode/);
        assert.equal(finding.applied, false);
        await assertStillServes(proxy);
      });

      test(`${what}, ${transport}, enforce: a JSON-RPC error with the request's id, unencoded`, async () => {
        const { proxy } = await rawSetup(byTool({ bad: corrupt(bytes, transport) }), 'enforce');
        const got = await rawCall(proxy.url, 'c', 'bad', 'gzip');
        assert.equal(got.status, 200);
        assert.equal(got.encoding, undefined);
        const text = got.bytes.toString('utf8');
        const data = transport === 'json' ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '');
        const message = JSON.parse(data) as { jsonrpc: string; id: unknown; error: { code: number; data: { reason: string } } };
        assert.equal(message.jsonrpc, '2.0');
        assert.equal(message.id, 'c');
        assert.equal(message.error.code, -32603);
        assert.equal(message.error.data.reason, 'non-utf8-body');
        const finding = await proxy.log.waitFor((r) => r.msg === 'violation' && r.id === 'c');
        assert.equal(finding.applied, true);
        await assertStillServes(proxy);
      });
    }
  }
});

describe('a decompression bomb over the audit limit', async () => {
  const LIMIT = 1024 * 1024;
  const head = '{"jsonrpc":"2.0","id":"bomb","result":{"content":[{"type":"text","text":"';
  const tail = '"}]}}';
  /**
   * `decoded` bytes of JSON, compressed by `coder` a MiB at a time: never the whole text in memory
   * (256 MiB allocated at once costs seconds of page faults on a small VM).
   */
  const bomb = async (coder: Transform, decoded: number): Promise<Buffer> => {
    const chunk = Buffer.alloc(1024 * 1024, 0x78);
    async function* text() {
      yield Buffer.from(head);
      for (let left = decoded - head.length - tail.length; left > 0; left -= chunk.length)
        yield left >= chunk.length ? chunk : chunk.subarray(0, left);
      yield Buffer.from(tail);
    }
    const out: Buffer[] = [];
    await pipeline(Readable.from(text()), coder, async (compressed: AsyncIterable<Buffer>) => {
      for await (const c of compressed) out.push(c);
    });
    return Buffer.concat(out);
  };
  const BOMBS = [
    // ~470 bytes: brotli always decodes as a stream.
    ['br', await bomb(zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } }), 256 * 1024 * 1024)],
    // ~65 KB: inflate first runs synchronously, capped at 256 KiB, then as a stream up to the limit.
    ['gzip', await bomb(zlib.createGzip(), 64 * 1024 * 1024)],
  ] as const;

  for (const [coding, bomb] of BOMBS) {
    for (const policy of ['audit', 'enforce'] as const) {
      test(`${coding} (${bomb.length} bytes), ${policy}: decoding stops at the audit limit; the bytes go through unaudited, as they came`, async () => {
        const { proxy } = await rawSetup(
          byTool({
            bomb: (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding }).end(bomb),
          }),
          policy,
          { auditBodyBytes: LIMIT },
        );
        let peak = 0;
        const base = process.memoryUsage().arrayBuffers;
        const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers - base)), 2);
        const got = await within(10_000, 'the bomb relayed', rawCall(proxy.url, 'bomb', 'bomb', coding));
        clearInterval(sampler);
        assert.equal(got.encoding, coding);
        assert.ok(got.bytes.equals(bomb), 'the bytes as they came');
        assert.ok(peak < 32 * 1024 * 1024, `buffers grew by ${(peak / 2 ** 20).toFixed(1)} MiB while the proxy read the bomb`);
        const unread = await proxy.log.waitFor((r) => r.msg === 'unaudited body');
        assert.equal(unread.limit, LIMIT);
        const record = await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'bomb');
        assert.equal(record.outcome, 'unaudited');
        assert.deepEqual(rulesOf(violations(proxy, (r) => r.id === 'bomb')), ['unaudited-response']);
        await assertStillServes(proxy);
      });
    }
  }

  test('a gzip bomb under a limit below the synchronous cap stops there too', async () => {
    const { proxy } = await rawSetup(
      byTool({
        bomb: (_req, res) => void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(BOMBS[1][1]),
      }),
      'enforce',
      { auditBodyBytes: 64 * 1024 },
    );
    const got = await rawCall(proxy.url, 'bomb', 'bomb', 'gzip');
    assert.ok(got.bytes.equals(BOMBS[1][1]));
    assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'bomb')).outcome, 'unaudited');
  });

  test('what a body decodes to up to the limit is judged; one byte more is not', async () => {
    // Ids of one length, so both bodies differ by the one byte.
    const at = (id: 'fits' | 'over', n: number) =>
      Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: 'x'.repeat(n) }] } }));
    const size = at('fits', 0).length;
    const gzipped =
      (bytes: Buffer): RawHandler =>
      (_req, res) =>
        void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(GZIP(bytes));
    const { proxy } = await rawSetup(
      byTool({ fits: gzipped(at('fits', LIMIT - size)), over: gzipped(at('over', LIMIT - size + 1)) }),
      'audit',
      { auditBodyBytes: LIMIT },
    );
    await rawCall(proxy.url, 'fits', 'fits', 'gzip');
    assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'fits')).outcome, 'result');
    await rawCall(proxy.url, 'over', 'over', 'gzip');
    assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 'over')).outcome, 'unaudited');
  });
});

describe('a compressed SSE stream is read as it arrives', () => {
  const progress = '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}';

  /** gzip, flushed after each event (what `res.flush()` does under compression middleware); holds before the last until released. */
  function flushedGzip(events: string[], held: Promise<void>, sent: Buffer[]): RawHandler {
    return async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
      const gz = zlib.createGzip();
      gz.on('data', (c: Buffer) => {
        sent.push(c);
        res.write(c);
      });
      for (const [i, e] of events.entries()) {
        if (i === events.length - 1) await held;
        gz.write(e);
        await new Promise<void>((r) => gz.flush(() => r()));
      }
      // 'end': the gzip trailer has been read out (and written), not only handed in.
      const ended = new Promise<void>((r) => gz.once('end', r));
      gz.end();
      await ended;
      res.end();
    };
  }

  for (const policy of ['audit', 'enforce'] as const) {
    test(`${policy}: the answer is judged (and, under enforce, rewritten) while the stream is still open`, {
      timeout: 10_000,
    }, async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const sent: Buffer[] = [];
      const events = [sseOf(progress), sseOf(silentResult('s')), sseOf(progress)];
      const { proxy } = await rawSetup(byTool({ stream: flushedGzip(events, held, sent) }), policy);
      const res = await post(proxy.url, call('s', 'stream'), { 'accept-encoding': 'gzip' });
      assert.equal(res.headers['content-encoding'], policy === 'audit' ? 'gzip' : undefined);
      const got: Buffer[] = [];
      // Under audit the client reads the server's gzip; under enforce the decoded events.
      const inflate = policy === 'audit' ? zlib.createGunzip({ flush: zlib.constants.Z_SYNC_FLUSH }) : undefined;
      let text = '';
      inflate?.on('data', (c: Buffer) => (text += c.toString('utf8')));
      try {
        for await (const chunk of res.body) {
          got.push(chunk as Buffer);
          if (inflate) await new Promise<void>((r) => inflate.write(chunk, () => r()));
          else text += (chunk as Buffer).toString('utf8');
          if (text.includes('"id":"s"')) {
            // The answer went through, and was judged, before the server sent the last event.
            const finding = await proxy.log.waitFor((r) => r.msg === 'violation' && r.id === 's');
            assert.equal(finding.rule, 'silent-success');
            if (policy === 'enforce') assert.match(text, /"isError":true/);
            release();
          }
        }
      } finally {
        release();
        res.body.destroy();
      }
      if (policy === 'audit') assert.ok(Buffer.concat(got).equals(Buffer.concat(sent)), "the server's bytes, as they came");
      else
        assert.equal(
          text,
          `${sseOf(progress)}${sseOf(JSON.stringify({ jsonrpc: '2.0', id: 's', result: { content: [{ type: 'text', text: SILENT_TEXT }], isError: true } }))}${sseOf(progress)}`,
        );
      assert.equal((await proxy.log.waitFor((r) => r.msg === 'exchange' && r.id === 's')).outcome, 'result');
    });
  }

  // The connection ends right behind the event's bytes: they reach the proxy with the break, while
  // its decoder (off the thread) still holds them. The event was lost that way under load.
  test('enforce: the server breaks a compressed stream: the events that decoded, then a JSON-RPC error with the id', async () => {
    const { proxy } = await rawSetup(
      byTool({
        cut: (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
          // A gzip stream flushed after its first event, cut there (no last block, no trailer).
          const head = zlib.gzipSync(sseOf(progress), { finishFlush: zlib.constants.Z_SYNC_FLUSH });
          res.write(head, () => res.socket?.destroy());
        },
      }),
      'enforce',
    );
    const got = await rawCall(proxy.url, 'cut', 'cut', 'gzip');
    assert.equal(got.encoding, undefined);
    const [first, second] = got.bytes.toString('utf8').split('\n\n');
    assert.equal(`${first}\n\n`, sseOf(progress));
    const message = JSON.parse(/^data: (.*)$/m.exec(second ?? '')?.[1] ?? '') as { id: unknown; error: { data: { reason: string } } };
    assert.equal(message.id, 'cut');
    assert.equal(message.error.data.reason, 'no-response');
    await assertStillServes(proxy);
  });

  for (const policy of ['audit', 'enforce'] as const) {
    test(`${policy}: the client leaves a compressed stream: the upstream request is closed too`, { timeout: 10_000 }, async () => {
      let closed!: () => void;
      const upstreamClosed = new Promise<void>((r) => (closed = r));
      const { proxy } = await rawSetup(
        byTool({
          open: (_req, res) => {
            res.on('close', () => closed());
            res.writeHead(200, { 'content-type': 'text/event-stream', 'content-encoding': 'gzip' });
            const gz = zlib.createGzip();
            gz.on('data', (c: Buffer) => res.write(c));
            gz.write(sseOf(progress));
            gz.flush();
          },
        }),
        policy,
      );
      const res = await post(proxy.url, call('gone', 'open'), { 'accept-encoding': 'gzip' });
      for await (const _chunk of res.body) break;
      await within(2000, 'the upstream response closed', upstreamClosed);
      await assertStillServes(proxy);
    });
  }
});
