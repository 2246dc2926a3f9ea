// `npm run bench`: every setup, upstream, workload and connection count, then SSE latency,
// memory, and last the per-message cells of stdio and legacy HTTP+SSE (transports.ts, ~70 s; alone:
// `npm run bench:transports`); writes test/bench/RESULTS.md and test/bench/results.json. Every process it starts is
// stopped by PID when it ends, fails or is interrupted. Traffic stays on 127.0.0.1; every loop
// and every load run is bounded in time or count.
//   BENCH_QUICK=1        short cells, smaller memory cases; writes results.quick.json only
//   BENCH_DURATION=<s>   measured seconds per cell (default 1.5); BENCH_WARMUP=<s> (default 0.5)
//   BENCH_CPU_PROF=<dir> the proxy children run with --cpu-prof into <dir>
//   --render             only rewrite RESULTS.md from results.json (and ANALYSIS.md)
//   --curves             only the curves (~8 minutes): measured, drawn, merged into results.json
//   --transports         only the stdio and legacy SSE cells (~2 minutes), merged into results.json
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildChildren } from './build.ts';
import { drawCharts } from './charts.ts';
import { curveSettings, measureCurves, type Curve } from './curves.ts';
import { findNginx } from '../helpers/nginx.ts';
import { groupsFor, runGroup, type Cell, type MatrixOptions } from './matrix.ts';
import { measureBigTransfers, measureIdleSessions } from './memory.ts';
import { exitWhenDone, hookExit, setChildScripts, startChild, stopAll } from './procs.ts';
import { renderMarkdown, checkTargets, type Machine, type RunResults } from './report.ts';
import { measureSseLatency } from './sse-latency.ts';
import { measureTransports, transportSettings } from './transports.ts';

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** The curves' PNG charts, relative to RESULTS.md (the README shows them too). */
const CHARTS = 'curves';
const quick = process.env.BENCH_QUICK === '1';
/** Past this the big-transfer baselines are skipped, so the whole run stays under 10 minutes. */
const BASELINE_TRANSFER_DEADLINE_MS = 7.5 * 60_000;
const started = Date.now();
const notes: string[] = [];
const log = (line: string): void => {
  if (/skipped/.test(line) && !notes.includes(line)) notes.push(line);
  process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${line}\n`);
};

/** What a command printed (stdout, else stderr: `nginx -v` answers there). */
function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 5000 });
  return r.stdout?.trim() || r.stderr?.trim() || 'unknown';
}

function machine(): Machine {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const free =
    sh('free', ['-h'])
      .split('\n')
      .find((l) => l.startsWith('Mem:'))
      ?.trim()
      .split(/\s+/) ?? [];
  const nginx = findNginx();
  return {
    cpus: availableParallelism(),
    cpuModel: /^model name\s*:\s*(.*)$/m.exec(cpuinfo)?.[1] ?? 'unknown',
    memory: free.length > 3 ? `${free[1]} total, ${free[3]} free, ${free[6] ?? '?'} available` : 'unknown',
    kernel: release(),
    node: process.version,
    nginx: nginx ? sh(nginx, ['-v']).replace(/^nginx version:\s*/, '') : 'not installed (its setup is skipped)',
    loadBefore: loadavg()
      .map((l) => l.toFixed(2))
      .join(' '),
    loadAfter: '',
  };
}

async function main(): Promise<void> {
  hookExit();
  const opts: Omit<MatrixOptions, 'upstreamPid'> = {
    connections: quick ? [1, 10] : [1, 10, 50],
    durationS: Number(process.env.BENCH_DURATION ?? (quick ? 0.5 : 1.5)),
    warmupS: Number(process.env.BENCH_WARMUP ?? (quick ? 0.2 : 0.5)),
    // Steady state: in a fresh proxy the small-call CPU per request falls for ~6 s of load (JIT).
    targetWarmupS: quick ? 0.5 : 2.5,
    // The cells the throughput and latency targets are judged on get 3 rounds (median kept).
    rounds: (upstream, workload, connections) => (!quick && upstream === 'fast' && workload === 'small' && connections <= 10 ? 3 : 1),
  };
  const transports = transportSettings(quick);
  const results: RunResults = {
    startedAt: new Date(started).toISOString(),
    command: 'npm run bench',
    seconds: 0,
    machine: machine(),
    settings: {
      durationS: opts.durationS,
      warmupS: opts.warmupS,
      connections: opts.connections,
      targetWarmupS: opts.targetWarmupS,
      transports,
    },
    cells: [],
    sseLatency: [],
    transfers: [],
    idle: undefined,
    notes,
  };
  log(
    `machine: ${results.machine.cpuModel}, ${results.machine.cpus} cores, Node ${results.machine.node}, nginx ${results.machine.nginx}, load ${results.machine.loadBefore}`,
  );
  if (!findNginx()) log('nginx is not installed (Debian package nginx-light): the nginx setup is skipped');
  try {
    setChildScripts(await buildChildren());
    const { child, ready } = await startChild<{ urls: { fast: string; sdkJson: string; sdkSse: string; legacySse: string } }>(
      'upstream',
      [],
    );
    for (const group of groupsFor(ready.urls)) {
      const cells: Cell[] = await runGroup(group, { ...opts, upstreamPid: child.pid }, log);
      results.cells.push(...cells);
    }
    results.sseLatency = await measureSseLatency(
      { warmupS: quick ? 0.5 : 2, streams: quick ? 2 : 10, eventsPerStream: 100, gapMs: 2 },
      log,
    );
    const fast = new URL(ready.urls.fast);
    const scale = quick ? 1 / 16 : 1;
    results.transfers = await measureBigTransfers(fast, ['audit', 'enforce'], log, scale);
    results.idle = await measureIdleSessions(fast, quick ? 1000 : 10_000, log);
    // The pass-through baselines of the big transfers are references, not targets: they run
    // last, and only while the run is inside its time budget (slow when the machine is shared).
    for (const setup of ['http-proxy-3', 'nginx'] as const) {
      if (Date.now() - started > BASELINE_TRANSFER_DEADLINE_MS)
        log(`memory ${setup}: skipped (the run is past ${BASELINE_TRANSFER_DEADLINE_MS / 60_000} minutes)`);
      else results.transfers.push(...(await measureBigTransfers(fast, [setup], log, scale)));
    }
    // After the time budget above is judged, so they do not push the baselines out of it.
    results.transports = await measureTransports(
      { ...transports, legacyUpstream: new URL(ready.urls.legacySse), upstreamPid: child.pid },
      log,
    );
    results.curves = await curvesOf(fast, child.pid);
    if (!quick && (await drawCharts(results.curves, `${HERE}${CHARTS}`, log)).length > 0) results.charts = CHARTS;
  } finally {
    await stopAll();
  }
  results.seconds = (Date.now() - started) / 1000;
  results.machine.loadAfter = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  for (const t of checkTargets(results))
    log(`target ${t.met === undefined ? 'n/a   ' : t.met ? 'met   ' : 'MISSED'} ${t.target}: ${t.measured}`);
  if (quick) {
    writeFileSync(`${HERE}results.quick.json`, `${JSON.stringify(results, null, 2)}\n`);
    log('quick run: wrote test/bench/results.quick.json (RESULTS.md is left as it was)');
  } else {
    writeRecord(results, 'the whole run');
  }
  log(`done in ${(results.seconds / 60).toFixed(1)} minutes`);
}

/** Writes the files of record: results.json, and RESULTS.md from it and ANALYSIS.md. */
function writeRecord(results: RunResults, what: string): void {
  writeFileSync(`${HERE}results.json`, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(`${HERE}RESULTS.md`, renderMarkdown(results, `${HERE}ANALYSIS.md`));
  log(`wrote ${what} into test/bench/results.json and RESULTS.md`);
}

function curvesOf(fast: URL, upstreamPid: number): Promise<Curve[]> {
  return measureCurves(fast, upstreamPid, curveSettings(quick), log);
}

/** Measures one part again in a run of its own (the upstream started for it), into results.json's numbers. */
async function remeasure(
  part: (urls: { fast: string; legacySse: string }, upstreamPid: number, results: RunResults) => Promise<void>,
): Promise<RunResults> {
  hookExit();
  const results = JSON.parse(readFileSync(`${HERE}results.json`, 'utf8')) as RunResults;
  try {
    setChildScripts(await buildChildren());
    const { child, ready } = await startChild<{ urls: { fast: string; legacySse: string } }>('upstream', []);
    await part(ready.urls, child.pid, results);
  } finally {
    await stopAll();
  }
  return results;
}

/** `run.ts --transports`: the stdio and legacy SSE cells alone, merged into results.json, RESULTS.md written again. */
async function transportsOnly(): Promise<void> {
  const results = await remeasure(async (urls, upstreamPid, r) => {
    const settings = transportSettings(quick);
    r.transports = await measureTransports({ ...settings, legacyUpstream: new URL(urls.legacySse), upstreamPid }, log);
    r.settings.transports = settings;
  });
  if (quick) return log('quick run: results.json and RESULTS.md are left as they were');
  writeRecord(results, 'the stdio and legacy SSE cells');
}

/** `run.ts --curves`: the curves alone, merged into results.json, RESULTS.md written again. */
async function curvesOnly(): Promise<void> {
  let curves: Curve[] = [];
  const results = await remeasure(async (urls, upstreamPid, r) => {
    curves = await curvesOf(new URL(urls.fast), upstreamPid);
    r.curves = curves;
  });
  if (quick) {
    // A try of a change: the pictures go to a scratch folder, the files of record stay as they were.
    await drawCharts(curves, join(tmpdir(), 'warden-curves-quick'), log);
    log(`quick run: charts in ${join(tmpdir(), 'warden-curves-quick')}; results.json and RESULTS.md are left as they were`);
    return;
  }
  results.charts = (await drawCharts(curves, `${HERE}${CHARTS}`, log)).length > 0 ? CHARTS : undefined;
  writeRecord(results, 'the curves');
}

/** `run.ts --render`: writes RESULTS.md again from results.json (after ANALYSIS.md changed), measuring nothing. */
function render(): void {
  const results = JSON.parse(readFileSync(`${HERE}results.json`, 'utf8')) as RunResults;
  writeFileSync(`${HERE}RESULTS.md`, renderMarkdown(results, `${HERE}ANALYSIS.md`));
  log('wrote test/bench/RESULTS.md from test/bench/results.json');
}

exitWhenDone(
  process.argv.includes('--render')
    ? Promise.resolve(render())
    : process.argv.includes('--curves')
      ? curvesOnly()
      : process.argv.includes('--transports')
        ? transportsOnly()
        : main(),
);
