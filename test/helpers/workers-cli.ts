// `mcp-warden proxy --workers N` as a child process: its JSON log records as they come, a wait
// for records (bounded), its listening URL once every worker listens, and a stop that waits for
// its exit. For the tests of --workers (test/integration/workers.test.ts, test/slow/workers-legacy.test.ts),
// and, with --workers 1, of one process with its admin port (test/slow/state-health.test.ts).
import { spawn } from 'node:child_process';
import { cliArgs } from './bundle.ts';

type Rec = Record<string, unknown>;

export interface WorkersCli {
  url: URL;
  records: Rec[];
  /** Resolves with the first `count` records that match, or fails after ~10 s naming the last ones. */
  waitFor(pred: (r: Rec) => boolean, count?: number): Promise<Rec[]>;
  stop(): Promise<number | null>;
}

/** How the CLI is started: node's arguments before the command (default: the CLI's bundle), its environment. */
export interface CliLaunch {
  nodeArgs?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

/** Starts the proxy with `workers` in front of `upstream` (`extra`: more arguments); `closers` gets its stop. */
export async function startWorkersCli(
  upstream: URL,
  workers: number,
  extra: readonly string[],
  closers: Array<() => Promise<unknown>>,
  launch: CliLaunch = {},
): Promise<WorkersCli> {
  const child = spawn(
    process.execPath,
    [
      ...(launch.nodeArgs ?? (await cliArgs())),
      'proxy',
      '--upstream',
      upstream.href,
      '--listen',
      '127.0.0.1:0',
      '--workers',
      String(workers),
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: launch.env ?? process.env },
  );
  const records: Rec[] = [];
  let pending = '';
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString();
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      records.push(JSON.parse(pending.slice(0, nl)) as Rec);
      pending = pending.slice(nl + 1);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const waitFor = async (pred: (r: Rec) => boolean, count = 1): Promise<Rec[]> => {
    for (let i = 0; i < 500; i++) {
      const found = records.filter(pred);
      if (found.length >= count) return found;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`not logged: ${JSON.stringify(records.slice(-5))} ${stderr}`);
  };
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    return exited;
  };
  closers.push(stop);
  const listening = await waitFor((r) => r.msg === 'listening', workers);
  return { url: new URL(String(listening[0]!.listen)), records, waitFor, stop };
}
