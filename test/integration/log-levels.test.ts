// Logs that alert correctly: an upstream that cannot be reached is an error record; a client that
// leaves is a debug one; --log-level warn keeps every violation of severity warning or error.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, describe, test } from 'node:test';
import { request } from 'undici';
import { logFindings } from '../../src/sinks/exchange-log.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { startRawServer } from '../fixtures/raw-server.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import { startProxy } from '../helpers/proxy.ts';

const closers: Array<() => Promise<void>> = [];
after(async () => {
  for (const close of closers) await close();
});

/** A loopback port nothing listens on. */
const closedPort = (): Promise<number> =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const finding = (severity: 'error' | 'warning' | 'info') => ({
  rule: `r-${severity}`,
  severity,
  message: 'm',
  pointer: '/response',
  evidence: '',
  fix: '',
  versions: [],
  action: 'log' as const,
});

describe('log levels', () => {
  test('--log-level warn keeps violations of severity warning and error (info ones are info)', () => {
    const log = createLogCapture();
    const logger = createLogger({ destination: log.stream, level: 'warn' });
    logFindings(logger, [finding('error'), finding('warning'), finding('info')], {
      method: 'tools/call',
      id: 1,
      tool: 't',
      session: undefined,
      protocolVersion: undefined,
    });
    logger.flush();
    assert.deepEqual(
      log.records.map((r) => [r.rule, r.level]),
      [
        ['r-error', 40],
        ['r-warning', 40],
      ],
    );
  });

  test('an upstream that cannot be reached: an error record (upstream failed), beside the exchange', async () => {
    const upstream = new URL(`http://127.0.0.1:${await closedPort()}/mcp`);
    const proxy = await startProxy(upstream);
    closers.push(() => proxy.close());
    const res = await request(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    assert.equal(res.statusCode, 502);
    await res.body.text();
    const failed = await proxy.log.waitFor((r) => r.msg === 'upstream failed');
    assert.equal(failed.level, 50);
    assert.equal(failed.proxyError, 'WARDEN_UPSTREAM_UNREACHABLE');
    // The cause and the address, not only "unreachable".
    assert.match(String(failed.cause), /ECONNREFUSED/);
    assert.equal(failed.upstream, upstream.href);
  });

  test('the pass-through: an upstream that cannot be reached is an error, a client that leaves is debug', async () => {
    const down = await startProxy(new URL(`http://127.0.0.1:${await closedPort()}/mcp`));
    closers.push(() => down.close());
    const res = await request(new URL('/other', down.url));
    await res.body.text();
    assert.equal((await down.log.waitFor((r) => r.msg === 'passthrough')).level, 50);

    // The client leaves once its request has reached the server: the pass-through is under way.
    const leave = new AbortController();
    const slow = await startRawServer(async (_req, res) => {
      leave.abort();
      await new Promise((r) => setTimeout(r, 2_000));
      res.end('late');
    });
    closers.push(() => slow.close());
    const up = await startProxy(new URL('/mcp', slow.url));
    closers.push(() => up.close());
    await assert.rejects(request(new URL('/other', up.url), { signal: leave.signal }));
    const left = await up.log.waitFor((r) => r.msg === 'passthrough');
    assert.equal(left.error, 'client_aborted');
    assert.equal(left.level, 20);
  });
});

test('the time of a record is ISO 8601 UTC to the millisecond, as pino writes it, made once per millisecond', async () => {
  const { isoTimeOncePerMs } = await import('../../src/sinks/logger.ts');
  const { pino } = await import('pino');
  const before = Date.now();
  const first = isoTimeOncePerMs();
  const again = isoTimeOncePerMs();
  const after = Date.now();
  const time = /^,"time":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"$/.exec(first)?.[1];
  assert.ok(time, first);
  assert.ok(Date.parse(time) >= before && Date.parse(time) <= after);
  if (after === before) assert.equal(again, first, 'one string within a millisecond');
  assert.match(pino.stdTimeFunctions.isoTime(), /^,"time":"[^"]+Z"$/, 'the same shape as pino.stdTimeFunctions.isoTime');
  await new Promise((resolve) => setTimeout(resolve, 2));
  assert.notEqual(isoTimeOncePerMs(), first, 'a new millisecond, a new time');
});
