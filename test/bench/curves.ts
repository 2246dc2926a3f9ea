// How cost grows with the work: CPU per exchange of direct, http-proxy-3, audit and enforce in front
// of the fast upstream, against one quantity at a time (answer size, tool catalogue, sessions, SSE
// events per answer, connections), the others held at the matrix's small call over 10 connections.
// The same four targets serve every curve, warmed once; the sessions curve runs last. Each point
// is measured twice on each target, interleaved, the cheaper kept. Each proxy's shape (shapeOf)
// is worked out when the report is written.
import { request } from 'undici';
import { call, checkWorkload, FAST_WORKLOADS, openSession, type Headers, type Workload } from './client.ts';
import { measure } from './load.ts';
import { measureCell, type Measured } from './matrix.ts';
import { startTarget, type Target, type TargetKind } from './setups.ts';

export const CURVE_SETUPS = ['direct', 'http-proxy-3', 'audit', 'enforce'] as const;

export interface CurvePoint {
  x: number;
  setup: TargetKind;
  requests: number;
  rps: number;
  p50: number;
  errors: number;
  /** The proxy's own CPU per exchange (µs); undefined for direct. */
  proxyUs: number | undefined;
  /** CPU per exchange of every process on the path: load generator, upstream, proxy (µs). */
  allUs: number | undefined;
}

export interface Shape {
  /** d log(CPU) / d log(x) over the last segment. */
  exponent: number;
  /** The same from the first point to the last. */
  overall: number;
  verdict: 'flat' | 'linear' | 'worse than linear';
}

export interface Curve {
  id: string;
  title: string;
  xLabel: string;
  points: CurvePoint[];
}

export interface CurveSettings {
  durationS: number;
  warmupS: number;
  /** Load of each target before the first curve (JIT), seconds. */
  targetWarmupS: number;
  /** Measurements of each point on each target, interleaved; the cheaper is kept. */
  rounds: number;
  /** The x values of each curve (quick runs take fewer). */
  xs: Record<CurveId, number[]>;
}

type CurveId = 'answer-size' | 'catalogue' | 'sessions' | 'sse-events' | 'connections';

export function curveSettings(quick: boolean): CurveSettings {
  return {
    durationS: quick ? 0.5 : 1,
    warmupS: quick ? 0.2 : 0.5,
    targetWarmupS: quick ? 0.5 : 2.5,
    rounds: quick ? 1 : 2,
    xs: quick
      ? {
          connections: [1, 10, 50],
          'answer-size': [1_000, 100_000, 1_000_000],
          'sse-events': [1, 100, 1000],
          catalogue: [10, 500],
          sessions: [1, 100, 1000],
        }
      : {
          connections: [1, 10, 50, 100, 200],
          'answer-size': [1_000, 16_000, 256_000, 1_000_000, 4_000_000],
          'sse-events': [1, 10, 100, 1000, 10_000],
          catalogue: [10, 100, 500, 2000],
          sessions: [1, 10, 100, 1000, 10_000],
        },
  };
}

/** What each curve varies, and the workload of one of its points. */
interface CurveSpec {
  id: CurveId;
  title: string;
  xLabel: string;
  workload(x: number): Workload;
  connections(x: number): number;
  /** Sessions to spread the requests over; by default the target's one session. */
  sessions?(target: Target, x: number): Promise<{ headers: Headers; ids?: string[]; url?: URL }>;
}

/** Ends sessions as a client does (DELETE), 20 at a time, so the next point's start with a table that has room. */
async function endSessions(url: URL, headers: Headers, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 20) {
    await Promise.all(
      ids.slice(i, i + 20).map(async (id) => {
        const res = await request(url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': id } });
        await res.body.dump();
      }),
    );
  }
}

const SMALL = FAST_WORKLOADS.find((w) => w.name === 'small')!;

const SPECS: CurveSpec[] = [
  {
    id: 'connections',
    title: 'CPU per small tools/call against connections',
    xLabel: 'connections',
    workload: () => SMALL,
    connections: (x) => x,
  },
  {
    id: 'answer-size',
    title: 'CPU per tools/call against the answer size',
    xLabel: 'answer bytes',
    workload: (x) => ({ name: `${x} B`, body: call('sized', { bytes: x }), expect: { minBytes: x * 0.9, maxBytes: x * 1.1 + 100 } }),
    connections: () => 10,
  },
  {
    id: 'sse-events',
    title: 'CPU per tools/call answered over SSE against its events',
    xLabel: 'events per answer (progress notifications + the result)',
    workload: (x) => ({
      name: `SSE ${x}+1`,
      body: call('sse', { count: x }, true),
      expect: { minBytes: 100 * x, maxBytes: 300 * (x + 1), events: x + 1 },
    }),
    connections: () => 10,
  },
  {
    id: 'catalogue',
    title: "CPU per small tools/call against the session's tool catalogue",
    xLabel: 'tools in the catalogue',
    workload: () => SMALL,
    connections: () => 10,
    // A session listed through the target with ?tools=N: the proxy learns a catalogue of N tools.
    async sessions(target, x) {
      const url = new URL(target.url);
      url.searchParams.set('tools', String(x));
      return { headers: await openSession(url), url };
    },
  },
  {
    id: 'sessions',
    title: 'CPU per small tools/call against the sessions it is spread over',
    xLabel: 'sessions (each request in the next one)',
    workload: () => SMALL,
    connections: () => 10,
    // The proxy remembers 10,000 sessions: the point's own are ended after it (endSessions), or a
    // round robin over 10,000 among 11,000 would find each evicted just before its turn.
    async sessions(target, x) {
      const ids = await openSessions(target.url, x);
      return { headers: await openSession(target.url), ids };
    },
  },
];

/** Opens `n` sessions through `url`, 20 at a time; their ids. */
async function openSessions(url: URL, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 20) {
    const batch = await Promise.all(Array.from({ length: Math.min(20, n - i) }, () => openSession(url)));
    ids.push(...batch.map((h) => h['mcp-session-id']!));
  }
  return ids;
}

/** The exponent of growth between two points (log-log slope). */
const slope = (x0: number, y0: number, x1: number, y1: number): number => Math.log(y1 / y0) / Math.log(x1 / x0);

/**
 * The shape of a proxy's curve (its own CPU per exchange against x): flat when it barely moves from
 * the first point to the last (log-log slope under 0.25 over a range of 20x to 4,000x: one noisy
 * point on this shared host moves a single segment by more), else linear or worse by the slope of
 * the last segment, where the quantity outweighs the fixed cost of an exchange.
 */
export function shapeOf(points: { x: number; y: number }[]): Shape | undefined {
  const ok = points.filter((p) => Number.isFinite(p.y) && p.y > 0).sort((a, b) => a.x - b.x);
  if (ok.length < 2) return undefined;
  const [first, before, last] = [ok[0]!, ok[ok.length - 2]!, ok[ok.length - 1]!];
  const exponent = slope(before.x, before.y, last.x, last.y);
  const overall = slope(first.x, first.y, last.x, last.y);
  const verdict = overall < 0.25 ? 'flat' : exponent <= 1.25 ? 'linear' : 'worse than linear';
  return { exponent, overall, verdict };
}

export async function measureCurves(
  upstream: URL,
  upstreamPid: number,
  settings: CurveSettings,
  log: (line: string) => void,
): Promise<Curve[]> {
  const targets: { target: Target; headers: Headers }[] = [];
  const curves: Curve[] = [];
  try {
    for (const setup of CURVE_SETUPS) {
      const target = await startTarget(setup, upstream);
      if (!target) continue;
      const headers = await openSession(target.url);
      await measure({ url: target.url, headers, body: SMALL.body, connections: 10, durationS: settings.targetWarmupS, warmupS: 0 });
      targets.push({ target, headers });
    }
    for (const spec of SPECS) {
      const curve: Curve = { id: spec.id, title: spec.title, xLabel: spec.xLabel, points: [] };
      for (const x of settings.xs[spec.id]) {
        const w = spec.workload(x);
        const loads = [];
        for (const { target, headers } of targets) {
          const s = spec.sessions ? await spec.sessions(target, x) : { headers };
          const url = s.url ?? target.url;
          await checkWorkload(url, s.headers, w);
          loads.push({ target, s, url });
        }
        // Rounds interleaved, each starting with another target; the cheaper round of each is
        // kept: on this shared host, other work only ever adds CPU per exchange (cache, preemption).
        const best = new Map<Target, Measured>();
        const errors = new Map<Target, number>();
        for (let round = 0; round < settings.rounds; round++) {
          for (let i = 0; i < loads.length; i++) {
            const { target, s, url } = loads[(i + round) % loads.length]!;
            const cell = await measureCell(
              target,
              {
                url,
                headers: s.headers,
                body: w.body,
                connections: spec.connections(x),
                durationS: settings.durationS,
                warmupS: settings.warmupS,
                ...(s.ids ? { sessions: s.ids } : {}),
              },
              upstreamPid,
            );
            errors.set(target, (errors.get(target) ?? 0) + cell.errors);
            const kept = best.get(target);
            if (!kept || (cell.allCpuUsPerReq ?? Number.POSITIVE_INFINITY) < (kept.allCpuUsPerReq ?? Number.POSITIVE_INFINITY))
              best.set(target, cell);
          }
        }
        for (const { target, s, url } of loads) {
          const cell = best.get(target)!;
          const point: CurvePoint = {
            x,
            setup: target.setup,
            requests: cell.requests,
            rps: cell.rps,
            p50: cell.p50,
            errors: errors.get(target) ?? 0,
            proxyUs: cell.cpuUsPerReq,
            allUs: cell.allCpuUsPerReq,
          };
          if (s.ids) await endSessions(url, s.headers, [...s.ids, s.headers['mcp-session-id']!]);
          curve.points.push(point);
          log(
            `curve ${spec.id} x=${x} ${target.setup}: ${point.rps.toFixed(0)} req/s, CPU ${point.proxyUs?.toFixed(0) ?? '–'} µs proxy, ${point.allUs?.toFixed(0) ?? '–'} µs all${point.errors ? ` ERRORS ${point.errors}` : ''}`,
          );
        }
      }
      curves.push(curve);
    }
  } finally {
    await Promise.all(targets.map(({ target }) => target.stop()));
  }
  return curves;
}
