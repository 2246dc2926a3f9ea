// One measured cell: one autocannon run on loopback, its first `warmupS` seconds a warm-up whose
// responses are not counted, the rest measured. (autocannon runs whole seconds: a separate warm-up
// run would cost a second more per cell.) Every request carries its own JSON-RPC id, as a real
// client's would. autocannon's latency histogram counts whole milliseconds, so every response's
// time (hrtime, fractional ms) is kept here and the percentiles come from those, to the microsecond.
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface CellLoad {
  url: URL;
  headers: Record<string, string>;
  body: string;
  connections: number;
  /** Session ids taken in turn, one per request, in place of the headers' own (the sessions curve). */
  sessions?: readonly string[];
  /** Measured seconds; warm-up plus this is rounded up to whole seconds. */
  durationS: number;
  warmupS: number;
}

export interface CellNumbers {
  /** 2xx responses in the measured window. */
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  /** Non-2xx answers, socket errors and timeouts (whole run). */
  errors: number;
  /** Response bytes per second (whole run). */
  bytesPerS: number;
}

/** At most this many latencies are kept per cell (the rest still count toward requests/s). */
const MAX_SAMPLES = 2_000_000;
let seq = 0;
let samples: Float64Array | undefined;

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface WindowHooks {
  /** When the warm-up ends and the measured seconds start. */
  start?(): void;
  /** When the measured seconds end. */
  end?(): void;
}

/** Runs the cell; `hooks` mark the measured window (peak-RSS reset, CPU readings). */
export async function measure(load: CellLoad, hooks: WindowHooks = {}): Promise<CellNumbers> {
  samples ??= new Float64Array(MAX_SAMPLES);
  const kept = samples;
  const total = Math.max(1, Math.ceil(load.warmupS + load.durationS - 1e-9));
  const instance = autocannon({
    url: load.url.href,
    connections: load.connections,
    pipelining: 1,
    duration: total,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: load.url.pathname + load.url.search,
        headers: load.headers,
        // A fresh id on every request (autocannon's idReplacement miscounts content-length).
        setupRequest: (req) => {
          const body = load.body.replaceAll('[<id>]', `b${++seq}`);
          const sessions = load.sessions;
          if (!sessions) return { ...req, body };
          return { ...req, body, headers: { ...req.headers, 'mcp-session-id': sessions[seq % sessions.length]! } };
        },
      },
    ],
  });
  const started = performance.now();
  const measureFrom = started + (total - load.durationS) * 1000;
  const measureTo = started + total * 1000;
  let counted = 0;
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    hooks.end?.();
  };
  const timers = [setTimeout(() => hooks.start?.(), measureFrom - started), setTimeout(end, measureTo - started)];
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    const now = performance.now();
    if (now < measureFrom || now > measureTo || status < 200 || status > 299) return;
    if (counted < kept.length) kept[counted] = ms;
    counted++;
  });
  const result = await new Promise<autocannon.Result>((resolve, reject) => instance.then(resolve, reject));
  timers.forEach(clearTimeout);
  end();
  const n = Math.min(counted, kept.length);
  const sorted = kept.slice(0, n).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    requests: counted,
    rps: counted / load.durationS,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: n > 0 ? sum / n : Number.NaN,
    errors: result.non2xx + result.errors + result.timeouts,
    bytesPerS: result.throughput.average,
  };
}
