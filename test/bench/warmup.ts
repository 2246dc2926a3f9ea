// One proxy kept under the small-call load for successive rounds: requests/s, CPU per request and
// p50 per round, to see how long a fresh process takes to settle (JIT) and where it settles:
//   node --import tsx test/bench/warmup.ts [setup=audit] [connections=10] [rounds=10] [seconds=2]
import { FAST_WORKLOADS, openSession } from './client.ts';
import { measure } from './load.ts';
import { cpuMs, exitWhenDone, withFastUpstream } from './procs.ts';
import { SETUPS, startTarget, type SetupName } from './setups.ts';

async function main(): Promise<void> {
  const [setupArg = 'audit', connArg = '10', roundsArg = '10', secondsArg = '2'] = process.argv.slice(2);
  const setup = SETUPS.find((s) => s === setupArg) as SetupName | undefined;
  if (!setup || setup === 'nginx') throw new Error(`usage: warmup.ts <direct|http-proxy-3|audit|enforce> [connections] [rounds] [seconds]`);
  const rounds = Math.min(60, Number(roundsArg));
  await withFastUpstream(async (fast) => {
    const target = await startTarget(setup, fast);
    if (!target) throw new Error(`${setup} did not start`);
    const headers = await openSession(target.url);
    const small = FAST_WORKLOADS.find((w) => w.name === 'small')!;
    const pid = target.pids()[0];
    process.stdout.write(
      `${setup}, small calls, ${connArg} connections, ${secondsArg} s rounds\n| round | req/s | CPU µs/req | p50 ms |\n|---:|---:|---:|---:|\n`,
    );
    for (let r = 1; r <= rounds; r++) {
      let c0 = 0;
      let c1 = 0;
      const n = await measure(
        { url: target.url, headers, body: small.body, connections: Number(connArg), durationS: Number(secondsArg), warmupS: 0 },
        { start: () => (c0 = pid ? cpuMs(pid) : 0), end: () => (c1 = pid ? cpuMs(pid) : 0) },
      );
      const cpu = pid ? ((c1 - c0) * 1000) / Math.max(1, n.requests) : Number.NaN;
      process.stdout.write(`| ${r} | ${n.rps.toFixed(0)} | ${cpu.toFixed(0)} | ${n.p50.toFixed(3)} |\n`);
    }
    await target.stop();
  });
}

exitWhenDone(main());
