// Does an SSE event leave the proxy as it arrives? The upstream runs in this process and stamps
// each event with performance.now() just before its write; the client, also in this process (one
// clock, no cross-process skew), reads the stream and takes the difference when the event's bytes
// arrive. Events are 2 ms apart so each is its own write; the proxy runs in its own process.
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { FAST_WORKLOADS, openSession, type Headers } from './client.ts';
import { measure } from './load.ts';
import { SETUPS, startTarget, type SetupName } from './setups.ts';
import { startFastUpstream } from './upstream.ts';

export interface SseLatency {
  setup: SetupName;
  events: number;
  p50: number;
  p99: number;
  max: number;
  /** p50 minus the direct connection's p50. */
  addedP50: number | undefined;
  addedP99: number | undefined;
}

export interface SseLatencyOptions {
  /** Seconds of SSE load through each proxy before it is measured. */
  warmupS: number;
  streams: number;
  eventsPerStream: number;
  gapMs: number;
}

const SENT_AT = /"sentAt":([0-9.]+)/;

async function oneStream(url: URL, headers: Headers, seq: number, opts: SseLatencyOptions, out: number[]): Promise<void> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: `lat-${seq}`,
    method: 'tools/call',
    params: { name: 'timed', arguments: { count: opts.eventsPerStream, gapMs: opts.gapMs }, _meta: { progressToken: `lat-${seq}` } },
  });
  const res = await request(url, { method: 'POST', headers, body, headersTimeout: 10_000, bodyTimeout: 10_000 });
  if (res.statusCode !== 200) throw new Error(`timed stream through ${url.href}: HTTP ${res.statusCode}`);
  let pending = '';
  let seen = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    const now = performance.now();
    pending += chunk.toString('utf8');
    let end: number;
    while ((end = pending.indexOf('\n\n')) >= 0) {
      const m = SENT_AT.exec(pending.slice(0, end));
      pending = pending.slice(end + 2);
      if (m) {
        out.push(now - Number(m[1]));
        seen++;
      }
    }
  }
  if (seen !== opts.eventsPerStream) throw new Error(`timed stream through ${url.href}: ${seen} of ${opts.eventsPerStream} events`);
}

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;

/** Per-event latency, upstream write to client read, for every setup (nginx only when installed). */
export async function measureSseLatency(opts: SseLatencyOptions, log: (line: string) => void): Promise<SseLatency[]> {
  const upstream = await startFastUpstream();
  const rows: SseLatency[] = [];
  try {
    let seq = 0;
    for (const setup of SETUPS) {
      const target = await startTarget(setup, upstream.url);
      if (!target) continue;
      try {
        const headers = await openSession(target.url);
        // Warm-up: the proxy's event path compiled (JIT) under load, as in production, then one timed stream.
        const sse = FAST_WORKLOADS.find((w) => w.name === 'SSE 100+1')!;
        await measure({ url: target.url, headers, body: sse.body, connections: 10, durationS: opts.warmupS, warmupS: 0 });
        await oneStream(target.url, headers, ++seq, { ...opts, eventsPerStream: 20 }, []);
        const samples: number[] = [];
        for (let i = 0; i < opts.streams; i++) await oneStream(target.url, headers, ++seq, opts, samples);
        samples.sort((a, b) => a - b);
        rows.push({
          setup,
          events: samples.length,
          p50: pct(samples, 50),
          p99: pct(samples, 99),
          max: samples[samples.length - 1]!,
          addedP50: undefined,
          addedP99: undefined,
        });
        log(
          `sse-latency ${setup}: p50 ${pct(samples, 50).toFixed(3)} ms, p99 ${pct(samples, 99).toFixed(3)} ms over ${samples.length} events`,
        );
      } finally {
        await target.stop();
      }
    }
  } finally {
    await upstream.close();
  }
  const direct = rows.find((r) => r.setup === 'direct');
  for (const r of rows) {
    r.addedP50 = direct ? r.p50 - direct.p50 : undefined;
    r.addedP99 = direct ? r.p99 - direct.p99 : undefined;
  }
  return rows;
}
