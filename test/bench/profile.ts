// Profiles one proxy on one workload (fast upstream) with --cpu-prof and prints where its time went:
//   node --import tsx test/bench/profile.ts [setup=audit] [workload=small] [connections=10] [seconds=5] [dir=/tmp/warden-prof]
// The proxy child writes its .cpuprofile when it exits (SIGTERM closes it cleanly first).
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { checkWorkload, FAST_WORKLOADS, openSession } from './client.ts';
import { measure } from './load.ts';
import { exitWhenDone, withFastUpstream } from './procs.ts';
import { summarise } from './profile-summary.ts';
import { SETUPS, startTarget, type SetupName } from './setups.ts';

async function main(): Promise<void> {
  const [setupArg = 'audit', workloadArg = 'small', connArg = '10', secondsArg = '5', dir = '/tmp/warden-prof'] = process.argv.slice(2);
  const setup = SETUPS.find((s) => s === setupArg) as SetupName | undefined;
  const workload = FAST_WORKLOADS.find((w) => w.name === workloadArg);
  if (!setup || setup === 'direct' || setup === 'nginx' || !workload)
    throw new Error(
      `usage: profile.ts <http-proxy-3|audit|enforce> <${FAST_WORKLOADS.map((w) => w.name).join('|')}> [connections] [seconds] [dir]`,
    );
  mkdirSync(dir, { recursive: true });
  const before = new Set(readdirSync(dir));
  await withFastUpstream(async (fast) => {
    const target = await startTarget(setup, fast, {
      nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean)],
    });
    if (!target) throw new Error(`${setup} did not start`);
    const headers = await openSession(target.url);
    await checkWorkload(target.url, headers, workload);
    const n = await measure({
      url: target.url,
      headers,
      body: workload.body,
      connections: Number(connArg),
      durationS: Number(secondsArg),
      warmupS: 1,
    });
    process.stdout.write(
      `${setup} ${workload.name} c=${connArg}: ${n.rps.toFixed(0)} req/s, p50 ${n.p50.toFixed(3)} ms, p99 ${n.p99.toFixed(3)} ms\n`,
    );
    await target.stop();
  });
  const written = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile') && !before.has(f));
  const newest = written.map((f) => join(dir, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
  if (!newest) throw new Error(`no .cpuprofile written in ${dir}`);
  process.stdout.write(`${newest}\n${summarise(JSON.parse(readFileSync(newest, 'utf8')), 30)}\n`);
}

exitWhenDone(main());
