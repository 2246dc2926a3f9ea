// Summarises a V8 .cpuprofile (node --cpu-prof): self time by function and by where the code
// lives (a src/ file, a package, Node's internals, GC), and total (inclusive) time of our src/
// functions, so a missed target can name what bounds it.
//   node --import tsx test/bench/profile-summary.ts <file.cpuprofile> [top=25]
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples: number[];
}

/** Where a frame's code lives: src/<file>, a package, node's internals, or V8's own entries. */
export function placeOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg && !url.includes('.cache/warden-bench')) return pkg[1]!;
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const src = /\/(src\/[^?#]+)/.exec(url);
  if (src) return src[1]!;
  return url.replace(/^file:\/\/.*\//, '');
}

const maps = new Map<string, SourceMap | undefined>();

/** A frame of a compiled bench bundle (build.ts) mapped back to its source file and line. */
function original(frame: Node['callFrame']): Node['callFrame'] {
  if (!frame.url.startsWith('file:') || !frame.url.endsWith('.mjs')) return frame;
  let map = maps.get(frame.url);
  if (!maps.has(frame.url)) {
    const path = `${fileURLToPath(frame.url)}.map`;
    map = existsSync(path) ? new SourceMap(JSON.parse(readFileSync(path, 'utf8'))) : undefined;
    maps.set(frame.url, map);
  }
  const entry = map?.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string; originalLine?: number } | undefined;
  if (!entry?.originalSource) return frame;
  return { ...frame, url: entry.originalSource, lineNumber: entry.originalLine ?? frame.lineNumber };
}

const ACTIVITIES: [string, (place: string) => boolean][] = [
  [
    'logging (pino, redaction, log writes)',
    (p) =>
      p === 'pino' || p === 'sonic-boom' || p.startsWith('@pinojs') || p === 'src/sinks/exchange-log.ts' || p === 'src/sinks/logger.ts',
  ],
  ['metrics (prom-client)', (p) => p === 'prom-client' || p === 'src/sinks/metrics.ts'],
  ['pipeline (decode, correlate, rules, decide)', (p) => /^src\/(codec|exchange|rules|rewrite|pipeline|policy|mcp)/.test(p)],
  ['upstream client (undici)', (p) => p === 'undici'],
  ['http-proxy-3', (p) => p === 'http-proxy-3'],
];

/** What a sample was doing, from its stack (leaf first). */
function activityOf(stack: string[], leafName: string): string {
  const leaf = stack[0] ?? '';
  if (leaf === '(garbage collector)' || leaf === '(idle)' || leaf === '(program)') return leaf;
  // A write on a loopback TCP socket: the syscall also runs the receiver's side of the TCP stack.
  if (leaf === '(native)' && /^write/.test(leafName) && stack.includes('node:net')) return 'socket writes (syscalls)';
  if (leaf === '(native)' && /^(read|onStreamRead)/.test(leafName)) return 'socket reads (syscalls)';
  for (const [name, match] of ACTIVITIES) if (stack.some(match)) return name;
  if (stack.some((p) => p.startsWith('src/'))) return 'mcp-warden transport (src/transport, src/server)';
  if (stack.some((p) => /^node:internal\/modules|^node:internal\/bootstrap/.test(p))) return 'module loading (start-up)';
  return `node core (http server, sockets, streams, timers)`;
}

export function summarise(profile: Profile, top = 25): string {
  for (const n of profile.nodes) n.callFrame = original(n.callFrame);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totalHits = profile.nodes.reduce((s, n) => s + (n.hitCount ?? 0), 0) || 1;
  const msPerHit = (profile.endTime - profile.startTime) / 1000 / totalHits;
  const self = new Map<string, number>();
  const place = new Map<string, number>();
  for (const n of profile.nodes) {
    const hits = n.hitCount ?? 0;
    if (hits === 0) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const where = placeOf(url, functionName);
    const key = `${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + hits);
    place.set(where, (place.get(where) ?? 0) + hits);
  }
  // Inclusive hits of each frame key, counted once per sample path (recursion not double counted).
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const inclusive = new Map<string, number>();
  const activity = new Map<string, number>();
  for (const n of profile.nodes) {
    const hits = n.hitCount ?? 0;
    if (hits === 0) continue;
    const stack: string[] = [];
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      stack.push(placeOf(f.url, f.functionName));
    }
    const kind = activityOf(stack, n.callFrame.functionName);
    activity.set(kind, (activity.get(kind) ?? 0) + hits);
    const seen = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!.callFrame;
      const where = placeOf(f.url, f.functionName);
      if (!where.startsWith('src/')) continue;
      const key = `${f.functionName || '(anonymous)'}  ${where}:${f.lineNumber + 1}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + hits);
    }
  }
  const pct = (hits: number): string => `${((100 * hits) / totalHits).toFixed(1).padStart(5)}%`;
  const rows = (m: Map<string, number>, n: number): string[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, h]) => `  ${pct(h)}  ${(h * msPerHit).toFixed(0).padStart(6)} ms  ${k}`);
  return [
    `profile: ${((profile.endTime - profile.startTime) / 1e6).toFixed(2)} s, ${totalHits} samples`,
    'time by activity (a sample goes to the first activity its stack shows, leaf first for GC and idle):',
    ...rows(activity, top),
    'self time by place:',
    ...rows(place, top),
    'self time by function:',
    ...rows(self, top),
    'total (inclusive) time of src/ functions:',
    ...rows(inclusive, top),
  ].join('\n');
}

if (process.argv[1]?.endsWith('profile-summary.ts')) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top]');
  process.stdout.write(`${summarise(JSON.parse(readFileSync(file, 'utf8')) as Profile, Number(process.argv[3] ?? 25))}\n`);
}
