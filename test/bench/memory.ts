// Memory under large and many: a 1 GiB SSE stream and a 100 MB JSON body through each proxy, and
// 10,000 idle MCP sessions through mcp-warden. Every case gets a fresh proxy process, so its
// VmHWM (peak RSS, from /proc) is that case's alone. The 100 MB body is over mcp-warden's audit
// limit (4 MiB): it must stream through unparsed, and the proxy's log must say it was not audited.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool, request } from 'undici';
import { openSession, PROTOCOL } from './client.ts';
import { procStatusBytes } from './procs.ts';
import { startTarget, type SetupName, type Target } from './setups.ts';

export interface BigTransfer {
  case: '1 GiB SSE' | '100 MB JSON';
  setup: SetupName;
  bytes: number;
  seconds: number;
  mbPerS: number;
  peakRss: number;
  /** mcp-warden only: the log's "not audited" record was found. */
  unauditedLogged?: boolean;
}

export interface IdleSessions {
  sessions: number;
  distinctIds: number;
  seconds: number;
  rssBefore: number;
  /** After a full GC. */
  rssAfter: number;
  peakRss: number;
  /** V8 heap in use before and after (full GC both times): what the sessions themselves hold. */
  heapBefore: number;
  heapAfter: number;
  /** V8 heap capacity (heapTotal) after: what the heap grew to while serving the exchanges. */
  heapTotalAfter: number;
}

const GiB = 1024 ** 3;
const peak = (t: Target): number => t.pids().reduce((sum, pid) => sum + (procStatusBytes(pid, 'VmHWM') ?? 0), 0);

async function transfer(target: Target, kind: BigTransfer['case'], bytes: number): Promise<{ received: number; seconds: number }> {
  const headers = await openSession(target.url);
  const name = kind === '1 GiB SSE' ? 'stream' : 'bigjson';
  const id = `big-${name}`;
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: { bytes }, _meta: { progressToken: id } },
  });
  const started = performance.now();
  const res = await request(target.url, { method: 'POST', headers, body, headersTimeout: 10_000, bodyTimeout: 30_000 });
  let received = 0;
  let tail = '';
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    received += chunk.length;
    if (chunk.length >= 256) tail = chunk.subarray(chunk.length - 256).toString('latin1');
    else tail = (tail + chunk.toString('latin1')).slice(-256);
  }
  const seconds = (performance.now() - started) / 1000;
  const complete = kind === '1 GiB SSE' ? tail.includes(`"id":"${id}","result"`) : tail.endsWith('"}]}}');
  if (res.statusCode !== 200 || !complete || received < bytes)
    throw new Error(`${kind} through ${target.setup}: HTTP ${res.statusCode}, ${received} bytes, complete=${complete}`);
  return { received, seconds };
}

/** The 1 GiB SSE stream and the 100 MB JSON body, each through a fresh proxy of every setup given. */
export async function measureBigTransfers(
  upstream: URL,
  setups: readonly SetupName[],
  log: (line: string) => void,
  scale = 1,
  nodeFlags: string[] = [],
): Promise<BigTransfer[]> {
  const rows: BigTransfer[] = [];
  const cases: [BigTransfer['case'], number][] = [
    ['1 GiB SSE', Math.round(GiB * scale)],
    ['100 MB JSON', Math.round(100 * 1024 * 1024 * scale)],
  ];
  for (const [kind, bytes] of cases) {
    for (const setup of setups) {
      const dir = mkdtempSync(join(tmpdir(), 'warden-bench-log-'));
      const logFile = join(dir, 'proxy.log');
      const target = await startTarget(setup, upstream, { logFile, nodeFlags });
      if (!target) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      let row: BigTransfer;
      try {
        const { received, seconds } = await transfer(target, kind, bytes);
        row = { case: kind, setup, bytes: received, seconds, mbPerS: received / 1e6 / seconds, peakRss: peak(target) };
      } finally {
        await target.stop();
      }
      if (setup === 'audit' || setup === 'enforce') {
        const text = readFileSync(logFile, 'utf8');
        row.unauditedLogged =
          kind === '100 MB JSON'
            ? /"msg":"unaudited body"/.test(text) && /"outcome":"unaudited"/.test(text) && /"rule":"unaudited-response"/.test(text)
            : undefined;
      }
      rmSync(dir, { recursive: true, force: true });
      rows.push(row);
      log(`memory ${kind} ${setup}: ${row.mbPerS.toFixed(0)} MB/s, peak RSS ${(row.peakRss / 1e6).toFixed(1)} MB`);
    }
  }
  return rows;
}

async function memOf(target: Target, gc: boolean): Promise<{ rss: number; heapUsed: number; heapTotal: number }> {
  const reply = target.child!.next<{ rss: number; heapUsed: number; heapTotal: number }>('mem');
  target.child!.proc.send({ type: 'mem', gc });
  return reply;
}

/** `count` initialize exchanges through mcp-warden (audit), each opening its own session, then its RSS. */
export async function measureIdleSessions(upstream: URL, count: number, log: (line: string) => void): Promise<IdleSessions> {
  const target = await startTarget('audit', upstream, { nodeFlags: ['--expose-gc'] });
  if (!target) throw new Error('audit setup did not start');
  const pool = new Pool(target.url.origin, { connections: 20 });
  try {
    await openSession(target.url); // warm-up: one session through every stage
    const before = await memOf(target, true);
    const ids = new Set<string>();
    const started = performance.now();
    const body = (i: number): string =>
      JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'initialize',
        params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: `idle-${i}`, version: '1.0.0' } },
      });
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const res = await pool.request({
          path: target.url.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: body(i),
        });
        await res.body.dump();
        const sid = res.headers['mcp-session-id'];
        if (res.statusCode !== 200 || typeof sid !== 'string') throw new Error(`initialize ${i}: HTTP ${res.statusCode}`);
        ids.add(sid);
      }
    };
    await Promise.all(Array.from({ length: 20 }, worker));
    const seconds = (performance.now() - started) / 1000;
    const after = await memOf(target, true);
    const result: IdleSessions = {
      sessions: count,
      distinctIds: ids.size,
      seconds,
      rssBefore: before.rss,
      rssAfter: after.rss,
      peakRss: peak(target),
      heapBefore: before.heapUsed,
      heapAfter: after.heapUsed,
      heapTotalAfter: after.heapTotal,
    };
    log(
      `memory ${count} idle sessions: RSS ${(after.rss / 1e6).toFixed(1)} MB after GC, peak ${(result.peakRss / 1e6).toFixed(1)} MB, heap ${(before.heapUsed / 1e6).toFixed(1)} -> ${(after.heapUsed / 1e6).toFixed(1)} MB`,
    );
    return result;
  } finally {
    await pool.close();
    await target.stop();
  }
}
