import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { classify, type JsonRpcId } from '../../src/codec/jsonrpc.ts';
import { PROXY_ERRORS, ProxyError, type ProxyErrorCode } from '../../src/errors.ts';
import { clientHeaders, proxyErrorBody } from '../../src/transport/egress.ts';
import { connectionTokens, upstreamHeaders } from '../../src/transport/ingress.ts';

describe('connectionTokens', () => {
  test('names listed in Connection, trimmed and lower-cased', () => {
    assert.deepEqual(connectionTokens({ connection: 'close' }), new Set(['close']));
    assert.deepEqual(connectionTokens({ connection: ' Keep-Alive , X-Trace,,  Upgrade ' }), new Set(['keep-alive', 'x-trace', 'upgrade']));
  });

  test('no Connection header, an empty one, or a non-string gives no names', () => {
    assert.equal(connectionTokens({}).size, 0);
    assert.equal(connectionTokens({ connection: '' }).size, 0);
    assert.equal(connectionTokens({ connection: ' , ' }).size, 0);
    assert.equal(connectionTokens({ connection: ['close'] }).size, 0);
    assert.equal(connectionTokens({ connection: 1 }).size, 0);
  });
});

describe('clientHeaders', () => {
  const upstream: IncomingHttpHeaders = {
    'content-type': 'text/event-stream',
    'content-length': '42',
    'cache-control': 'no-cache',
    connection: 'keep-alive, X-Trace-Hop',
    'keep-alive': 'timeout=5',
    'transfer-encoding': 'chunked',
    'proxy-authenticate': 'Basic realm="p"',
    'proxy-connection': 'keep-alive',
    te: 'trailers',
    trailer: 'x-checksum',
    upgrade: 'h2c',
    'x-trace-hop': 'abc',
    'mcp-session-id': 'sess-1',
    'www-authenticate': 'Bearer resource_metadata="https://srv.example/.well-known/oauth-protected-resource"',
    'set-cookie': ['a=1; Path=/', 'b=2; Path=/'],
    'x-custom': 'kept',
    'x-undefined': undefined,
  };

  test('hop-by-hop headers and those named in Connection are dropped; end-to-end ones kept', () => {
    assert.deepEqual(clientHeaders(upstream, true), {
      'content-type': 'text/event-stream',
      'content-length': '42',
      'cache-control': 'no-cache',
      'mcp-session-id': 'sess-1',
      'www-authenticate': 'Bearer resource_metadata="https://srv.example/.well-known/oauth-protected-resource"',
      'set-cookie': ['a=1; Path=/', 'b=2; Path=/'],
      'x-custom': 'kept',
    });
  });

  test('content-length is dropped when the body is re-framed', () => {
    const out = clientHeaders(upstream, false);
    assert.equal('content-length' in out, false);
    assert.equal(out['content-type'], 'text/event-stream');
    assert.equal(out['mcp-session-id'], 'sess-1');
    assert.ok(out['www-authenticate']);
  });

  test('without a Connection header only the fixed hop-by-hop set is dropped', () => {
    const out = clientHeaders({ 'x-trace-hop': 'abc', 'transfer-encoding': 'chunked', 'content-length': '3' }, true);
    assert.deepEqual(out, { 'x-trace-hop': 'abc', 'content-length': '3' });
  });

  test('Connection can name end-to-end headers, which then are dropped too', () => {
    const out = clientHeaders({ connection: 'Mcp-Session-Id', 'mcp-session-id': 's', 'content-type': 'application/json' }, true);
    assert.deepEqual(out, { 'content-type': 'application/json' });
  });

  test('the input is not modified', () => {
    const input: IncomingHttpHeaders = { connection: 'close', 'content-length': '1', 'x-a': 'b' };
    const copy = structuredClone(input);
    clientHeaders(input, false);
    assert.deepEqual(input, copy);
  });
});

describe('upstreamHeaders', () => {
  const fake = (headers: IncomingHttpHeaders, remoteAddress: string | undefined, encrypted = false): IncomingMessage =>
    ({ headers, socket: { remoteAddress, encrypted } }) as unknown as IncomingMessage;

  test('hop-by-hop, Connection-named, content-length and expect dropped; Host kept; X-Forwarded-* added', () => {
    const out = upstreamHeaders(
      fake(
        {
          host: 'proxy.local:8787',
          connection: 'keep-alive, x-hop',
          'keep-alive': 'timeout=5',
          'x-hop': '1',
          'content-length': '10',
          'content-type': 'application/json',
          authorization: 'Bearer t',
          'mcp-session-id': 's1',
          'mcp-protocol-version': '2025-06-18',
          'proxy-authorization': 'Basic x',
          expect: '100-continue',
        },
        '10.0.0.5',
      ),
    );
    assert.deepEqual(out, {
      host: 'proxy.local:8787',
      'content-type': 'application/json',
      authorization: 'Bearer t',
      'mcp-session-id': 's1',
      'mcp-protocol-version': '2025-06-18',
      'x-forwarded-for': '10.0.0.5',
      'x-forwarded-proto': 'http',
      'x-forwarded-host': 'proxy.local:8787',
    });
  });

  test('an existing X-Forwarded-For is extended; TLS sockets say https', () => {
    const out = upstreamHeaders(fake({ 'x-forwarded-for': '1.2.3.4' }, '10.0.0.5', true));
    assert.equal(out['x-forwarded-for'], '1.2.3.4, 10.0.0.5');
    assert.equal(out['x-forwarded-proto'], 'https');
    assert.equal('x-forwarded-host' in out, false);
  });
});

describe('proxyErrorBody', () => {
  const CODES = Object.keys(PROXY_ERRORS) as ProxyErrorCode[];

  interface ErrorBody {
    jsonrpc: unknown;
    id: unknown;
    error: { code: unknown; message: unknown; data: { reason: unknown; by: unknown } };
  }

  function checkOne(value: unknown, err: ProxyError, id: JsonRpcId | null): void {
    const body = value as ErrorBody;
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, id);
    assert.ok(Number.isInteger(body.error.code), `integer code: ${String(body.error.code)}`);
    assert.equal(body.error.code, err.rpcCode);
    assert.equal(typeof body.error.message, 'string');
    assert.ok((body.error.message as string).length > 0);
    assert.equal(body.error.data.reason, err.code);
    // and it reads as a JSON-RPC error response carrying that id
    const m = classify(value);
    assert.equal(m.kind, 'error');
    assert.equal(m.id, id);
  }

  test('a single id gives one error object with that id', () => {
    const err = new ProxyError('WARDEN_UPSTREAM_TIMEOUT');
    const parsed: unknown = JSON.parse(proxyErrorBody(err, [7], false));
    assert.deepEqual(parsed, {
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32603,
        message: 'Upstream MCP server did not respond in time',
        data: { reason: 'WARDEN_UPSTREAM_TIMEOUT', by: 'mcp-warden' },
      },
    });
  });

  test('string ids, 0 and "" are carried as they are', () => {
    const err = new ProxyError('WARDEN_INTERNAL');
    for (const id of ['abc', '1', 0, '']) {
      checkOne(JSON.parse(proxyErrorBody(err, [id], false)), err, id);
    }
  });

  test('a batch of ids gives an array, one error per id, in order', () => {
    const err = new ProxyError('WARDEN_UPSTREAM_UNREACHABLE');
    const parsed: unknown = JSON.parse(proxyErrorBody(err, [1, '1', 'x'], true));
    assert.ok(Array.isArray(parsed));
    assert.equal(parsed.length, 3);
    parsed.forEach((one, i) => {
      checkOne(one, err, ([1, '1', 'x'] as const)[i]!);
    });
  });

  test('no id gives a single error with id null, batch or not', () => {
    const err = new ProxyError('WARDEN_BAD_REQUEST', 'client closed the connection while sending');
    for (const batch of [false, true]) {
      const parsed: unknown = JSON.parse(proxyErrorBody(err, [], batch));
      assert.ok(!Array.isArray(parsed));
      checkOne(parsed, err, null);
      assert.equal((parsed as ErrorBody).error.message, 'client closed the connection while sending');
    }
  });

  test('every stable code gives a well-formed body naming it in data.reason', () => {
    for (const code of CODES) {
      for (const detail of [undefined, 'detail with "quotes" and \n newline and </script>']) {
        const err = new ProxyError(code, detail);
        checkOne(JSON.parse(proxyErrorBody(err, [42], false)), err, 42);
        checkOne(JSON.parse(proxyErrorBody(err, [], false)), err, null);
        const batch: unknown = JSON.parse(proxyErrorBody(err, ['a', 2], true));
        assert.ok(Array.isArray(batch));
        checkOne(batch[0], err, 'a');
        checkOne(batch[1], err, 2);
        assert.equal((JSON.parse(proxyErrorBody(err, [1], false)) as ErrorBody).error.message, detail ?? PROXY_ERRORS[code].message);
      }
    }
  });

  test('rpc codes are the JSON-RPC ones the table lists', () => {
    assert.equal(new ProxyError('WARDEN_BODY_TOO_LARGE').rpcCode, -32600);
    assert.equal(new ProxyError('WARDEN_UPSTREAM_RESET').rpcCode, -32603);
    for (const code of CODES) {
      const rpc = PROXY_ERRORS[code].rpcCode;
      assert.ok(rpc <= -32000 && rpc >= -32768, `${code}: ${rpc} is in the reserved range`);
    }
  });
});
