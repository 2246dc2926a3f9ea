// The throughput matrix: for each upstream, every setup in front of it at once (idle ones cost no
// CPU), then each workload x connection count measured on every setup in turn, so the setups of a
// cell are measured minutes apart at most, never a whole run apart (this machine is shared).
import { performance } from 'node:perf_hooks';
import { checkWorkload, FAST_WORKLOADS, openSession, SDK_WORKLOADS, type Workload } from './client.ts';
import { measure, type CellLoad, type CellNumbers } from './load.ts';
import { cpuMs, machineBusyMs, procStatusBytes, resetPeak } from './procs.ts';
import { INSTALL_HINTS, SDK_SETUPS, SETUPS, startTarget, type TargetKind, type Target } from './setups.ts';

export interface Cell extends CellNumbers {
  upstream: 'fast' | 'sdk';
  workload: string;
  connections: number;
  setup: TargetKind;
  /** Peak RSS of the setup's processes during the measured seconds (bytes); undefined for direct. */
  peakRss: number | undefined;
  /** CPU time the proxy's processes used per request (µs); undefined for direct. */
  cpuUsPerReq: number | undefined;
  /** CPU time per request of every process on the path: the load generator, the upstream and the proxy (µs). */
  allCpuUsPerReq?: number | undefined;
  /** Cores busy with other work on the machine during the measured seconds (not the load generator, upstream or proxy). */
  otherCores: number;
  /** Rounds measured; with more than one, each number is the median of the rounds. */
  rounds: number;
  /** p50 minus direct's p50 in the same cell (ms). */
  addedP50?: number;
  addedP99?: number;
  /** requests/s over http-proxy-3's and nginx's in the same cell. */
  vsHttpProxy3?: number;
  vsNginx?: number;
}

export interface MatrixOptions {
  connections: number[];
  durationS: number;
  warmupS: number;
  /** Warm-up of each new target before its first cell (JIT), per workload of its group. */
  targetWarmupS: number;
  /** The upstream process, whose CPU is not "other work". */
  upstreamPid: number;
  /** How many rounds a cell gets (the median is kept): more where a target is judged. */
  rounds: (upstream: Cell['upstream'], workload: string, connections: number) => number;
}

interface Group {
  upstream: Cell['upstream'];
  url: URL;
  /** The setups measured in front of it, in this order. */
  setups: readonly TargetKind[];
  workloads: Workload[];
  /** Connection counts this group skips, and why (said in the log and in RESULTS.md). */
  skip?: { connections: number; why: string };
}

export function groupsFor(urls: { fast: string; sdkJson: string; sdkSse: string }): Group[] {
  return [
    // mcp-proxy relays a stdio server: only the SDK fixture has a stdio form.
    { upstream: 'fast', url: new URL(urls.fast), setups: SETUPS, workloads: FAST_WORKLOADS },
    {
      upstream: 'sdk',
      url: new URL(urls.sdkJson),
      setups: SDK_SETUPS,
      workloads: SDK_WORKLOADS.filter((w) => !w.name.startsWith('SSE')),
    },
    {
      upstream: 'sdk',
      url: new URL(urls.sdkSse),
      setups: SDK_SETUPS,
      workloads: SDK_WORKLOADS.filter((w) => w.name.startsWith('SSE')),
      // countdown sleeps (setTimeout, >= 1 ms) between its 100 events: 50 of them at once take longer than a cell.
      skip: { connections: 50, why: 'the SDK countdown sleeps >= 1 ms per event; 50 concurrent streams outlast the measured window' },
    },
  ];
}

const peakOf = (t: Target): number | undefined =>
  t.setup === 'direct' ? undefined : t.pids().reduce((s, pid) => s + (procStatusBytes(pid, 'VmHWM') ?? 0), 0);

/**
 * Setups that are not ours: a workload they cannot carry (the check fails) is their finding, not a
 * broken bench. Its cells are skipped, with the reason logged, instead of failing the run. Their
 * check is repeated: a relay that loses messages may do it only now and then (mcp-proxy 6.7.19
 * drops the last progress events of most countdown streams, not all), and a cell measured on
 * answers that are not whole would be a wrong number.
 */
const THIRD_PARTY = new Set<TargetKind>(['mcp-proxy']);
const THIRD_PARTY_CHECKS = 10;

/** Checks `w` up to `times` times; what the first failed check said, or undefined when every one passed. */
async function failedCheck(url: URL, headers: Record<string, string>, w: Workload, times: number): Promise<string | undefined> {
  for (let i = 1; i <= times; i++) {
    try {
      await checkWorkload(url, headers, w);
    } catch (err) {
      return `check ${i} of ${times} failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  return undefined;
}

/** A target with its session open, and the workloads it cannot carry (a setup not ours). */
interface CheckedTarget {
  target: Target;
  headers: Record<string, string>;
  skip: Set<string>;
}

/**
 * Opens `target`'s session and checks each workload through it: the session and the workloads it
 * can carry, or undefined when a setup not ours can carry none (said in the log). A setup of ours
 * that fails a check fails the run.
 */
async function checked(target: Target, group: Group, log: (line: string) => void): Promise<CheckedTarget | undefined> {
  const ours = !THIRD_PARTY.has(target.setup);
  let headers: Record<string, string>;
  try {
    headers = await openSession(target.url);
  } catch (err) {
    if (ours) throw err;
    log(`${group.upstream} ${target.setup}: skipped (no session: ${err instanceof Error ? err.message : String(err)})`);
    return undefined;
  }
  const skip = new Set<string>();
  for (const w of group.workloads) {
    if (ours) {
      await checkWorkload(target.url, headers, w);
      continue;
    }
    const failed = await failedCheck(target.url, headers, w, THIRD_PARTY_CHECKS);
    if (failed === undefined) continue;
    skip.add(w.name);
    log(`${group.upstream} ${w.name} ${target.setup}: skipped (${failed})`);
  }
  return group.workloads.every((w) => skip.has(w.name)) ? undefined : { target, headers, skip };
}

export async function runGroup(group: Group, opts: MatrixOptions, log: (line: string) => void): Promise<Cell[]> {
  const targets: CheckedTarget[] = [];
  const cells: Cell[] = [];
  try {
    for (const setup of group.setups) {
      const target = await startTarget(setup, group.url);
      if (!target) {
        const hint = INSTALL_HINTS[setup];
        log(`${setup}: not installed${hint ? ` (to install: ${hint})` : ''}, skipped`);
        continue;
      }
      const entry = await checked(target, group, log).catch(async (err: unknown) => {
        await target.stop();
        throw err;
      });
      if (!entry) {
        await target.stop();
        continue;
      }
      targets.push(entry);
      // Every workload's path is warmed, not only the first: a JIT still compiling is not what production runs.
      for (const w of group.workloads) {
        if (entry.skip.has(w.name)) continue;
        await measure({
          url: target.url,
          headers: entry.headers,
          body: w.body,
          connections: 10,
          durationS: opts.targetWarmupS,
          warmupS: 0,
        });
      }
    }
    for (const w of group.workloads) {
      for (const connections of opts.connections) {
        if (group.skip?.connections === connections) {
          log(`${group.upstream} ${w.name} c=${connections}: skipped (${group.skip.why})`);
          continue;
        }
        const base = { upstream: group.upstream, workload: w.name, connections };
        const rounds = opts.rounds(group.upstream, w.name, connections);
        const runs = new Map<TargetKind, Cell[]>();
        const measured = targets.filter((t) => !t.skip.has(w.name));
        for (let r = 0; r < rounds; r++) {
          // Each round starts with another setup, so none is always measured first or last.
          for (let i = 0; i < measured.length; i++) {
            const { target, headers } = measured[(i + r) % measured.length]!;
            const cell = await measureCell(
              target,
              { url: target.url, headers, body: w.body, connections, durationS: opts.durationS, warmupS: opts.warmupS },
              opts.upstreamPid,
            );
            runs.set(target.setup, [...(runs.get(target.setup) ?? []), { ...base, ...cell }]);
          }
        }
        const row = measured.map(({ target }) => median(runs.get(target.setup)!));
        compare(row);
        for (const c of row) log(line(c));
        cells.push(...row);
      }
    }
  } finally {
    await Promise.all(targets.map(({ target }) => target.stop()));
  }
  return cells;
}

export type Measured = Omit<Cell, 'upstream' | 'workload' | 'connections'>;

/** One measurement of one setup, with its peak RSS and CPU time over the measured seconds. */
export async function measureCell(target: Target, load: CellLoad, upstreamPid: number): Promise<Measured> {
  const ours = (): number[] => [process.pid, upstreamPid, ...target.pids()].map(cpuMs);
  const sample = () => ({ ours: ours(), busy: machineBusyMs(), at: performance.now() });
  let start = { ours: [0], busy: 0, at: 0 };
  let end = start;
  const n = await measure(load, {
    start: () => {
      target.pids().forEach(resetPeak);
      start = sample();
    },
    end: () => (end = sample()),
  });
  const used = end.ours.map((v, i) => v - (start.ours[i] ?? 0));
  const proxyMs = used.slice(2).reduce((a, b) => a + b, 0);
  const otherMs = end.busy - start.busy - used.reduce((a, b) => a + b, 0);
  return {
    setup: target.setup,
    ...n,
    peakRss: peakOf(target),
    cpuUsPerReq: target.setup === 'direct' || n.requests === 0 ? undefined : (proxyMs * 1000) / n.requests,
    allCpuUsPerReq: n.requests === 0 ? undefined : (used.reduce((a, b) => a + b, 0) * 1000) / n.requests,
    otherCores: Math.max(0, otherMs / Math.max(1, end.at - start.at)),
    rounds: 1,
  };
}

/** Several rounds of one setup: the median of each number on its own (peak RSS: the highest). */
function median(cells: Cell[]): Cell {
  if (cells.length === 1) return cells[0]!;
  const mid = <T extends number | undefined>(pick: (c: Cell) => T): T => {
    const values = cells
      .map(pick)
      .filter((v): v is NonNullable<T> => v !== undefined)
      .sort((a, b) => (a as number) - (b as number));
    return (values.length === 0 ? undefined : values[Math.floor(values.length / 2)]) as T;
  };
  return {
    ...cells[0]!,
    requests: mid((c) => c.requests),
    rps: mid((c) => c.rps),
    p50: mid((c) => c.p50),
    p99: mid((c) => c.p99),
    mean: mid((c) => c.mean),
    errors: cells.reduce((a, c) => a + c.errors, 0),
    bytesPerS: mid((c) => c.bytesPerS),
    peakRss: cells.some((c) => c.peakRss !== undefined) ? Math.max(...cells.map((c) => c.peakRss ?? 0)) : undefined,
    cpuUsPerReq: mid((c) => c.cpuUsPerReq),
    allCpuUsPerReq: mid((c) => c.allCpuUsPerReq),
    otherCores: mid((c) => c.otherCores),
    rounds: cells.length,
  };
}

/** Fills in each cell of one row (same upstream, workload, connections) against its baselines. */
function compare(row: Cell[]): void {
  const of = (s: TargetKind): Cell | undefined => row.find((c) => c.setup === s);
  const direct = of('direct');
  const plain = of('http-proxy-3');
  const nginx = of('nginx');
  for (const c of row) {
    if (direct) {
      c.addedP50 = c.p50 - direct.p50;
      c.addedP99 = c.p99 - direct.p99;
    }
    if (plain && plain.rps > 0) c.vsHttpProxy3 = c.rps / plain.rps;
    if (nginx && nginx.rps > 0) c.vsNginx = c.rps / nginx.rps;
  }
}

function line(c: Cell): string {
  const rounds = c.rounds > 1 ? ` (median of ${c.rounds})` : '';
  const mb = c.peakRss !== undefined ? ` rss ${(c.peakRss / 1e6).toFixed(0)}MB cpu ${c.cpuUsPerReq?.toFixed(0)}µs/req` : '';
  return `${c.upstream} ${c.workload} c=${c.connections} ${c.setup}: ${c.rps.toFixed(0)} req/s p50 ${c.p50.toFixed(3)} p99 ${c.p99.toFixed(3)} ms${mb} others ${c.otherCores.toFixed(2)} cores${rounds}${c.errors ? ` ERRORS ${c.errors}` : ''}`;
}
