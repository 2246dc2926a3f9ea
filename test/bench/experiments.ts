// Experiments that say what bounds a missed target (ANALYSIS.md quotes them); not part of
// `npm run bench`. Each prints a markdown table.
//   node --import tsx test/bench/experiments.ts cpu [regex]  CPU per request of mcp-warden with parts
//       of its work left out (logging, or everything but its transport), beside http-proxy-3; a
//       regex keeps only the variants whose names match
//   node --import tsx test/bench/experiments.ts memory  peak RSS of the big transfers under V8
//       young-generation sizes (--max-semi-space-size)
// CPU time is read from /proc (user + system of the proxy process over the measured seconds), so
// it holds up on a shared machine better than requests/s; rounds are interleaved, the median kept.
import { FAST_WORKLOADS, openSession } from './client.ts';
import { measure } from './load.ts';
import { measureBigTransfers } from './memory.ts';
import { cpuMs, exitWhenDone, withFastUpstream } from './procs.ts';
import { startTarget, type Target, type TargetKind } from './setups.ts';

interface Variant {
  name: string;
  kind: TargetKind;
  env?: Record<string, string>;
  nodeFlags?: string[];
}

const CPU_VARIANTS: Variant[] = [
  { name: 'http-proxy-3 (pass-through)', kind: 'http-proxy-3' },
  { name: "undici floor: mcp-warden's transport alone (body read, undici, body collected), no pipeline, no log", kind: 'undici-floor' },
  { name: "dispatch floor: the same through undici's dispatch with a handler (no Readable, no promise per chunk)", kind: 'dispatch-floor' },
  { name: 'audit, as shipped (one info record per exchange)', kind: 'audit' },
  { name: 'audit, log level warn (no per-exchange records)', kind: 'audit', env: { BENCH_LOG_LEVEL: 'warn' } },
  { name: 'enforce, as shipped', kind: 'enforce' },
];

async function start(v: Variant, upstream: URL): Promise<Target> {
  const saved = { ...process.env };
  Object.assign(process.env, v.env ?? {});
  try {
    const t = await startTarget(v.kind, upstream, { nodeFlags: v.nodeFlags ?? [] });
    if (!t) throw new Error(`${v.name} did not start`);
    return t;
  } finally {
    for (const k of Object.keys(v.env ?? {})) if (saved[k] === undefined) delete process.env[k];
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function cpu(upstream: URL): Promise<void> {
  const small = FAST_WORKLOADS.find((w) => w.name === 'small')!;
  const targets: { v: Variant; t: Target; headers: Record<string, string> }[] = [];
  const only = new RegExp(process.argv[3] ?? '');
  for (const v of CPU_VARIANTS.filter((x) => only.test(x.name))) {
    const t = await start(v, upstream);
    targets.push({ v, t, headers: await openSession(t.url) });
  }
  const rows: string[] = ['| variant | connections | proxy CPU µs/req (median of 3) | req/s (median of 3) |', '|---|---:|---:|---:|'];
  for (const connections of [1, 10]) {
    const cpuRuns = new Map<string, number[]>();
    const rpsRuns = new Map<string, number[]>();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < targets.length; i++) {
        const { v, t, headers } = targets[(i + round) % targets.length]!;
        let c0 = 0;
        let c1 = 0;
        const pid = t.pids()[0]!;
        const n = await measure(
          { url: t.url, headers, body: small.body, connections, durationS: 3, warmupS: round === 0 ? 2 : 0.5 },
          { start: () => (c0 = cpuMs(pid)), end: () => (c1 = cpuMs(pid)) },
        );
        cpuRuns.set(v.name, [...(cpuRuns.get(v.name) ?? []), ((c1 - c0) * 1000) / Math.max(1, n.requests)]);
        rpsRuns.set(v.name, [...(rpsRuns.get(v.name) ?? []), n.rps]);
      }
    }
    for (const { v } of targets)
      rows.push(`| ${v.name} | ${connections} | ${median(cpuRuns.get(v.name)!).toFixed(0)} | ${median(rpsRuns.get(v.name)!).toFixed(0)} |`);
  }
  await Promise.all(targets.map(({ t }) => t.stop()));
  process.stdout.write(`\nSmall tools/call, fast upstream, 3 s per measurement:\n\n${rows.join('\n')}\n`);
}

async function memory(upstream: URL): Promise<void> {
  const rows: string[] = ['| V8 flags | case | peak RSS MB | MB/s |', '|---|---|---:|---:|'];
  // Flags given last win over the image's NODE_OPTIONS (setups.ts); 16 MB is Node 20's default.
  for (const flags of [['--max-semi-space-size=16'], ['--max-semi-space-size=4'], ['--max-semi-space-size=2']]) {
    for (const t of await measureBigTransfers(upstream, ['audit'], (l) => process.stdout.write(`${l}\n`), 1, flags)) {
      rows.push(`| ${flags.join(' ')} | ${t.case} | ${(t.peakRss / 1e6).toFixed(1)} | ${t.mbPerS.toFixed(0)} |`);
    }
  }
  process.stdout.write(`\nmcp-warden (audit), fresh process per case:\n\n${rows.join('\n')}\n`);
}

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'cpu';
  if (which !== 'cpu' && which !== 'memory') throw new Error('usage: experiments.ts cpu|memory');
  await withFastUpstream((fast) => (which === 'cpu' ? cpu(fast) : memory(fast)));
}

exitWhenDone(main());
