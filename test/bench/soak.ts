// Soak: mcp-warden under a bounded mixed load for some minutes, its RSS and heap sampled every
// 2 s, to show memory stays flat once warm (no leak per request, per id, per stream):
//   node --import tsx test/bench/soak.ts [minutes=3] [setup=audit] [connections=10]
// The load cycles 10-second segments of small calls, 10 KB results and SSE streams of 100 events
// (fast upstream, every request with a fresh id). The first minute (or the first third of a
// shorter run) is the warm-up. Writes test/bench/SOAK.md; exits 1 when memory is not flat.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkWorkload, FAST_WORKLOADS, openSession } from './client.ts';
import { measure } from './load.ts';
import { exitWhenDone, procStatusBytes, withFastUpstream } from './procs.ts';
import { startTarget, type SetupName } from './setups.ts';

const SEGMENT_S = 10;
const SAMPLE_MS = 2000;
/** Flat: the peak after warm-up's first half stays within this of the peak in its second half. */
const FLAT_TOLERANCE = 0.1;
const MB = 1e6;

interface Sample {
  s: number;
  rss: number;
  heapUsed: number;
}

const mb = (b: number): string => (b / MB).toFixed(1);

async function main(): Promise<void> {
  const minutes = Number(process.argv[2] ?? 3);
  const setup = (process.argv[3] ?? 'audit') as SetupName;
  const connections = Number(process.argv[4] ?? 10);
  if (!(minutes > 0 && minutes <= 60) || (setup !== 'audit' && setup !== 'enforce'))
    throw new Error('usage: soak.ts [minutes 1..60] [audit|enforce] [connections]');
  const workloads = FAST_WORKLOADS.filter((w) => w.name !== '1MB');
  await withFastUpstream(async (fast) => {
    const target = await startTarget(setup, fast);
    if (!target?.child) throw new Error(`${setup} did not start`);
    const headers = await openSession(target.url);
    for (const w of workloads) await checkWorkload(target.url, headers, w);

    const pid = target.pids()[0]!;
    const samples: Sample[] = [];
    const started = Date.now();
    const sample = async (): Promise<void> => {
      const reply = target.child!.next<{ heapUsed: number }>('mem', 5000).catch(() => undefined);
      target.child!.proc.send({ type: 'mem', gc: false });
      const rss = procStatusBytes(pid, 'VmRSS');
      const mem = await reply;
      if (rss !== undefined) samples.push({ s: (Date.now() - started) / 1000, rss, heapUsed: mem?.heapUsed ?? Number.NaN });
    };
    const timer = setInterval(() => void sample(), SAMPLE_MS);
    let requests = 0;
    let errors = 0;
    const segments = Math.ceil((minutes * 60) / SEGMENT_S);
    for (let i = 0; i < segments; i++) {
      const w = workloads[i % workloads.length]!;
      const n = await measure({ url: target.url, headers, body: w.body, connections, durationS: SEGMENT_S, warmupS: 0 });
      requests += n.requests;
      errors += n.errors;
      process.stdout.write(
        `[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${w.name.padEnd(9)} ${n.rps.toFixed(0).padStart(6)} req/s  RSS ${mb(samples.at(-1)?.rss ?? 0)} MB\n`,
      );
    }
    clearInterval(timer);
    await target.stop();

    const warmupS = Math.min(60, (minutes * 60) / 3);
    const after = samples.filter((x) => x.s >= warmupS);
    const half = Math.floor(after.length / 2);
    const peak = (xs: Sample[]): number => Math.max(...xs.map((x) => x.rss));
    const firstPeak = peak(after.slice(0, half));
    const lastPeak = peak(after.slice(half));
    const flat = lastPeak <= firstPeak * (1 + FLAT_TOLERANCE);
    const rows = samples
      .filter((_, i) => i % 5 === 0 || i === samples.length - 1)
      .map((x) => `| ${x.s.toFixed(0)} | ${mb(x.rss)} | ${mb(x.heapUsed)} |`);
    const md = [
      '# Soak run',
      '',
      `Command: \`node --import tsx test/bench/soak.ts ${minutes} ${setup} ${connections}\` (${new Date().toISOString()}, Node ${process.version}).`,
      `${setup} behind the fast upstream, ${connections} connections, ${minutes} min of ${SEGMENT_S} s segments cycling ${workloads.map((w) => w.name).join(', ')}: ` +
        `${requests} requests (${errors} errors).`,
      '',
      `Warm-up: the first ${warmupS.toFixed(0)} s. Peak RSS after it: ${mb(firstPeak)} MB in the first half, ${mb(lastPeak)} MB in the second half: ` +
        `**${flat ? 'flat' : 'GROWING'}** (flat = the second half's peak within ${FLAT_TOLERANCE * 100}% of the first's).`,
      '',
      '| s | RSS MB | heap used MB |',
      '|---:|---:|---:|',
      ...rows,
      '',
    ].join('\n');
    writeFileSync(fileURLToPath(new URL('SOAK.md', import.meta.url)), md);
    process.stdout.write(`\n${md}`);
    if (!flat || errors > 0) process.exitCode = 1;
  });
}

exitWhenDone(main());
