// `mcp-warden stdio [options] -- COMMAND [ARGS...]`: runs a stdio MCP server as a child and stands
// between it and the client that started mcp-warden (our stdin/stdout are the client's pipe). The
// log goes to --log-file or stderr, never stdout; the child's stderr passes through to ours.
// SIGINT and SIGTERM go on to the child; mcp-warden exits with the child's exit code (128 + the
// signal's number when a signal ended it), after answering the requests it left open.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';
import { DEFAULT_LIMITS, type Limits } from '../config/defaults.ts';
import { runtimeFactory } from '../config/runtime.ts';
import { PolicyStore } from '../config/store.ts';
import { Engine } from '../engine/engine.ts';
import { REWRITABLE } from '../rewrite/rewriters.ts';
import { recordJudged } from '../sinks/judged.ts';
import { createLogger, logDestination } from '../sinks/logger.ts';
import { Metrics } from '../sinks/metrics.ts';
import { CaptureSink } from '../sinks/capture.ts';
import { StdioRelay } from '../transport/stdio-relay.ts';
import { startupPolicy } from './startup-policy.ts';

export interface StdioCommandOptions {
  policy?: string;
  logFile?: string;
  logLevel?: string;
  maxBody?: number;
  auditLimit?: number;
}

/** The exit code a shell gives a process a signal ended. */
const signalCode = (signal: NodeJS.Signals): number => 128 + (constants.signals[signal] ?? 0);

/** Runs the child behind the relay; resolves with the exit code mcp-warden should exit with. */
export async function runStdioCommand(command: string, args: readonly string[], opts: StdioCommandOptions): Promise<number> {
  const { policy, text } = await startupPolicy(opts.policy, 'stdio relay');
  const logger = createLogger({ level: opts.logLevel ?? policy.log.level ?? 'info', destination: logDestination(opts.logFile ?? 2) });
  for (const warning of policy.warnings) logger.warn({ policy: policy.source, warning }, 'policy warning');
  const store = new PolicyStore({ path: opts.policy, logger, initial: policy, initialText: text, rewritable: REWRITABLE });
  const limits: Limits = {
    ...DEFAULT_LIMITS,
    maxRequestBytes: opts.maxBody ?? policy.limits.maxRequestBytes ?? DEFAULT_LIMITS.maxRequestBytes,
    auditBodyBytes: opts.auditLimit ?? policy.limits.auditBodyBytes ?? DEFAULT_LIMITS.auditBodyBytes,
    auditEventBytes: policy.limits.auditEventBytes ?? DEFAULT_LIMITS.auditEventBytes,
  };
  const engine = new Engine({
    limits,
    runtime: runtimeFactory((rule, err) => logger.error({ rule, err }, 'rule failed')),
    policy: () => store.current(),
    now: () => performance.now(),
  });
  const captures = new Map<string, CaptureSink>();
  const sinks = {
    logger,
    metrics: new Metrics({ sessions: () => engine.sessions.size, openRequests: () => engine.openRequests }),
    capture: (path: string) => {
      let sink = captures.get(path);
      if (!sink) captures.set(path, (sink = new CaptureSink(path, logger)));
      return sink;
    },
  };

  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const relay = new StdioRelay({
    engine,
    sinks,
    limits,
    logger,
    client: { input: process.stdin, output: process.stdout },
    server: { input: child.stdin, output: child.stdout },
    session: `stdio:${process.pid}`,
  });
  logger.info({ command, args: args.length, pid: child.pid, policy: policy.source, mode: policy.mode }, 'stdio server started');
  if (opts.policy !== undefined) store.watch();
  const sweeper = setInterval(() => recordJudged(sinks, store.current(), undefined, engine.tick(performance.now())), 5_000);
  sweeper.unref();

  const forward = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'signal passed to the server');
    child.kill(signal);
  };
  const reload = () => void store.reload('signal');
  process.on('SIGINT', forward).on('SIGTERM', forward).on('SIGHUP', reload);

  const code = await new Promise<number>((resolve) => {
    child.once('error', (err: NodeJS.ErrnoException) => {
      logger.error({ err, command }, 'stdio server could not be started');
      process.stderr.write(`mcp-warden stdio: cannot start ${command}: ${err.message}\n`);
      // As a shell says it: 127 not found, 126 not executable.
      resolve(err.code === 'ENOENT' ? 127 : 126);
    });
    child.once('close', (exitCode, signal) => resolve(signal ? signalCode(signal) : (exitCode ?? 1)));
  });
  await relay.serverExited(
    child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode ? `signal ${child.signalCode}` : 'not started',
  );
  process.off('SIGINT', forward).off('SIGTERM', forward).off('SIGHUP', reload);
  clearInterval(sweeper);
  store.close();
  await Promise.all([...captures.values()].map((c) => c.close()));
  logger.info({ code }, 'stdio server exited');
  logger.flush();
  return code;
}
