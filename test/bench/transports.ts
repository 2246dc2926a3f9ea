// Per-message overhead of mcp-warden on the transports that are not request/response HTTP (issue
// 13), against the same server reached directly, in the same run:
//   stdio       the bench drives the pipes itself (stdio-client.ts): the fixture server
//               (test/fixtures/stdio-server.ts, bundled) as a child of the bench, and
//               `mcp-warden stdio [--policy config/enforce.yaml] --log-file <tmp> -- <fixture>` (the
//               CLI bundled, as the tests run it; plain `node`, as npm installs it), audit and
//               enforce. The logs go to files in a temporary directory, removed after.
//   legacy-sse  a client of the 2024-11-05 transport (legacy-client.ts: GET stream, POST 202,
//               answer on the stream) against the minimal legacy upstream (upstream.ts) directly,
//               through http-proxy-3, nginx (when installed) and mcp-warden audit and enforce
//               (proxy-child.ts, as in the HTTP cells: image NODE_OPTIONS, log at info to /dev/null).
// Each: tools/call echo, one in flight (sequential) and ten (pipelined), in a closed loop
// (closed-loop.ts); rounds interleaved so each starts with another setup, the median of each
// number kept. CPU is each process's user + system time from /proc over the measured window.
// Part of `npm run bench` (run.ts); alone, printing its tables (it writes no file):
//   npm run bench:transports [-- stdio|legacy-sse]   one transport only when named
//   BENCH_QUICK=1 for short rounds; BENCH_CPU_PROF=<dir> profiles mcp-warden (stdio and proxy
//   children) with --cpu-prof there; BENCH_LOG_LEVEL=warn leaves out mcp-warden's per-exchange
//   records (an experiment that prices logging, as in proxy-child.ts)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { cliArgs } from '../helpers/bundle.ts';
import { fixtureServer } from '../helpers/stdio.ts';
import { buildChildren } from './build.ts';
import { closedLoop, type LoopNumbers } from './closed-loop.ts';
import { LegacyClient } from './legacy-client.ts';
import {
  childPids,
  cpuMs,
  exitWhenDone,
  hookExit,
  machineBusyMs,
  profileFlags,
  setChildScripts,
  startChild,
  startPipedProcess,
  stopAll,
} from './procs.ts';
import { transportTables } from './report.ts';
import { INSTALL_HINTS, SETUPS, startTarget, type SetupName, type Target } from './setups.ts';
import { StdioClient, type RpcMessage } from './stdio-client.ts';

export type TransportName = 'stdio' | 'legacy-sse';

/** The setups of a transport's table: ours and the baselines, and mcp-proxy's legacy SSE endpoint. */
export type TransportSetup = SetupName | 'mcp-proxy';

export interface TransportCell extends LoopNumbers {
  transport: TransportName;
  setup: TransportSetup;
  /** Requests in flight at once: 1 is sequential. */
  inFlight: number;
  /** CPU time of the proxy's processes per answered message (µs); undefined for direct. */
  proxyCpuUsPerMsg: number | undefined;
  /** CPU time of the server per answered message (µs): the stdio fixture child, or the upstream process. */
  serverCpuUsPerMsg: number | undefined;
  /** Cores busy with other work on the machine (neither the bench, the server nor the proxy) during the measured window. */
  otherCores: number;
  rounds: number;
  /** p50 / p99 minus direct's, same transport and in-flight count (ms). */
  addedP50?: number;
  addedP99?: number;
  /** messages/s over direct's and http-proxy-3's. */
  vsDirect?: number;
  vsHttpProxy3?: number;
}

export interface TransportSettings {
  inFlight: number[];
  rounds: number;
  /** Measured seconds per round. */
  durationS: number;
  /** Unmeasured seconds before each round. */
  warmupS: number;
  /** Load (10 in flight) on each new setup before its first round (JIT). */
  targetWarmupS: number;
}

export interface TransportOptions extends TransportSettings {
  /** The legacy upstream's SSE URL and the PID of the process it runs in (upstream.ts). */
  legacyUpstream: URL;
  upstreamPid: number;
  /** Only this transport (default: both). */
  only?: TransportName;
}

/** ~70 s for the whole (about 10 s measured per setup and in-flight count), ~15 s quick. */
export const transportSettings = (quick: boolean): TransportSettings =>
  quick
    ? { inFlight: [1, 10], rounds: 1, durationS: 0.5, warmupS: 0.1, targetWarmupS: 0.5 }
    : { inFlight: [1, 10], rounds: 3, durationS: 1, warmupS: 0.25, targetWarmupS: 2 };

interface Session {
  request(method: string, paramsJson: string): Promise<RpcMessage>;
  notify(method: string): unknown;
}

interface Peer {
  setup: TransportSetup;
  call(): Promise<boolean>;
  proxyPids(): number[];
  serverPids(): number[];
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ECHO_TEXT = 'weather in Paris, metric, brief';

/** A tools/call of a server's echo tool, and the text a correct answer carries. */
interface Echo {
  params: string;
  text: string;
}
/** The echo of the stdio fixture and of the minimal legacy upstream. */
const ECHO: Echo = { params: JSON.stringify({ name: 'echo', arguments: { message: ECHO_TEXT } }), text: `Echo: ${ECHO_TEXT}` };
/** The official-SDK fixture's echo (test/fixtures/sdk-server.ts), behind mcp-proxy. */
const SDK_ECHO: Echo = { params: JSON.stringify({ name: 'echo', arguments: { text: ECHO_TEXT } }), text: `echo: ${ECHO_TEXT}` };
const isResult = (m: RpcMessage): boolean => m.result !== undefined && m.error === undefined;

/** initialize, initialized, tools/list (mcp-warden learns the version and the tools, as with a real client), then one echo, checked. */
async function openSession(s: Session, version: string, where: string, echo: Echo = ECHO): Promise<void> {
  const params = { protocolVersion: version, capabilities: {}, clientInfo: { name: 'warden-bench', version: '1.0.0' } };
  const init = await s.request('initialize', JSON.stringify(params));
  if (!isResult(init)) throw new Error(`${where}: initialize answered ${JSON.stringify(init).slice(0, 300)}`);
  await s.notify('notifications/initialized');
  const list = await s.request('tools/list', '{}');
  if (!isResult(list)) throw new Error(`${where}: tools/list answered ${JSON.stringify(list).slice(0, 300)}`);
  const answer = await s.request('tools/call', echo.params);
  const text = (answer.result as { content?: { text?: string }[] } | undefined)?.content?.[0]?.text;
  if (text !== echo.text) throw new Error(`${where}: echo answered ${JSON.stringify(answer).slice(0, 300)}`);
}

/** mcp-warden logged the checked echo as an exchange: it judges what the bench measures. */
async function loggedEcho(logFile: string, where: string): Promise<void> {
  const until = Date.now() + 5000;
  for (;;) {
    let text = '';
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      /* not created yet */
    }
    if (text.split('\n').some((l) => l.includes('"msg":"exchange"') && l.includes('"tool":"echo"'))) return;
    if (Date.now() > until) throw new Error(`${where}: no exchange record for the echo in ${logFile}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function startStdioPeer(setup: 'direct' | 'audit' | 'enforce', logDir: string): Promise<Peer> {
  const server = await fixtureServer();
  const logFile = join(logDir, `${setup}.jsonl`);
  const policy = setup === 'enforce' ? ['--policy', join(ROOT, 'config/enforce.yaml')] : [];
  const level = process.env.BENCH_LOG_LEVEL;
  const flags = [...policy, ...(level ? ['--log-level', level] : [])];
  const warden = [...profileFlags(), ...(await cliArgs()), 'stdio', '--log-file', logFile, ...flags, '--', ...server];
  const client = new StdioClient(startPipedProcess(process.execPath, setup === 'direct' ? server.slice(1) : warden));
  const child = client.child;
  try {
    await openSession(client, '2025-06-18', `stdio ${setup}`);
    if (setup !== 'direct' && ['trace', 'debug', 'info', undefined].includes(level)) await loggedEcho(logFile, `stdio ${setup}`);
  } catch (err) {
    await client.close();
    throw err;
  }
  // mcp-warden's child is the fixture (/proc/<pid>/task/<pid>/children).
  const serverPids = setup === 'direct' ? [child.pid] : childPids(child.pid);
  return {
    setup,
    call: () => client.request('tools/call', ECHO.params).then(isResult),
    proxyPids: () => (setup === 'direct' ? [] : [child.pid]),
    serverPids: () => serverPids,
    close: () => client.close(),
  };
}

/** How a legacy session reaches one setup: its stream's URL, its server's echo, whose CPU is whose. */
interface LegacyRoute {
  sse: URL;
  echo: Echo;
  proxyPids(): number[];
  serverPids(): number[];
}

/** A legacy SSE session through `target`, opened and checked; the target is stopped with it, or if it fails. */
async function legacyPeer(setup: TransportSetup, target: Target, route: LegacyRoute): Promise<Peer> {
  let client: LegacyClient | undefined;
  try {
    client = await LegacyClient.open(route.sse);
    await openSession(client, '2024-11-05', `legacy-sse ${setup}`, route.echo);
    const session = client;
    return {
      setup,
      call: () => session.request('tools/call', route.echo.params).then(isResult),
      proxyPids: route.proxyPids,
      serverPids: route.serverPids,
      close: async () => {
        await session.close();
        await target.stop();
      },
    };
  } catch (err) {
    await client?.close();
    await target.stop();
    throw err;
  }
}

async function startLegacyPeer(setup: SetupName, upstream: URL, upstreamPid: number): Promise<Peer | undefined> {
  const target = await startTarget(setup, upstream);
  if (!target) return undefined;
  return legacyPeer(setup, target, { sse: target.url, echo: ECHO, proxyPids: () => target.pids(), serverPids: () => [upstreamPid] });
}

/**
 * mcp-proxy's legacy endpoint (/sse) in front of the SDK fixture's stdio form: the relay users run
 * for that transport. Its server is another (the SDK's, slower than the minimal upstream): its
 * proxy CPU per message compares, its messages/s less so. Its CPU is mcp-proxy's process alone,
 * the stdio server's is the server's. (mcp-proxy runs its own server: no upstream URL.)
 */
async function startMcpProxyPeer(): Promise<Peer | undefined> {
  const target = await startTarget('mcp-proxy', new URL('http://127.0.0.1/'));
  if (!target) return undefined;
  return legacyPeer('mcp-proxy', target, {
    sse: new URL('/sse', target.url),
    echo: SDK_ECHO,
    proxyPids: () => target.pids().slice(0, 1),
    serverPids: () => target.pids().slice(1),
  });
}

type Measured = Omit<TransportCell, 'transport' | 'inFlight'>;

/** One round of one setup, with the CPU each process used over the measured window. */
async function measureOne(peer: Peer, inFlight: number, o: TransportSettings): Promise<Measured> {
  const servers = peer.serverPids();
  const proxies = peer.proxyPids();
  const pids = [process.pid, ...servers, ...proxies];
  const sample = () => ({ cpu: pids.map(cpuMs), busy: machineBusyMs(), at: performance.now() });
  let start = sample();
  let end = start;
  const n = await closedLoop(
    peer.call,
    { inFlight, warmupS: o.warmupS, durationS: o.durationS },
    { start: () => (start = sample()), end: () => (end = sample()) },
  );
  const used = end.cpu.map((v, i) => v - (start.cpu[i] ?? 0));
  const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
  const perMsg = (ms: number): number => (ms * 1000) / Math.max(1, n.messages);
  const otherMs = end.busy - start.busy - sum(used);
  return {
    setup: peer.setup,
    ...n,
    proxyCpuUsPerMsg: proxies.length === 0 ? undefined : perMsg(sum(used.slice(1 + servers.length))),
    serverCpuUsPerMsg: servers.length === 0 ? undefined : perMsg(sum(used.slice(1, 1 + servers.length))),
    otherCores: Math.max(0, otherMs / Math.max(1, end.at - start.at)),
    rounds: 1,
  };
}

/** Several rounds of one setup: the median of each number on its own. */
function median(runs: Measured[]): Measured {
  if (runs.length === 1) return runs[0]!;
  const mid = (pick: (m: Measured) => number | undefined): number | undefined => {
    const xs = runs
      .map(pick)
      .filter((v): v is number => v !== undefined)
      .sort((a, b) => a - b);
    return xs.length === 0 ? undefined : xs[Math.floor(xs.length / 2)];
  };
  return {
    ...runs[0]!,
    messages: mid((m) => m.messages)!,
    perS: mid((m) => m.perS)!,
    p50: mid((m) => m.p50)!,
    p99: mid((m) => m.p99)!,
    mean: mid((m) => m.mean)!,
    errors: runs.reduce((a, m) => a + m.errors, 0),
    proxyCpuUsPerMsg: mid((m) => m.proxyCpuUsPerMsg),
    serverCpuUsPerMsg: mid((m) => m.serverCpuUsPerMsg),
    otherCores: mid((m) => m.otherCores)!,
    rounds: runs.length,
  };
}

function compare(row: TransportCell[]): void {
  const direct = row.find((c) => c.setup === 'direct');
  const plain = row.find((c) => c.setup === 'http-proxy-3');
  for (const c of row) {
    if (direct) {
      c.addedP50 = c.p50 - direct.p50;
      c.addedP99 = c.p99 - direct.p99;
      if (direct.perS > 0) c.vsDirect = c.perS / direct.perS;
    }
    if (plain && plain.perS > 0) c.vsHttpProxy3 = c.perS / plain.perS;
  }
}

const line = (c: TransportCell): string =>
  `${c.transport} ${c.setup} in-flight=${c.inFlight}: ${c.perS.toFixed(0)} msg/s p50 ${c.p50.toFixed(3)} p99 ${c.p99.toFixed(3)} ms` +
  `${c.vsDirect !== undefined ? ` ${c.vsDirect.toFixed(2)}x direct` : ''}` +
  `${c.proxyCpuUsPerMsg !== undefined ? ` proxy cpu ${c.proxyCpuUsPerMsg.toFixed(0)}µs/msg` : ''}` +
  ` server cpu ${c.serverCpuUsPerMsg?.toFixed(0) ?? '?'}µs/msg others ${c.otherCores.toFixed(2)} cores` +
  `${c.rounds > 1 ? ` (median of ${c.rounds})` : ''}${c.errors ? ` ERRORS ${c.errors}` : ''}`;

/** Warms each peer up, then measures every in-flight count on every peer in interleaved rounds. */
async function runPeers(transport: TransportName, peers: Peer[], o: TransportSettings, log: (l: string) => void): Promise<TransportCell[]> {
  for (const p of peers) await closedLoop(p.call, { inFlight: 10, warmupS: 0, durationS: o.targetWarmupS });
  const cells: TransportCell[] = [];
  for (const inFlight of o.inFlight) {
    const runs = new Map<TransportSetup, Measured[]>();
    for (let r = 0; r < o.rounds; r++) {
      for (let i = 0; i < peers.length; i++) {
        const peer = peers[(i + r) % peers.length]!;
        runs.set(peer.setup, [...(runs.get(peer.setup) ?? []), await measureOne(peer, inFlight, o)]);
      }
    }
    const row = peers.map((p): TransportCell => ({ transport, inFlight, ...median(runs.get(p.setup)!) }));
    compare(row);
    for (const c of row) log(line(c));
    cells.push(...row);
  }
  return cells;
}

/** The stdio cells, then the legacy SSE cells; every process started here is stopped before it returns. */
export async function measureTransports(o: TransportOptions, log: (line: string) => void): Promise<TransportCell[]> {
  const cells: TransportCell[] = [];
  if (o.only !== 'legacy-sse') cells.push(...(await measureStdio(o, log)));
  if (o.only !== 'stdio') cells.push(...(await measureLegacy(o, log)));
  return cells;
}

async function measureStdio(o: TransportOptions, log: (line: string) => void): Promise<TransportCell[]> {
  const logDir = mkdtempSync(join(tmpdir(), 'warden-bench-stdio-'));
  const peers: Peer[] = [];
  try {
    for (const setup of ['direct', 'audit', 'enforce'] as const) peers.push(await startStdioPeer(setup, logDir));
    return await runPeers('stdio', peers, o, log);
  } finally {
    await Promise.all(peers.map((p) => p.close()));
    rmSync(logDir, { recursive: true, force: true });
  }
}

async function measureLegacy(o: TransportOptions, log: (line: string) => void): Promise<TransportCell[]> {
  const legacy: Peer[] = [];
  try {
    for (const setup of SETUPS) {
      try {
        const peer = await startLegacyPeer(setup, o.legacyUpstream, o.upstreamPid);
        if (peer) legacy.push(peer);
        else log(`legacy-sse ${setup}: not installed, skipped`);
      } catch (err) {
        // nginx's legacy SSE path is configured as its HTTP one (buffering off) but was not run where this was written.
        if (setup !== 'nginx') throw err;
        log(`legacy-sse nginx: skipped (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    // Not ours: what it cannot carry is said and skipped, not a broken run.
    try {
      const peer = await startMcpProxyPeer();
      if (peer) legacy.push(peer);
      else log(`legacy-sse mcp-proxy: not installed (to install: ${INSTALL_HINTS['mcp-proxy']}), skipped`);
    } catch (err) {
      log(`legacy-sse mcp-proxy: skipped (${err instanceof Error ? err.message : String(err)})`);
    }
    return await runPeers('legacy-sse', legacy, o, log);
  } finally {
    await Promise.all(legacy.map((p) => p.close()));
  }
}

/** `npm run bench:transports`: the transport cells alone, their tables printed. */
async function main(): Promise<void> {
  hookExit();
  const quick = process.env.BENCH_QUICK === '1';
  const only = process.argv[2];
  if (only !== undefined && only !== 'stdio' && only !== 'legacy-sse') throw new Error('usage: transports.ts [stdio|legacy-sse]');
  const started = Date.now();
  const log = (l: string): void => void process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(3)} s] ${l}\n`);
  const settings = transportSettings(quick);
  log(
    `${availableParallelism()} cores, Node ${process.version}, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  let cells: TransportCell[] = [];
  try {
    setChildScripts(await buildChildren());
    const { child, ready } = await startChild<{ urls: { legacySse: string } }>('upstream', []);
    cells = await measureTransports({ ...settings, legacyUpstream: new URL(ready.urls.legacySse), upstreamPid: child.pid, only }, log);
  } finally {
    await stopAll();
  }
  log(
    `done in ${((Date.now() - started) / 1000).toFixed(0)} s, load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  process.stdout.write(`\n${transportTables(cells, settings).join('\n')}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) exitWhenDone(main());
