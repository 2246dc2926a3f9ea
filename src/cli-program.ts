// The mcp-warden command line: `proxy` runs the proxy, `check` audits a server from outside, `rules`
// lists the rules (`rules RULE`, alias `explain`, explains one), `policy` checks a policy file, `replay` runs a capture through a policy offline,
// `report` turns logs and captures into an HTML report,
// `demo` shows it all on a built-in broken server.
// Built by a function so tests (and the README check) can read it without running it. Only the
// option parsers load with it: each command imports its code when it runs, so --version and
// --help answer without loading the proxy.
import { Command, Option } from 'commander';
import { createRequire } from 'node:module';
import { INPUT_BOUNDS } from './config/defaults.ts';
import {
  parseCount,
  parseDuration,
  parseList,
  parseListen,
  parsePeerAddress,
  parseSize,
  parseUrl,
  parseWorkers,
} from './config/cli-options.ts';
import { registerCheckCommand } from './commands/check.ts';
import type { ProxyCommandOptions } from './commands/proxy.ts';
import type { StdioCommandOptions } from './commands/stdio.ts';
import { TRANSPORT_MODES } from './mcp/transport-modes.ts';
import { hideUserinfo, parseState } from './state/state-url.ts';

const { version } = createRequire(import.meta.url)('../package.json') as { version: string };

/** `--max-lines` and `--max-ratio` of report and replay: the bounds of what one input may cost. */
interface InputLimitFlags {
  maxLines?: number;
  maxRatio?: number;
}
const maxLinesOption = () =>
  new Option('--max-lines <n>', `stop reading an input past this many lines (default: ${INPUT_BOUNDS.lines})`).argParser(parseCount);
const maxRatioOption = () =>
  new Option(
    '--max-ratio <n>',
    `stop reading a gzip input that decodes to more than this many times its size, past its first ${INPUT_BOUNDS.ratioFloorBytes / 1024 / 1024} MiB (default: ${INPUT_BOUNDS.ratio})`,
  ).argParser(parseCount);
const inputLimits = (o: InputLimitFlags) => ({
  ...(o.maxLines !== undefined ? { lines: o.maxLines } : {}),
  ...(o.maxRatio !== undefined ? { ratio: o.maxRatio } : {}),
});

export function buildProgram(): Command {
  const program = new Command('mcp-warden')
    .description("A reverse proxy that audits MCP servers for the protocol's error rules")
    .version(version)
    // Options after a subcommand are its own (`stdio -- node server.js --port 1` keeps --port for the server).
    .enablePositionalOptions()
    // An error quotes the value it refused: a password in a URL (--state, --upstream) is not printed.
    .configureOutput({ outputError: (text, write) => write(hideUserinfo(text)) });

  // Every proxy option can also come from the environment (12-factor), through the same parser.
  const opt = (flags: string, description: string, env: string, parse?: (value: string) => unknown) => {
    const option = new Option(flags, description).env(env);
    return parse ? option.argParser(parse) : option;
  };
  program
    .command('proxy')
    .description('run the proxy in front of an MCP server')
    .addOption(
      opt(
        '-u, --upstream <url>',
        "the MCP server's endpoint URL, e.g. http://127.0.0.1:3000/mcp (or upstream.url in the policy); JSON-RPC on any other path of the server is judged too, so a URL without a path covers the whole server",
        'MCP_WARDEN_UPSTREAM',
        parseUrl,
      ),
    )
    .addOption(
      opt('-l, --listen <host:port>', 'address to listen on', 'MCP_WARDEN_LISTEN', parseListen).default(
        { host: '127.0.0.1', port: 8787 },
        '127.0.0.1:8787',
      ),
    )
    .addOption(opt('--path <path>', "path of the MCP endpoint on the proxy (default: the upstream URL's path)", 'MCP_WARDEN_PATH'))
    .addOption(
      opt(
        '--public-url <url>',
        'URL clients use to reach the proxy, for OAuth metadata (default: what each client used)',
        'MCP_WARDEN_PUBLIC_URL',
        parseUrl,
      ),
    )
    .addOption(
      opt(
        '-p, --policy <file>',
        'policy file (YAML): mode, rule actions, settings (default: audit mode, every rule logged)',
        'MCP_WARDEN_POLICY',
      ),
    )
    .addOption(
      opt(
        '--admin <host:port>',
        "serve /healthz, /readyz, /metrics, and the last hour's /report (HTML) and /report.json on this address (default: off)",
        'MCP_WARDEN_ADMIN',
        parseListen,
      ),
    )
    .addOption(
      opt('--timeout <duration>', 'time the upstream has to send response headers (default: 60s)', 'MCP_WARDEN_TIMEOUT', parseDuration),
    )
    .addOption(
      opt(
        '--idle-timeout <duration>',
        'longest silence inside an upstream response body, 0 for none (default: 5m)',
        'MCP_WARDEN_IDLE_TIMEOUT',
        parseDuration,
      ),
    )
    .addOption(opt('--max-body <size>', 'largest request body accepted from a client (default: 4mib)', 'MCP_WARDEN_MAX_BODY', parseSize))
    .addOption(
      opt(
        '--audit-limit <size>',
        'largest response body parsed; larger ones stream through unaudited (default: 4mib)',
        'MCP_WARDEN_AUDIT_LIMIT',
        parseSize,
      ),
    )
    .addOption(
      opt(
        '--shutdown-timeout <duration>',
        'on SIGTERM, how long in-flight exchanges may take to finish (default: 10s)',
        'MCP_WARDEN_SHUTDOWN_TIMEOUT',
        parseDuration,
      ),
    )
    .addOption(
      opt(
        '--drain-delay <duration>',
        'on SIGTERM, how long /readyz answers 503 while new connections are still served, before the shutdown begins: the time a balancer takes to stop sending (default: 0)',
        'MCP_WARDEN_DRAIN_DELAY',
        parseDuration,
      ),
    )
    .addOption(
      opt(
        '--ready-needs-upstream',
        'make /readyz also require the upstream to accept connections (by default it says only whether this process can serve; /upstreamz and mcp_warden_upstream_up report the upstream)',
        'MCP_WARDEN_READY_NEEDS_UPSTREAM',
      ),
    )
    .addOption(
      opt(
        '--allowed-hosts <list>',
        'Host values clients may send, comma-separated, * for any (default: loopback names when listening on loopback, else any)',
        'MCP_WARDEN_ALLOWED_HOSTS',
        parseList,
      ),
    )
    .addOption(
      opt(
        '--allowed-origins <list>',
        'Origin values clients may send, comma-separated, * for any; no Origin is always allowed (default: loopback origins when listening on loopback, else any)',
        'MCP_WARDEN_ALLOWED_ORIGINS',
        parseList,
      ),
    )
    .addOption(
      opt(
        '--host-header <whose>',
        "Host sent upstream: the client's as it came, or the upstream URL's (virtual-hosted upstreams) (default: client)",
        'MCP_WARDEN_HOST_HEADER',
      ).choices(['client', 'upstream']),
    )
    .addOption(
      opt(
        '--shadow <file>',
        'under audit, the policy each violation record says the action of (`shadow`): what enforcing it would do (default: config/enforce.yaml)',
        'MCP_WARDEN_SHADOW',
      ),
    )
    .addOption(
      opt(
        '--otlp-endpoint <url>',
        'export a trace span per exchange over OTLP/HTTP to this URL, e.g. http://127.0.0.1:4318/v1/traces (also the OTEL_EXPORTER_OTLP_* variables; default: off)',
        'MCP_WARDEN_OTLP_ENDPOINT',
      ),
    )
    .addOption(
      opt(
        '--transport <mode>',
        'the MCP transport the upstream speaks: auto (learned per stream), sse (legacy HTTP+SSE, 2024-11-05) or streamable-http (default: auto)',
        'MCP_WARDEN_TRANSPORT',
      ).choices(TRANSPORT_MODES),
    )
    .addOption(
      opt(
        '--max-connections <n>',
        'client connections open at once; more get 503 (default: 4096)',
        'MCP_WARDEN_MAX_CONNECTIONS',
        parseCount,
      ),
    )
    .addOption(
      opt(
        '--header-timeout <duration>',
        'time a client has to send a request head, also after connecting (default: 10s)',
        'MCP_WARDEN_HEADER_TIMEOUT',
        parseDuration,
      ),
    )
    .addOption(
      opt('--log-level <level>', 'log level (default: info)', 'MCP_WARDEN_LOG_LEVEL').choices(['trace', 'debug', 'info', 'warn', 'error']),
    )
    .addOption(
      opt(
        '--pretty',
        'one line per record for a person: each exchange as method, tool, status, outcome, findings, time (default when stdout is a terminal; colours only there)',
        'MCP_WARDEN_PRETTY',
      ),
    )
    .addOption(opt('--no-pretty', 'JSON lines even on a terminal', 'MCP_WARDEN_NO_PRETTY'))
    .addOption(
      opt(
        '--workers <n>',
        'processes serving the port, sharing what they learn of each session; auto: one per core (default: 1)',
        'MCP_WARDEN_WORKERS',
        parseWorkers,
      ),
    )
    .addOption(
      opt(
        '--state <location>',
        'where session state lives: memory (this process; with --workers, shared through the primary) or redis://[:PASSWORD@]HOST:PORT[/DB] (rediss:// for TLS), shared by every replica naming it (default: memory)',
        'MCP_WARDEN_STATE',
        parseState,
      ),
    )
    .addOption(
      opt(
        '--state-timeout <duration>',
        'the longest an exchange waits for the state store before it is judged with what this replica knows (default: 50ms)',
        'MCP_WARDEN_STATE_TIMEOUT',
        parseDuration,
      ),
    )
    .addOption(
      opt(
        '--state-required',
        'with --state redis://: /readyz answers 503 while the state store is away (by default the proxy keeps serving, each replica judging with what it knows, and says so every minute)',
        'MCP_WARDEN_STATE_REQUIRED',
      ),
    )
    .addOption(
      opt(
        '--state-max-read <size>',
        "the most one read of the state store may bring (a session's keys, a legacy stream's); past it the read is refused, counted and not made again (default: 16mib)",
        'MCP_WARDEN_STATE_MAX_READ',
        parseSize,
      ),
    )
    .addOption(
      opt(
        '--peer-address <host:port>',
        "with --state redis://: where this replica takes the legacy SSE POSTs the others forward to it (the address they reach it at, e.g. the pod's IP); a POST that lands on a replica not holding its session's stream then goes to the one that does, so legacy SSE needs no affinity (default: off)",
        'MCP_WARDEN_PEER_ADDRESS',
        parsePeerAddress,
      ),
    )
    // Each command loads what it needs when it runs: --version and --help load none of it.
    .action(async (opts: ProxyCommandOptions) => (await import('./commands/proxy.ts')).runProxyCommand(opts));

  program
    .command('stdio')
    .description('run a stdio MCP server as a child and judge its traffic: mcp-warden stdio [options] -- COMMAND [ARGS...]')
    .argument('<command>', 'the server command (put -- before it)')
    .argument('[args...]', "the server command's arguments")
    .addOption(opt('-p, --policy <file>', 'policy file (YAML) (default: audit mode, every rule logged)', 'MCP_WARDEN_POLICY'))
    .addOption(
      opt(
        '--shadow <file>',
        'under audit, the policy each violation record says the action of (default: config/enforce.yaml)',
        'MCP_WARDEN_SHADOW',
      ),
    )
    .addOption(
      opt(
        '--otlp-endpoint <url>',
        'export a trace span per exchange over OTLP/HTTP to this URL (default: off)',
        'MCP_WARDEN_OTLP_ENDPOINT',
      ),
    )
    .addOption(opt('--log-file <file>', 'write the log here (default: stderr; stdout carries only JSON-RPC)', 'MCP_WARDEN_LOG_FILE'))
    .addOption(
      opt('--log-level <level>', 'log level (default: info)', 'MCP_WARDEN_LOG_LEVEL').choices(['trace', 'debug', 'info', 'warn', 'error']),
    )
    .addOption(
      opt(
        '--max-body <size>',
        'longest line read from the client (default: 4mib); longer ones pass unread',
        'MCP_WARDEN_MAX_BODY',
        parseSize,
      ),
    )
    .addOption(
      opt(
        '--audit-limit <size>',
        'longest line read from the server (default: 4mib); longer ones pass unread',
        'MCP_WARDEN_AUDIT_LIMIT',
        parseSize,
      ),
    )
    // Everything after the command is the command's own.
    .passThroughOptions()
    .action(async (command: string, args: string[], opts: StdioCommandOptions) => {
      // The server starts first: its start-up overlaps with loading the relay (see stdio-child.ts).
      const { spawnServer } = await import('./proxy/stdio-child.ts');
      const server = spawnServer(command, args);
      const { runStdioCommand } = await import('./commands/stdio.ts');
      const code = await runStdioCommand(command, args, opts, server);
      // Our stdin (the client's pipe) may still be open: the relay is over once the child is.
      process.exit(code);
    });

  registerCheckCommand(program);

  program
    .command('rules')
    .alias('explain')
    .argument('[rule]', "one rule's explanation: what is wrong, why, a bad and a good exchange, the fix")
    .description('list every rule (id, severity, the protocol versions it judges, its group, what it flags), or explain one')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'markdown', 'json']).default('text'))
    .option('--all', "every rule's explanation instead of the table (--format markdown: docs/rules.md's sections)")
    .action(async (name: string | undefined, opts: { format: 'text' | 'markdown' | 'json'; all?: boolean }) => {
      const { RULES } = await import('./rules/index.ts');
      const { renderRules } = await import('./rules/rules-command.ts');
      const out = renderRules(RULES, name, opts);
      if (out.ok) process.stdout.write(`${out.text}\n`);
      else {
        process.stderr.write(`${out.error}\n`);
        process.exitCode = 1;
      }
    });

  const policy = program.command('policy').description("check a policy file, or print the policy file's JSON Schema");

  policy
    .command('check <file>')
    .description('validate a policy file: print "ok" and its warnings, or every error as file:line:column (exit 1)')
    .action(async (file: string) => {
      const { formatPolicyError, loadPolicyFile } = await import('./config/load.ts');
      const { REWRITABLE } = await import('./rewrite/rewriters.ts');
      const result = await loadPolicyFile(file, { rewritable: REWRITABLE });
      if (!result.ok) {
        for (const e of result.errors) process.stderr.write(`${formatPolicyError(e)}\n`);
        const n = result.errors.length;
        process.stderr.write(`${file}: ${n} ${n === 1 ? 'error' : 'errors'}\n`);
        process.exitCode = 1;
        return;
      }
      const { captureProblem } = await import('./sinks/capture-path.ts');
      const problem = await captureProblem(result.policy);
      if (problem) {
        process.stderr.write(`${file}: ${problem}\n`);
        process.exitCode = 1;
        return;
      }
      const settings = Object.keys(result.document.rules ?? {}).length;
      process.stdout.write(`ok: ${file}: mode ${result.policy.mode}, ${settings} rule ${settings === 1 ? 'setting' : 'settings'}\n`);
      for (const w of result.policy.warnings) process.stdout.write(`warning: ${w}\n`);
    });

  policy
    .command('schema')
    .description('print the policy JSON Schema (what config/policy.schema.json holds)')
    .action(async () => {
      const { RULES } = await import('./rules/index.ts');
      const { policySchemaJson } = await import('./config/schema.ts');
      process.stdout.write(policySchemaJson(RULES));
    });

  program
    .command('replay <capture>')
    .description("replay a capture (the policy's capture: { path }) through a policy offline: what it would flag, rewrite and block")
    .option(
      '-p, --policy <file>',
      'policy file (YAML) to replay under, judged as enforce mode (default: built-in defaults, every rule logged)',
    )
    .addOption(
      new Option('--format <format>', 'output format: a table and a summary line, or the report as JSON')
        .choices(['text', 'json'])
        .default('text'),
    )
    .addOption(maxLinesOption())
    .addOption(maxRatioOption())
    .action(async (capture: string, opts: { policy?: string; format: 'text' | 'json' } & InputLimitFlags) => {
      const { runReplayCommand } = await import('./commands/replay.ts');
      process.exitCode = await runReplayCommand(capture, { ...opts, limits: inputLimits(opts) });
    });

  program
    .command('report')
    .argument('[files...]', 'exchange logs and captures, plain or gzip; - (or a pipe, when none is named) for stdin')
    .description(
      'read exchange logs and captures into one self-contained HTML report: findings by rule, tool, session and client, over time, and what a policy would change',
    )
    .option('-o, --output <file>', 'where to write the report, - for stdout (default: report.html; stdout for --format json)')
    .option(
      '-p, --policy <file>',
      'the policy captures are replayed under, for what it would change (default: the shipped config/enforce.yaml)',
    )
    .addOption(
      new Option('--format <format>', "the page, or its data as JSON (the admin port's /report.json)")
        .choices(['html', 'json'])
        .default('html'),
    )
    .option('--title <text>', "the page's title", 'mcp-warden report')
    .option('--no-progress', 'no progress lines on stderr for large inputs')
    .addOption(maxLinesOption())
    .addOption(maxRatioOption())
    .action(
      async (
        files: string[],
        opts: { output?: string; policy?: string; format: 'html' | 'json'; progress: boolean; title: string } & InputLimitFlags,
      ) => {
        const { runReportCommand } = await import('./commands/report.ts');
        process.exitCode = await runReportCommand(files, { ...opts, limits: inputLimits(opts) });
      },
    );

  program
    .command('demo')
    .description('run a built-in, deliberately broken MCP server behind the proxy and show what the proxy sees')
    .action(async () => {
      const { runDemo } = await import('./demo/run.ts');
      process.exitCode = await runDemo(process.stdout);
    });

  return program;
}
