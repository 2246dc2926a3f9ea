// The benchmark's child processes: started with IPC, tracked by PID, always stopped by PID (on
// success, on failure, on Ctrl-C, at exit), and read for memory through /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { accepts } from '../helpers/net.ts';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildChildren } from './build.ts';

const live = new Set<ChildProcess>();
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let scripts: Record<string, string> = {};

/** Where each child's compiled script is (build.ts); a child not named here runs under tsx. */
export function setChildScripts(paths: Record<string, string>): void {
  scripts = { ...paths };
}

/** The node arguments that run `source` (a path from the repository root): its bundle if built, else the source under tsx. */
export function childEntry(name: string, source: string): string[] {
  const script = scripts[name];
  return script ? [script] : ['--import', 'tsx', `${ROOT}${source}`];
}

export interface Child {
  proc: ChildProcess;
  pid: number;
  /** Resolves with the next IPC message of that type (rejects after `ms`). */
  next<T>(type: string, ms?: number): Promise<T>;
  stop(): Promise<void>;
}

/** Extra node flags for proxy children (BENCH_CPU_PROF=<dir> adds --cpu-prof there). */
export function profileFlags(): string[] {
  const dir = process.env.BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** Starts child `name` (its compiled script, else test/bench/<name>.ts under tsx) with IPC; resolves once it sent {type:'ready'}. */
export async function startChild<T>(name: string, args: string[], nodeFlags: string[] = []): Promise<{ child: Child; ready: T }> {
  const proc = spawn(process.execPath, [...nodeFlags, ...childEntry(name, `test/bench/${name}.ts`), ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    cwd: ROOT,
  });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  const child = wrap(proc);
  try {
    const ready = await child.next<T>('ready', 30_000);
    return { child, ready };
  } catch (err) {
    await child.stop();
    throw err;
  }
}

/**
 * Starts a process whose stdin and stdout are the benchmark's to drive (a stdio MCP server, or
 * mcp-warden stdio in front of one), its stderr passed through, tracked like the others.
 */
export function startPipedProcess(command: string, args: string[]): Child {
  const proc = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'], cwd: ROOT });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  return wrap(proc);
}

/** Starts a process without IPC (nginx, mcp-proxy), its stdout discarded, tracked like the others. */
export function startPlainProcess(command: string, args: string[], opts: { cwd?: string } = {}): Child {
  const proc = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'], ...(opts.cwd ? { cwd: opts.cwd } : {}) });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  return wrap(proc);
}

function wrap(proc: ChildProcess): Child {
  return {
    proc,
    pid: proc.pid ?? -1,
    next<T>(type: string, ms = 10_000): Promise<T> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error(`no '${type}' message from pid ${proc.pid} within ${ms} ms`)), ms);
        const onMessage = (msg: { type?: string }): void => {
          if (msg?.type === type) finish(undefined, msg as T);
        };
        const onExit = (code: number | null): void => finish(new Error(`pid ${proc.pid} exited (${code}) before '${type}'`));
        const finish = (err: Error | undefined, value?: T): void => {
          clearTimeout(timer);
          proc.off('message', onMessage).off('exit', onExit);
          if (err) reject(err);
          else resolve(value as T);
        };
        proc.on('message', onMessage).once('exit', onExit);
      });
    },
    stop: () => stopProcess(proc),
  };
}

/** SIGTERM by PID, SIGKILL after 3 s; resolves once it has exited. */
export function stopProcess(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      try {
        process.kill(proc.pid!, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, 3000);
    proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      process.kill(proc.pid!, 'SIGTERM');
    } catch {
      clearTimeout(kill);
      resolve();
    }
  });
}

/**
 * Stops `child` by its PID and then whatever it had started (a relay's stdio server): each
 * descendant seen before the stop that is still there after it (same PID, same command line, so
 * not a reused PID) gets SIGTERM, SIGKILL after 3 s. Resolves once all are gone.
 */
export async function stopTree(child: Child): Promise<void> {
  const kids = descendantPids(child.pid).map((pid) => ({ pid, cmdline: cmdlineOf(pid) }));
  await child.stop();
  const alive = (k: { pid: number; cmdline: string | undefined }): boolean => k.cmdline !== undefined && cmdlineOf(k.pid) === k.cmdline;
  let left = kids.filter(alive);
  for (const k of left) signal(k.pid, 'SIGTERM');
  const deadline = performance.now() + 3000;
  while (left.length > 0 && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    left = left.filter(alive);
  }
  for (const k of left) signal(k.pid, 'SIGKILL');
}

function cmdlineOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8') || undefined;
  } catch {
    return undefined;
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

/** Stops every child still running (the finally of a run). */
export async function stopAll(): Promise<void> {
  await Promise.all([...live].map(stopProcess));
}

let hooked = false;
/** At exit (even a crash) SIGKILL every child still alive; SIGINT/SIGTERM stop them first. */
export function hookExit(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', () => {
    for (const proc of live)
      if (proc.pid !== undefined)
        try {
          process.kill(proc.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stopAll().finally(() => process.exit(130)));
  }
}

/** A field of /proc/<pid>/status in bytes (VmRSS, VmHWM), or undefined if the process is gone. */
export function procStatusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resets a process's peak RSS (VmHWM) to its current RSS; false where the kernel does not allow it. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The PIDs of a process's direct children (nginx's workers). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The PIDs of a process's descendants, children first (a relay's server and whatever that started). */
export function descendantPids(pid: number): number[] {
  const out: number[] = [];
  for (const child of childPids(pid)) out.push(child, ...descendantPids(child));
  return out;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`; rejects if `child` exits first or after `ms`. */
export async function waitForPort(child: Child, port: number, ms = 20_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (performance.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null)
      throw new Error(`pid ${child.pid} exited (${child.proc.exitCode ?? child.proc.signalCode}) before it listened on port ${port}`);
    if (await accepts(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`pid ${child.pid}: nothing listens on 127.0.0.1:${port} after ${ms} ms`);
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU time (user + system, ms) a process has used, or 0 if it is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** CPU time (ms) every process on the machine has used: all cores' busy time from /proc/stat. */
export function machineBusyMs(): number {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal: busy is all but idle and iowait
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = ticks;
  return (user + nice + system + irq + softirq + steal) * TICK_MS;
}

/** Builds the children, starts the upstream child, runs `work` against its fast endpoint, and stops every child, whatever happens. */
export async function withFastUpstream(work: (fast: URL) => Promise<void>): Promise<void> {
  hookExit();
  try {
    setChildScripts(await buildChildren());
    const { ready } = await startChild<{ urls: { fast: string } }>('upstream', []);
    await work(new URL(ready.urls.fast));
  } finally {
    await stopAll();
  }
}

/** Ends a bench script: exit with `process.exitCode` (0 unless set) when `done` resolves, 1 with the error when it rejects. */
export function exitWhenDone(done: Promise<void>): void {
  done.then(
    () => process.exit(process.exitCode ?? 0),
    async (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      await stopAll();
      process.exit(1);
    },
  );
}
