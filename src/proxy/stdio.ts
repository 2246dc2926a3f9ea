// The stdio proxy: a server run as a child, its stdin/stdout relayed to a client's pair of streams
// through the engine (transport/stdio-relay.ts); its stderr becomes records of the log's
// (child-stderr.ts). The `stdio` command gives it the process's own stdin/stdout; the demo and
// tests give it streams of their own.
import type { ChildProcessByStdio } from 'node:child_process';
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import type { Logger } from 'pino';
import { DEFAULT_LIMITS, type Limits } from '../config/defaults.ts';
import { runtimeFactory } from '../config/runtime.ts';
import type { Policy } from '../config/types.ts';
import { Engine } from '../engine/engine.ts';
import { CaptureSink } from '../sinks/capture.ts';
import { recordJudged, type JudgedSinks } from '../sinks/judged.ts';
import { Metrics } from '../sinks/metrics.ts';
import type { Tracing } from '../sinks/tracing.ts';
import { StdioRelay } from '../transport/stdio-relay.ts';
import { ChildStderr } from './child-stderr.ts';
import { spawnServer, type ServerChild } from './stdio-child.ts';

export interface StdioProxyOptions {
  command: string;
  args: readonly string[];
  /** The policy in force (a PolicyStore's current()). */
  policy: () => Policy;
  logger: Logger;
  limits?: Partial<Limits>;
  /** The client's side: what it writes, and what it reads (only JSON-RPC is written there). */
  client: { input: Readable; output: Writable };
  /** The child's stderr: a record of the log's per line (default), or nowhere. */
  stderr?: 'log' | 'ignore';
  /** Under audit, the policy whose actions each violation record reports as `shadow`. */
  shadow?: Policy;
  /** OpenTelemetry export: a span per exchange (the caller shuts it down). */
  tracing?: Tracing;
  /** The server's process, already started (spawnServer); by default it is started here. */
  server?: ServerChild;
}

export interface StdioProxy {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  metrics: Metrics;
  /**
   * Resolves once the child is gone and its open requests are answered: with the exit code to exit
   * with (a shell's: 128 + signal, 127 not found, 126 not runnable) and, when it never started, why.
   */
  exited: Promise<{ code: number; startError: Error | undefined }>;
}

/** The exit code a shell gives a process a signal ended. */
const signalCode = (signal: NodeJS.Signals): number => 128 + (constants.signals[signal] ?? 0);

export function createStdioProxy(o: StdioProxyOptions): StdioProxy {
  const limits: Limits = { ...DEFAULT_LIMITS, ...o.limits };
  const { logger } = o;
  const engine = new Engine({
    limits,
    runtime: runtimeFactory((rule, err) => logger.error({ rule, err }, 'rule failed')),
    policy: o.policy,
    now: () => performance.now(),
  });
  const captures = new Map<string, CaptureSink>();
  const metrics = new Metrics({ sessions: () => engine.sessions.size, openRequests: () => engine.openRequests });
  const sinks: JudgedSinks = {
    logger,
    metrics,
    shadow: o.shadow,
    tracing: o.tracing,
    capture: (path) => {
      let sink = captures.get(path);
      if (!sink) captures.set(path, (sink = new CaptureSink(path, logger)));
      return sink;
    },
  };
  const { child, started } = o.server ?? spawnServer(o.command, o.args);
  // Ignored, it is still read (and dropped): a child must never block on a full stderr pipe.
  if (o.stderr === 'ignore') child.stderr.resume();
  const stderr = o.stderr === 'ignore' ? undefined : new ChildStderr(child.stderr, logger);
  const relay = new StdioRelay({
    engine,
    sinks,
    limits,
    logger,
    client: o.client,
    server: { input: child.stdin, output: child.stdout },
    session: `stdio:${process.pid}:${child.pid ?? 'unstarted'}`,
  });
  // Said once the process runs: a command that does not exist is never "started".
  void started.then((err) => {
    if (!err) logger.info({ command: o.command, args: o.args.length, pid: child.pid }, 'stdio server started');
  });
  const sweeper = setInterval(() => recordJudged(sinks, o.policy(), undefined, engine.tick(performance.now())), 5_000);
  sweeper.unref();

  const exited = (async () => {
    let startError: Error | undefined;
    const code = await new Promise<number>((resolve) => {
      void started.then((err) => {
        if (!err) return;
        startError = err;
        logger.error({ err, command: o.command }, 'stdio server could not be started');
        // As a shell says it: 127 not found, 126 not executable.
        resolve(err.code === 'ENOENT' ? 127 : 126);
      });
      child.once('close', (exitCode, signal) => resolve(signal ? signalCode(signal) : (exitCode ?? 1)));
    });
    const how = child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode ? `signal ${child.signalCode}` : 'not started';
    await relay.serverExited({ how, stderr: stderr?.tail() ?? [] });
    clearInterval(sweeper);
    await Promise.all([...captures.values()].map((c) => c.close()));
    logger.info({ code }, 'stdio server exited');
    return { code, startError };
  })();
  return { child, metrics, exited };
}
