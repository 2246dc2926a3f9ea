// The abort soak: 2,000 clients that abort, half before the server answered and half in the middle
// of an SSE stream. Every upstream request is closed, no socket and no open request is left, one
// client-closed record each, and the heap (read over the last 1,000) stays flat: a leak of 16 KiB
// a request shows. A soak, so in the slow tier (test/integration/faults-client.test.ts has the
// single aborts); ABORT_SOAK=10000 runs the full soak.
import { after, afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createProxy } from '../../src/proxy/server.ts';
import { createLogger } from '../../src/sinks/logger.ts';
import { createLogCapture } from '../helpers/log-capture.ts';
import { closeServer, listen } from '../helpers/net.ts';
import { ACCEPT, assertStillServes, call, eventually, within } from '../helpers/faults.ts';

const running: Array<{ close(): Promise<void> }> = [];
const sockets = new Set<Socket>();
afterEach(() => {
  for (const s of sockets) s.destroy();
  sockets.clear();
});
after(async () => {
  for (const r of running.reverse()) await r.close();
});

const TOTAL = Math.max(2_000, Number(process.env.ABORT_SOAK ?? 2_000));
test(`${TOTAL.toLocaleString('en')} aborted requests, half mid-request and half mid-stream: every upstream request closed, no socket, no open request left`, {
  timeout: 120_000,
}, async () => {
  const BATCH = 250;
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  const heap = (): number => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };

  // The upstream: counts requests and the closing of each; `stall` never answers, `stream`
  // sends its SSE head and one event and stays open; anything else gets a result.
  let received = 0;
  let closedUnfinished = 0;
  let closedFinished = 0;
  const upstream: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received++;
      res.on('close', () => (res.writableFinished ? closedFinished++ : closedUnfinished++));
      const m = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; params?: { name?: string } };
      if (m.params?.name === 'stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"first"}}\n\n');
      } else if (m.params?.name !== 'stall') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'ok' }] } }));
      }
    });
  });
  const base = await listen(upstream);
  running.push({ close: () => closeServer(upstream) });

  // The proxy, built here so its metrics (the open-request gauge) can be read; client-closed
  // records are counted, not kept, so the heap measures the proxy and not 10,000 parsed records.
  const outcomes = new Map<string, number>();
  const other = createLogCapture();
  const logger = createLogger({
    level: 'debug',
    destination: {
      write(lines: string): void {
        for (const line of lines.split('\n')) {
          if (line === '') continue;
          if (line.includes('"msg":"exchange"')) {
            const outcome = (JSON.parse(line) as { outcome: string }).outcome;
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
            if (outcome === 'client-closed') continue;
          }
          other.stream.write(`${line}\n`);
        }
      },
    },
  });
  const created = createProxy({ upstream: new URL('/mcp', base), logger });
  const proxy = await created.listen(0, '127.0.0.1');
  running.push(proxy);
  const port = Number(proxy.url.port);
  const wire = (id: number, tool: string): string => {
    const body = call(id, tool);
    return `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };

  let warmHeap = 0;
  for (let b = 0; b * BATCH < TOTAL; b++) {
    if (b === 4) warmHeap = heap();
    const batch: Array<Promise<Socket>> = [];
    for (let i = 0; i < BATCH; i++) {
      const id = b * BATCH + i;
      const midStream = id % 2 === 1;
      batch.push(
        new Promise<Socket>((resolve) => {
          const s = connect(port, '127.0.0.1');
          sockets.add(s);
          s.on('error', () => {});
          s.write(wire(id, midStream ? 'stream' : 'stall'));
          if (!midStream) return resolve(s);
          let got = '';
          s.on('data', (d: Buffer) => {
            got += d.toString('latin1');
            if (got.includes('"first"}}\n\n')) resolve(s);
          });
        }),
      );
    }
    const open = await within(20_000, `batch ${b}: every stream's first event`, Promise.all(batch));
    const want = (b + 1) * BATCH;
    await eventually(
      20_000,
      () => `batch ${b}: the server got ${received}/${want} requests`,
      () => received >= want,
    );
    for (const s of open) {
      s.destroy();
      sockets.delete(s);
    }
    await eventually(
      20_000,
      () => `batch ${b}: ${closedUnfinished}/${want} upstream requests closed`,
      () => closedUnfinished >= want,
    );
  }

  const connections = (server: Server): Promise<number> => new Promise((r) => server.getConnections((_e, n) => r(n)));
  await eventually(
    5000,
    () => 'the proxy still has client sockets',
    async () => (await connections(proxy.server)) === 0,
  );
  await eventually(
    5000,
    () => 'the proxy still has upstream sockets',
    async () => (await connections(upstream)) === 0,
  );
  assert.equal(received, TOTAL, 'every request reached the server');
  assert.equal(closedUnfinished, TOTAL, 'every upstream request was aborted');
  assert.equal(closedFinished, 0);
  assert.deepEqual(Object.fromEntries(outcomes), { 'client-closed': TOTAL }, 'one client-closed exchange record per aborted request');
  const gauge = await created.metrics.registry.getSingleMetric('mcp_warden_open_requests')?.get();
  assert.equal(gauge?.values[0]?.value, 0, 'the open-request table is empty');
  assert.ok(created.sessions.size <= 1, 'no session per aborted request');
  const grown = heap() - warmHeap;
  assert.ok(grown < 16 * 1024 * 1024, `heap grew by ${(grown / 2 ** 20).toFixed(1)} MiB over ${TOTAL - 4 * BATCH} aborted requests`);
  assert.equal(
    other.records.filter((r) => r.level === 50).length,
    0,
    `no error records: ${JSON.stringify(other.records.filter((r) => r.level === 50))}`,
  );
  await assertStillServes({ url: proxy.url, log: other });
});
