// What `--state redis://` costs against `--state memory` (the default), per exchange: the proxy's
// CPU, Redis's CPU and the client's latency (p50, p99), for two workloads: calls in one known
// session (nothing to share: no round trip, no write), and new sessions (initialize, tools/list, a
// call: each session's facts written and published, and a read of the session no replica knew).
// The built CLI (dist/) in front of the bench's fast upstream, Debian's redis-server on its own
// port, the two setups in interleaved rounds, medians. Not a test (it times things).
//   npm run build && node --import tsx test/bench/state.ts [calls=3000] [sessions=500] [rounds=5]
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { findRedis, startRedis } from '../helpers/redis.ts';
import { PROTOCOL } from './client.ts';
import { cpuMs } from './procs.ts';
import { startFastUpstream } from './upstream.ts';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const arg = (i: number, fallback: number): number => Number(process.argv[2 + i] ?? fallback);
const [CALLS, SESSIONS, ROUNDS] = [arg(0, 3000), arg(1, 500), arg(2, 5)];
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

interface Proxy {
  url: URL;
  pid: number;
  stop(): Promise<void>;
}

async function startProxy(upstream: URL, state: string[]): Promise<Proxy> {
  const child = spawn(process.execPath, [CLI, 'proxy', '--upstream', upstream.href, '--listen', '127.0.0.1:0', ...state], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((r) => child.once('exit', r));
  // The port from the `listening` record; the records after it are read and dropped.
  let out = '';
  const read = (d: Buffer) => (out += d.toString());
  child.stdout.on('data', read);
  const url = await new Promise<URL>((resolve, reject) => {
    const poll = setInterval(() => {
      const m = /"listen":"([^"]+)"/.exec(out);
      if (m) {
        clearInterval(poll);
        child.stdout.off('data', read).resume();
        resolve(new URL(m[1]!));
      } else if (child.exitCode !== null) {
        clearInterval(poll);
        reject(new Error(`the proxy exited: ${out}`));
      }
    }, 20);
  });
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const rpc = (id: number, method: string, params: object = {}) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

async function post(pool: Pool, url: URL, body: string, session?: string): Promise<{ session?: string; ms: number }> {
  const started = performance.now();
  const res = await pool.request({
    path: url.pathname,
    method: 'POST',
    headers: session ? { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': PROTOCOL } : HEADERS,
    body,
  });
  await res.body.text();
  return { session: res.headers['mcp-session-id'] as string | undefined, ms: performance.now() - started };
}

const initialize = (id: number) =>
  rpc(id, 'initialize', { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'state-bench', version: '1' } });

/** Sequential exchanges on one connection; their latencies. */
async function workload(kind: 'calls' | 'sessions', url: URL): Promise<number[]> {
  const pool = new Pool(url.origin, { connections: 1 });
  const ms: number[] = [];
  try {
    if (kind === 'calls') {
      const { session } = await post(pool, url, initialize(0));
      await post(pool, url, rpc(1, 'tools/list'), session);
      for (let i = 0; i < CALLS; i++)
        ms.push((await post(pool, url, rpc(2 + i, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), session)).ms);
    } else {
      for (let i = 0; i < SESSIONS; i++) {
        const init = await post(pool, url, initialize(0));
        ms.push(init.ms);
        ms.push((await post(pool, url, rpc(1, 'tools/list'), init.session)).ms);
        ms.push((await post(pool, url, rpc(2, 'tools/call', { name: 'echo', arguments: { message: 'hi' } }), init.session)).ms);
      }
    }
  } finally {
    await pool.close();
  }
  return ms;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

async function main(): Promise<void> {
  const binary = findRedis();
  if (!binary) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const redis = await startRedis(binary);
  const redisPid = Number(
    (await import('node:child_process')).execSync(`pgrep -f "redis-server 127.0.0.1:${redis.port}"`).toString().trim(),
  );
  const upstream = await startFastUpstream();
  const setups = [
    { name: 'memory', proxy: await startProxy(upstream.url, []) },
    { name: 'redis', proxy: await startProxy(upstream.url, ['--state', redis.url.href]) },
  ];
  // Redis's CPU is read in 10 ms ticks: summed over the rounds, not a median of near-zero readings.
  const rows = new Map<string, { cpu: number[]; redisMs: number; exchanges: number; p50: number[]; p99: number[] }>();
  try {
    for (const kind of ['calls', 'sessions'] as const) {
      for (const s of setups) await workload(kind, s.proxy.url); // warm
      for (let round = 0; round < ROUNDS; round++) {
        for (const s of setups) {
          const [cpu0, r0] = [cpuMs(s.proxy.pid), cpuMs(redisPid)];
          const ms = await workload(kind, s.proxy.url);
          const row = rows.get(`${kind} ${s.name}`) ?? { cpu: [], redisMs: 0, exchanges: 0, p50: [], p99: [] };
          row.cpu.push(((cpuMs(s.proxy.pid) - cpu0) * 1000) / ms.length);
          row.redisMs += cpuMs(redisPid) - r0;
          row.exchanges += ms.length;
          row.p50.push(quantile(ms, 0.5));
          row.p99.push(quantile(ms, 0.99));
          rows.set(`${kind} ${s.name}`, row);
        }
      }
    }
  } finally {
    for (const s of setups) await s.proxy.stop();
    await upstream.close();
    await redis.stop();
  }
  console.log(
    `--state memory against --state redis:// (${ROUNDS} interleaved rounds, medians; calls: ${CALLS} in one session; sessions: ${SESSIONS} x 3 exchanges)`,
  );
  console.log('workload  state    proxy CPU/exchange  redis CPU/exchange  p50 ms  p99 ms');
  for (const [key, r] of rows) {
    const [kind, state] = key.split(' ');
    console.log(
      `${kind!.padEnd(9)} ${state!.padEnd(8)} ${`${median(r.cpu).toFixed(0)} µs`.padStart(18)} ${(r.redisMs > 0 ? `${((r.redisMs * 1000) / r.exchanges).toFixed(1)} µs` : `< ${(10_000 / r.exchanges).toFixed(1)} µs`).padStart(19)} ${median(r.p50).toFixed(3).padStart(7)} ${median(r.p99).toFixed(3).padStart(7)}`,
    );
  }
}

await main();
