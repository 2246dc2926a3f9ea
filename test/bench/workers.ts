// `--workers`: requests/s and CPU per request of the real CLI (`mcp-warden proxy`, audit, the
// image's node options, its log to /dev/null) with 1 and 2 workers, against http-proxy-3 in the
// same run: small tools/calls in one session at 10 connections, each setup warmed before it is
// measured. CPU is the whole process tree's (the primary and its workers).
//   node --import tsx test/bench/workers.ts [seconds=5] [warmup=4] [rounds=2]
// Prints a table; traffic stays on 127.0.0.1, every process it starts is stopped by PID.
import { bundled } from '../helpers/bundle.ts';
import { FAST_WORKLOADS, openSession } from './client.ts';
import { measure } from './load.ts';
import { childPids, cpuMs, exitWhenDone, startPlainProcess, withFastUpstream, type Child } from './procs.ts';
import { imageNodeOptions, startTarget } from './setups.ts';
import { freePort } from '../../src/proxy/listen.ts';

const [seconds = 5, warmup = 4, rounds = 2] = process.argv.slice(2).map(Number);
const small = FAST_WORKLOADS.find((w) => w.name === 'small')!;

async function startCli(upstream: URL, workers: number): Promise<{ url: URL; pids: () => number[]; stop: () => Promise<void> }> {
  const port = await freePort();
  const cli = await bundled('src/cli.ts');
  const child: Child = startPlainProcess(process.execPath, [
    ...imageNodeOptions(),
    cli,
    'proxy',
    '--upstream',
    upstream.href,
    '--listen',
    `127.0.0.1:${port}`,
    '--workers',
    String(workers),
  ]);
  const url = new URL(upstream.pathname, `http://127.0.0.1:${port}`);
  for (let i = 0; ; i++) {
    try {
      await openSession(url);
      break;
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  // The primary, its workers, and (none today) their children.
  return { url, pids: () => [child.pid, ...childPids(child.pid)], stop: () => child.stop() };
}

interface Row {
  setup: string;
  rps: number;
  cpuUsPerRequest: number;
  p50: number;
}

async function cell(setup: string, url: URL, pids: () => number[]): Promise<Row> {
  const headers = await openSession(url);
  let cpuStart = 0;
  let cpuEnd = 0;
  const cpu = () => pids().reduce((sum, pid) => sum + cpuMs(pid), 0);
  const numbers = await measure(
    { url, headers, body: small.body, connections: 10, durationS: seconds, warmupS: warmup },
    { start: () => void (cpuStart = cpu()), end: () => void (cpuEnd = cpu()) },
  );
  return { setup, rps: numbers.rps, cpuUsPerRequest: ((cpuEnd - cpuStart) * 1000) / numbers.requests, p50: numbers.p50 };
}

async function main(): Promise<void> {
  await withFastUpstream(async (fast) => {
    const rows: Row[] = [];
    for (let round = 0; round < rounds; round++) {
      const plain = (await startTarget('http-proxy-3', fast))!;
      rows.push(await cell('http-proxy-3', plain.url, plain.pids));
      await plain.stop();
      for (const workers of [1, 2]) {
        const proxy = await startCli(fast, workers);
        rows.push(await cell(`audit, --workers ${workers}`, proxy.url, proxy.pids));
        await proxy.stop();
      }
    }
    const out = ['| setup | req/s | CPU per request (µs, the process tree) | p50 (ms) |', '|---|---:|---:|---:|'];
    for (const r of rows) out.push(`| ${r.setup} | ${Math.round(r.rps)} | ${Math.round(r.cpuUsPerRequest)} | ${r.p50.toFixed(3)} |`);
    process.stdout.write(
      `small tools/call, 10 connections, ${seconds} s measured after ${warmup} s, ${rounds} rounds\n${out.join('\n')}\n`,
    );
  });
}

exitWhenDone(main());
