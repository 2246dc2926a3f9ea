// `mcp-warden stdio [options] -- COMMAND [ARGS...]`: runs a stdio MCP server as a child and stands
// between it and the client that started mcp-warden (our stdin/stdout are the client's pipe). The
// log goes to --log-file or stderr, never stdout; the child's stderr goes into it, a record per
// line (proxy/child-stderr.ts), never through to ours as it came.
// SIGINT and SIGTERM go on to the child; SIGHUP reloads the policy; mcp-warden exits with the
// child's exit code once the requests it left open are answered.
import { createStdioProxy } from '../proxy/stdio.ts';
import type { ServerChild } from '../proxy/stdio-child.ts';
import { createLogger, logDestination } from '../sinks/logger.ts';
import { policyStore, shadowPolicy, startLimits, startupPolicy, startupTracing } from './startup-policy.ts';

export interface StdioCommandOptions {
  policy?: string;
  shadow?: string;
  otlpEndpoint?: string;
  logFile?: string;
  logLevel?: string;
  maxBody?: number;
  auditLimit?: number;
}

/** Runs the child behind the relay; resolves with the exit code mcp-warden should exit with. */
export async function runStdioCommand(
  command: string,
  args: readonly string[],
  opts: StdioCommandOptions,
  server: ServerChild,
): Promise<number> {
  const { policy, text } = await startupPolicy(opts.policy, 'stdio relay');
  const destination = logDestination(opts.logFile ?? 2);
  const tracing = await startupTracing(opts.otlpEndpoint);
  const logger = createLogger({ level: opts.logLevel ?? policy.log.level ?? 'info', destination });
  // Reloads begin once the child below is started (the watch, SIGHUP): their results go to its metrics.
  const store = policyStore({ policy, text }, opts.policy, logger, (ok) => proxy.metrics.reloaded(ok));
  logger.info({ policy: policy.source, mode: policy.mode }, 'policy in force');
  const proxy = createStdioProxy({
    command,
    args,
    policy: () => store.current(),
    logger,
    limits: startLimits(policy, opts),
    client: { input: process.stdin, output: process.stdout },
    shadow: await shadowPolicy(opts.shadow),
    tracing,
    server,
  });
  if (opts.policy !== undefined) store.watch();
  const forward = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'signal passed to the server');
    proxy.child.kill(signal);
  };
  const reload = () => void store.reload('signal');
  process.on('SIGINT', forward).on('SIGTERM', forward).on('SIGHUP', reload);
  const { code, startError } = await proxy.exited;
  await tracing?.shutdown();
  if (startError) process.stderr.write(`mcp-warden stdio: cannot start ${command}: ${startError.message}\n`);
  process.off('SIGINT', forward).off('SIGTERM', forward).off('SIGHUP', reload);
  store.close();
  // The caller exits at once: what is batched is written now.
  destination.flushSync();
  return code;
}
