// Turns a run's numbers into RESULTS.md: the machine, the targets (met or missed), and a table per
// upstream and workload. What bounds a missed target comes from ANALYSIS.md (written by hand from
// the --cpu-prof profiles), so a re-run keeps it.
import { existsSync, readFileSync } from 'node:fs';
import { CURVE_SETUPS, shapeOf, type Curve } from './curves.ts';
import type { Cell } from './matrix.ts';
import type { BigTransfer, IdleSessions } from './memory.ts';
import type { SseLatency } from './sse-latency.ts';
import type { TransportCell, TransportSettings } from './transports.ts';

export interface Machine {
  cpus: number;
  cpuModel: string;
  memory: string;
  kernel: string;
  node: string;
  nginx: string;
  loadBefore: string;
  loadAfter: string;
}

export interface RunResults {
  startedAt: string;
  command: string;
  seconds: number;
  machine: Machine;
  settings: { durationS: number; warmupS: number; connections: number[]; targetWarmupS?: number; transports?: TransportSettings };
  cells: Cell[];
  /** stdio and legacy HTTP+SSE, per message (transports.ts); absent from runs before it. */
  transports?: TransportCell[];
  sseLatency: SseLatency[];
  transfers: BigTransfer[];
  idle: IdleSessions | undefined;
  /** How CPU per exchange grows with each quantity (curves.ts); absent from runs before it. */
  curves?: Curve[];
  /** Where the curves' PNG charts are, relative to RESULTS.md (absent: not drawn). */
  charts?: string;
  /** Setups or cells not measured, and why. */
  notes: string[];
}

export interface TargetCheck {
  target: string;
  measured: string;
  met: boolean | undefined;
}

const MB = 1e6;
const f = (n: number | undefined, digits = 3): string => (n === undefined || Number.isNaN(n) ? '–' : n.toFixed(digits));
const mb = (n: number | undefined): string => (n === undefined ? '–' : (n / MB).toFixed(1));
const signed = (n: number | undefined): string => (n === undefined || Number.isNaN(n) ? '–' : `${n >= 0 ? '+' : ''}${n.toFixed(3)}`);
const ratio = (n: number | undefined): string => (n === undefined ? '–' : `${n.toFixed(2)}x`);
const verdict = (met: boolean | undefined): string => (met === undefined ? 'not measured' : met ? '**met**' : '**missed**');

/** The targets of issue #28 (performance, round 2), judged on this run's cells. */
export function checkTargets(r: RunResults): TargetCheck[] {
  const cell = (setup: string, workload: string, connections: number, upstream = 'fast'): Cell | undefined =>
    r.cells.find((c) => c.upstream === upstream && c.workload === workload && c.connections === connections && c.setup === setup);
  const plain = (workload: string, connections: number) => cell('http-proxy-3', workload, connections);
  const out: TargetCheck[] = [];
  for (const [setup, floor] of [
    ['audit', 0.8],
    ['enforce', 0.7],
  ] as const) {
    const c10 = cell(setup, 'small', 10);
    out.push({
      target: `${setup}: >= ${floor}x http-proxy-3 req/s, small calls, 10 connections`,
      measured:
        c10?.vsHttpProxy3 !== undefined ? `${ratio(c10.vsHttpProxy3)} (${f(c10.rps, 0)} vs ${f(plain('small', 10)?.rps, 0)} req/s)` : '–',
      met: c10?.vsHttpProxy3 === undefined ? undefined : c10.vsHttpProxy3 >= floor,
    });
  }
  const audit10 = cell('audit', 'small', 10);
  const plain10 = plain('small', 10);
  const cpuRatio = audit10?.cpuUsPerReq !== undefined && plain10?.cpuUsPerReq ? audit10.cpuUsPerReq / plain10.cpuUsPerReq : undefined;
  out.push({
    target: 'audit: CPU per small exchange <= 1.5x http-proxy-3, 10 connections',
    measured: cpuRatio === undefined ? '–' : `${ratio(cpuRatio)} (${f(audit10?.cpuUsPerReq, 0)} vs ${f(plain10?.cpuUsPerReq, 0)} µs)`,
    met: cpuRatio === undefined ? undefined : cpuRatio <= 1.5,
  });
  for (const setup of ['audit', 'enforce']) {
    const c1 = cell(setup, 'small', 1);
    const base = plain('small', 1)?.addedP50;
    out.push({
      target: `${setup}: added p50 within +0.05 ms of http-proxy-3's, small calls, 1 connection`,
      measured: `${signed(c1?.addedP50)} ms (http-proxy-3 ${signed(base)} ms)`,
      met: c1?.addedP50 === undefined || base === undefined ? undefined : c1.addedP50 <= base + 0.05,
    });
  }
  for (const setup of ['audit', 'enforce']) {
    const sse = r.sseLatency.find((s) => s.setup === setup);
    out.push({
      target: `${setup}: SSE event from upstream write to client read < 1 ms (p99)`,
      measured: sse
        ? `p50 ${f(sse.p50)} ms, p99 ${f(sse.p99)} ms (direct p99 ${f(r.sseLatency.find((s) => s.setup === 'direct')?.p99)} ms)`
        : '–',
      met: sse ? sse.p99 < 1 : undefined,
    });
    const stream = cell(setup, 'SSE 100+1', 10);
    out.push({
      target: `${setup}: SSE throughput (100-event responses, 10 connections) >= 0.7x http-proxy-3`,
      measured:
        stream?.vsHttpProxy3 !== undefined
          ? `${ratio(stream.vsHttpProxy3)} (${f(stream.rps, 0)} vs ${f(plain('SSE 100+1', 10)?.rps, 0)} responses/s)`
          : '–',
      met: stream?.vsHttpProxy3 === undefined ? undefined : stream.vsHttpProxy3 >= 0.7,
    });
    for (const kind of ['1 GiB SSE', '100 MB JSON'] as const) {
      const t = r.transfers.find((x) => x.case === kind && x.setup === setup);
      const logged = kind === '100 MB JSON' ? `; "unaudited" logged: ${t?.unauditedLogged ? 'yes' : 'no'}` : '';
      out.push({
        target: `${setup}: ${kind} through the proxy, peak RSS < 150 MB${kind === '100 MB JSON' ? ', streamed unparsed and logged as not audited' : ''}`,
        measured: t ? `${mb(t.peakRss)} MB at ${f(t.mbPerS, 0)} MB/s${logged}` : '–',
        met: t ? t.peakRss < 150 * MB && (kind !== '100 MB JSON' || t.unauditedLogged === true) : undefined,
      });
    }
  }
  if (r.idle) {
    out.push({
      target: `audit: ${r.idle.sessions.toLocaleString('en')} idle sessions, RSS < 150 MB`,
      measured: `${mb(r.idle.rssAfter)} MB after GC (peak ${mb(r.idle.peakRss)} MB; ${mb(r.idle.rssBefore)} MB before; ${r.idle.distinctIds} distinct session ids)`,
      met: r.idle.peakRss < 150 * MB && r.idle.distinctIds === r.idle.sessions,
    });
  }
  const sdk = cell('audit', 'small', 10, 'sdk');
  const direct = cell('direct', 'small', 10, 'sdk');
  const sdkRatio = sdk && direct ? sdk.rps / direct.rps : undefined;
  out.push({
    target: 'audit in front of the official SDK server: >= 0.85x direct req/s, small calls, 10 connections',
    measured: sdkRatio === undefined ? '–' : `${ratio(sdkRatio)} (${f(sdk?.rps, 0)} vs ${f(direct?.rps, 0)} req/s)`,
    met: sdkRatio === undefined ? undefined : sdkRatio >= 0.85,
  });
  return out;
}

function cellTables(cells: Cell[]): string[] {
  const out: string[] = [];
  const keys = [...new Set(cells.map((c) => `${c.upstream}|${c.workload}`))];
  for (const key of keys) {
    const [upstream, workload] = key.split('|');
    out.push(`### ${upstream === 'fast' ? 'Fast minimal upstream' : 'Official SDK server (test/fixtures/sdk-server.ts)'}: ${workload}`, '');
    out.push(
      '| conns | setup | req/s | p50 ms | p99 ms | added p50 ms | added p99 ms | vs http-proxy-3 | vs nginx | proxy CPU µs/req | peak RSS MB | other load (cores) | errors |',
    );
    out.push('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const c of cells.filter((x) => `${x.upstream}|${x.workload}` === key)) {
      out.push(
        `| ${c.connections}${c.rounds > 1 ? ` (median of ${c.rounds})` : ''} | ${c.setup} | ${f(c.rps, 0)} | ${f(c.p50)} | ${f(c.p99)} | ${signed(c.addedP50)} | ${signed(c.addedP99)} | ${ratio(c.vsHttpProxy3)} | ${ratio(c.vsNginx)} | ${f(c.cpuUsPerReq, 0)} | ${mb(c.peakRss)} | ${f(c.otherCores, 2)} | ${c.errors} |`,
      );
    }
    out.push('');
  }
  return out;
}

const X = (n: number): string => (n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n));

/** The curves section: per curve its chart, a table (CPU per exchange and req/s per setup) and each setup's shape. */
export function curveSections(curves: Curve[], charts: string | undefined): string[] {
  const out = [
    '## How cost grows',
    '',
    "Each curve varies one quantity and holds the rest at the matrix's small call over 10 connections, in front of the fast upstream: the same four targets for every curve, warmed once, each point measured twice on each, interleaved (each round starting with another target), the cheaper of the two kept: on this shared host other work only adds CPU per exchange (test/bench/curves.ts). A cell reads `proxy µs · all µs · req/s`: the proxy's own CPU per exchange, the CPU per exchange of every process on the path (load generator, upstream, proxy; what the chart draws), and requests per second. A proxy's shape is read from the log-log slope k of its own CPU per exchange: flat when k from the first point to the last is under 0.25, else linear when the last segment's k is at most 1.25, worse above (test/bench/curves.ts shapeOf). This host is shared: one point can be off by 2x for every setup at once (http-proxy-3 reads nothing, so a jump in its own column is the host).",
    '',
  ];
  for (const c of curves) {
    out.push(`### ${c.title}`, '');
    if (charts) out.push(`![${c.title}](${charts}/${c.id}.png)`, '');
    const setups = CURVE_SETUPS.filter((s) => c.points.some((p) => p.setup === s));
    out.push(`| ${c.xLabel} | ${setups.join(' | ')} |`, `|---:|${setups.map(() => '---:').join('|')}|`);
    for (const x of [...new Set(c.points.map((p) => p.x))].sort((a, b) => a - b)) {
      const cells = setups.map((s) => {
        const p = c.points.find((q) => q.x === x && q.setup === s);
        if (!p) return '–';
        return `${f(p.proxyUs, 0)} · ${f(p.allUs, 0)} · ${f(p.rps, 0)}${p.errors ? ` (${p.errors} errors)` : ''}`;
      });
      out.push(`| ${X(x)} | ${cells.join(' | ')} |`);
    }
    out.push('');
    // direct is the client and the upstream: the reference, not a proxy with a shape of its own.
    const shapes = setups.flatMap((s) => {
      const shape =
        s === 'direct' ? undefined : shapeOf(c.points.filter((p) => p.setup === s).map((p) => ({ x: p.x, y: p.proxyUs ?? Number.NaN })));
      return shape ? [`${s} **${shape.verdict}** (k overall ${f(shape.overall, 2)}, last segment ${f(shape.exponent, 2)})`] : [];
    });
    if (shapes.length > 0) out.push(`Shape: ${shapes.join('; ')}.`, '');
  }
  return out;
}

const TRANSPORT_TITLES: Record<TransportCell['transport'], string> = {
  stdio: '### stdio: `mcp-warden stdio -- <fixture>` against the fixture child directly (test/fixtures/stdio-server.ts)',
  'legacy-sse':
    "### Legacy HTTP+SSE (2024-11-05): GET stream, POST 202, answer on the stream (minimal legacy upstream, upstream.ts; mcp-proxy: its /sse endpoint in front of the official SDK server's stdio form, test/fixtures/sdk-stdio-server.ts, a slower server than the minimal upstream: its proxy CPU per message compares, its msg/s and 'vs' columns less so)",
};

/** The stdio and legacy SSE section: how it was measured, then a table per transport. */
export function transportTables(cells: TransportCell[], s: TransportSettings | undefined): string[] {
  const out = ['## stdio and legacy HTTP+SSE: per-message overhead', ''];
  out.push(
    `One \`tools/call\` echo at a time per worker in a closed loop driven by the bench (test/bench/transports.ts): "in flight" 1 is sequential, 10 is pipelined (10 workers). ${s ? `Each setup is warmed up with ${s.targetWarmupS} s of load, then measured in ${s.rounds} round${s.rounds > 1 ? 's' : ''} of ${s.warmupS} s unmeasured + ${s.durationS} s measured, interleaved (each round starts with another setup), the median of each number kept. ` : ''}stdio: the bench writes the request lines and reads the answers on the pipes of the fixture server (direct) or of \`mcp-warden stdio\` (the CLI bundled, plain node, log at info to a file; enforce: \`--policy config/enforce.yaml\`). Legacy SSE: an undici client; a message's time is from its POST to its answer read on the stream. "proxy CPU" is mcp-warden's process (or http-proxy-3's, nginx's); "server CPU" the fixture child or the upstream process; both /proc user + system time over the measured window, per answered message.`,
    '',
  );
  for (const transport of ['stdio', 'legacy-sse'] as const) {
    const rows = cells.filter((c) => c.transport === transport);
    if (rows.length === 0) continue;
    // stdio has no pass-through proxy to compare with: no such column.
    const plain = rows.some((c) => c.vsHttpProxy3 !== undefined);
    out.push(TRANSPORT_TITLES[transport], '');
    out.push(
      `| in flight | setup | msg/s | p50 ms | p99 ms | added p50 ms | added p99 ms | vs direct |${plain ? ' vs http-proxy-3 |' : ''} proxy CPU µs/msg | server CPU µs/msg | other load (cores) | errors |`,
      `|---:|---|---:|---:|---:|---:|---:|---:|${plain ? '---:|' : ''}---:|---:|---:|---:|`,
    );
    for (const c of rows)
      out.push(
        `| ${c.inFlight}${c.rounds > 1 ? ` (median of ${c.rounds})` : ''} | ${c.setup} | ${f(c.perS, 0)} | ${f(c.p50)} | ${f(c.p99)} | ${signed(c.addedP50)} | ${signed(c.addedP99)} | ${ratio(c.vsDirect)} |${plain ? ` ${ratio(c.vsHttpProxy3)} |` : ''} ${f(c.proxyCpuUsPerMsg, 0)} | ${f(c.serverCpuUsPerMsg, 0)} | ${f(c.otherCores, 2)} | ${c.errors} |`,
      );
    out.push('');
  }
  return out;
}

export function renderMarkdown(r: RunResults, analysisPath: string): string {
  const m = r.machine;
  const lines = [
    '# mcp-warden benchmarks',
    '',
    `Written by \`${r.command}\` (test/bench/run.ts) on ${r.startedAt}; the run took ${f(r.seconds / 60, 1)} minutes. Raw numbers: test/bench/results.json.`,
    '',
    '## Machine',
    '',
    `- CPU: ${m.cpuModel}, ${m.cpus} cores (nproc)`,
    `- Memory (free -h): ${m.memory}`,
    `- Kernel ${m.kernel}; Node ${m.node}; nginx: ${m.nginx}`,
    `- Load average before / after the run: ${m.loadBefore} / ${m.loadAfter} (other work on this machine shares the 2 cores)`,
    ...(r.settings.targetWarmupS
      ? [
          `- Each proxy, once started, is warmed up with ${r.settings.targetWarmupS} s of load per workload of its upstream (10 connections) before its first cell: the numbers are steady state, not a JIT still compiling.`,
        ]
      : []),
    `- Each cell: ${r.settings.warmupS} s warm-up, then ${r.settings.durationS} s measured with autocannon (one process, pipelining 1, a fresh JSON-RPC id per request); connections ${r.settings.connections.join(', ')}.`,
    '- The load generator, the upstream and the proxy are three processes on the same 2 cores: a proxy gets at most what the other two leave it.',
    "- Latency percentiles are computed from every response time (microsecond resolution), not autocannon's whole-millisecond histogram.",
    "- Peak RSS is VmHWM of the proxy's processes (nginx: master + worker), reset before each measured run.",
    '- Proxy CPU µs/req: user + system CPU time of the proxy\'s processes over the measured seconds (/proc/<pid>/stat), per response; it does not depend on what else the machine runs, requests/s does. "Other load": cores busy with processes that are neither the load generator, the upstream nor the proxy (other work on this shared machine) during the measured seconds; a cell with other load above ~0.3 had less than the 2 cores.',
    '',
    '## Targets',
    '',
    '| target | measured | result |',
    '|---|---|---|',
    ...checkTargets(r).map((t) => `| ${t.target} | ${t.measured} | ${verdict(t.met)} |`),
    '',
  ];
  if (existsSync(analysisPath)) lines.push(readFileSync(analysisPath, 'utf8').trim(), '');
  lines.push('## Throughput and latency', '');
  lines.push(
    'Setups: **direct** (client to upstream), **http-proxy-3** (plain pass-through, keep-alive agent: the floor of our stack), **nginx** (plain reverse proxy, 1 worker, buffering off, access log off), **audit** and **enforce** (mcp-warden with the default audit policy and with config/enforce.yaml; logging at info to /dev/null, in batches as shipped; node run with the Docker image\'s NODE_OPTIONS, --max-semi-space-size=4); in front of the official SDK server also **mcp-proxy** (npm mcp-proxy 6.7.19, the stdio-to-HTTP relay, stateful, default options, in front of the same server\'s stdio form, test/fixtures/sdk-stdio-server.ts: its CPU and RSS include that server\'s, about 15% of the pair\'s CPU once warm). "added" is against direct in the same cell; "vs" is the ratio of requests/s.',
    '',
  );
  lines.push(...cellTables(r.cells));
  if (r.notes.length > 0) lines.push('Not measured:', '', ...r.notes.map((n) => `- ${n}`), '');
  lines.push("## SSE: time from the upstream's write to the client's read, per event", '');
  lines.push(
    'Upstream and client in the bench process (one clock), proxy in its own; events 2 ms apart, each its own write. Each proxy is warmed up first with SSE load (10 connections), then measured over sequential streams of 100 events.',
    '',
  );
  lines.push('| setup | events | p50 ms | p99 ms | max ms | added p50 ms | added p99 ms |', '|---|---:|---:|---:|---:|---:|---:|');
  for (const s of r.sseLatency)
    lines.push(`| ${s.setup} | ${s.events} | ${f(s.p50)} | ${f(s.p99)} | ${f(s.max)} | ${signed(s.addedP50)} | ${signed(s.addedP99)} |`);
  if (r.transports && r.transports.length > 0) lines.push('', ...transportTables(r.transports, r.settings.transports));
  else lines.push('');
  if (r.curves && r.curves.length > 0) lines.push(...curveSections(r.curves, r.charts));
  lines.push('## Memory', '');
  lines.push(
    'Each case in a fresh proxy process; peak RSS is its VmHWM. The 1 GiB stream is 64 KiB progress events (each parsed and judged by mcp-warden: under the 1 MiB event limit); the 100 MB body is over the 4 MiB audit limit and streams through unparsed.',
    '',
  );
  lines.push('| case | setup | MB moved | seconds | MB/s | peak RSS MB | logged as not audited |', '|---|---|---:|---:|---:|---:|---|');
  const order = ['direct', 'http-proxy-3', 'nginx', 'audit', 'enforce'];
  const transfers = [...r.transfers].sort((a, b) => a.case.localeCompare(b.case) || order.indexOf(a.setup) - order.indexOf(b.setup));
  for (const t of transfers) {
    lines.push(
      `| ${t.case} | ${t.setup} | ${mb(t.bytes)} | ${f(t.seconds, 2)} | ${f(t.mbPerS, 0)} | ${mb(t.peakRss)} | ${t.unauditedLogged === undefined ? '–' : t.unauditedLogged ? 'yes' : 'no'} |`,
    );
  }
  if (r.idle) {
    const i = r.idle;
    lines.push(
      '',
      `Idle sessions (audit): ${i.sessions} initialize exchanges in ${f(i.seconds, 1)} s, ${i.distinctIds} distinct Mcp-Session-Id; RSS ${mb(i.rssBefore)} MB before, ${mb(i.rssAfter)} MB after (full GC), peak ${mb(i.peakRss)} MB; V8 heap in use ${mb(i.heapBefore)} MB before, ${mb(i.heapAfter)} MB after: ${f((i.heapAfter - i.heapBefore) / i.sessions / 1024, 2)} KiB of live heap and ${f((i.rssAfter - i.rssBefore) / i.sessions / 1024, 2)} KiB of RSS per session${i.heapTotalAfter ? `; the heap's capacity (heapTotal) after the full GC: ${mb(i.heapTotalAfter)} MB` : ''}.`,
    );
  }
  lines.push(
    '',
    '## Running it',
    '',
    '```',
    'npm run bench                     # the whole run; writes test/bench/RESULTS.md and results.json',
    'BENCH_QUICK=1 npm run bench       # short cells, to try a change (does not write RESULTS.md)',
    'npm run bench:transports          # only the stdio and legacy SSE cells (~70 s), tables printed, no file written',
    'BENCH_CPU_PROF=/tmp/prof npm run bench   # proxy children write .cpuprofile files there',
    'node --import tsx test/bench/profile-summary.ts /tmp/prof/<file>.cpuprofile',
    'node --import tsx test/bench/profile.ts audit small 10 5   # profile one proxy on one cell, print where the time went',
    'node --import tsx test/bench/experiments.ts cpu|memory       # the experiments ANALYSIS.md quotes',
    'node --import tsx test/bench/judging.ts                     # CPU of the judging alone, in-process',
    'node --import tsx test/bench/workers.ts 5 4 2               # req/s and CPU per request with --workers 1 and 2',
    'node --import tsx test/bench/soak.ts 4 audit 10             # minutes of mixed load, RSS sampled; writes SOAK.md',
    'node --import tsx test/bench/run.ts --render                # RESULTS.md again from results.json and ANALYSIS.md',
    'node --import tsx test/bench/run.ts --curves                # the curves alone (~8 min): measured, drawn, merged into results.json',
    'node --import tsx test/bench/run.ts --transports            # the stdio and legacy SSE cells alone (~2 min), merged into results.json',
    '```',
    '',
  );
  return lines.join('\n');
}
