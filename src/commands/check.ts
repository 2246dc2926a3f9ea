// `mcp-warden check URL`: audits a live MCP server from outside, the way an agent meets it, and
// prints a report (table, json, sarif, junit, markdown). Exit 0: no error-severity finding; 1: at
// least one; 2: the server could not be reached, needs credentials, or the URL is no MCP endpoint.
import { createRequire } from 'node:module';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { CHECK_DEFAULTS, CHECK_FORMATS } from '../check/defaults.ts';
import { parseDuration, parseSize, parseUrl } from '../config/cli-options.ts';
import { formatDuration, formatSize } from '../config/words.ts';
import type { CheckCommandOptions, CheckIo } from './check-run.ts';
import { VERSIONS } from '../mcp/versions.ts';
import { TRANSPORT_MODES } from '../mcp/transport-modes.ts';

const { version: packageVersion } = createRequire(import.meta.url)('../../package.json') as { version: string };

const processIo: CheckIo = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  exit: (code) => {
    process.exitCode = code;
  },
  get isTTY() {
    return process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
  },
  get columns() {
    return terminalColumns(process.env.COLUMNS, process.stdout.isTTY === true ? process.stdout.columns : undefined);
  },
};

/** The width to fit text to: `COLUMNS` when it is a number (a user's or a CI's choice), else the terminal's; undefined for a pipe or a file. */
export function terminalColumns(env: string | undefined, tty: number | undefined): number | undefined {
  const given = env !== undefined && /^\d{1,4}$/.test(env.trim()) ? Number(env) : undefined;
  const columns = given !== undefined && given > 0 ? given : tty;
  return columns !== undefined && columns > 0 ? columns : undefined;
}

/** `Name: value` from --header, collected into one object (a repeated name: the last wins). */
export function collectHeader(value: string, previous: Record<string, string>): Record<string, string> {
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*?)\s*$/.exec(value);
  if (!m || /[\r\n]/.test(value))
    throw new InvalidArgumentError(`expected "Name: value" such as "Authorization: Bearer TOKEN", got "${value.replace(/:.*/, ': ...')}"`);
  return { ...previous, [m[1]!.toLowerCase()]: m[2]! };
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function registerCheckCommand(program: Command, io: CheckIo = processIo): Command {
  return (
    program
      .command('check')
      .description(
        "audit a live MCP server from outside: send a fixed set of probes, judge each answer with the proxy's rules, print a report (exit 0 ok, 1 an error-severity finding, 2 unreachable, needs credentials, or no MCP endpoint at the URL)",
      )
      .argument(
        '[target...]',
        'the MCP endpoint, e.g. http://127.0.0.1:3000/mcp (only this URL is contacted; redirects are not followed); with --stdio, the server command and its arguments, after --',
      )
      .option('--stdio', 'run the server as a child and speak stdio to it: check --stdio -- COMMAND [ARGS...]')
      .addOption(
        new Option(
          '--transport <mode>',
          'how to speak to a URL: streamable-http, sse (the legacy HTTP+SSE transport), or auto (sse when the path ends in /sse)',
        )
          .choices(TRANSPORT_MODES)
          .default('auto'),
      )
      .addOption(
        new Option(
          '--protocol <version>',
          'protocol version to check: auto tries 2026-07-28 (server/discover), then the legacy initialize handshake',
        )
          .choices(['auto', ...VERSIONS.map((v) => v.version)])
          .default(CHECK_DEFAULTS.protocol),
      )
      .addOption(new Option('-f, --format <format>', 'report format').choices(CHECK_FORMATS).default('table'))
      .option('-H, --header <header>', 'a header sent with every probe, e.g. "Authorization: Bearer TOKEN" (repeatable)', collectHeader, {})
      .option('--safe-tool <name>', 'a tool the argument probes may call (repeatable); then no other tool is called', collect, [])
      .option('--no-tool-calls', 'send no tools/call at all')
      // Defaults shown as a user writes them (60s, 1mib), not in ms and bytes.
      .addOption(
        new Option('--timeout <duration>', 'longest the whole check may take')
          .argParser(parseDuration)
          .default(CHECK_DEFAULTS.timeoutMs, formatDuration(CHECK_DEFAULTS.timeoutMs)),
      )
      .addOption(
        new Option('--probe-timeout <duration>', 'longest one probe may take (then its verdict is timeout)')
          .argParser(parseDuration)
          .default(CHECK_DEFAULTS.probeTimeoutMs, formatDuration(CHECK_DEFAULTS.probeTimeoutMs)),
      )
      .addOption(
        new Option('--max-bytes <size>', 'bytes read of one answer')
          .argParser(parseSize)
          .default(CHECK_DEFAULTS.maxBytes, formatSize(CHECK_DEFAULTS.maxBytes)),
      )
      .option(
        '--sarif-artifact <path>',
        "with -f sarif: the file in your repository every result is placed on (e.g. src/server.ts), which code scanning needs; default the server's URL",
      )
      .option('-o, --output <file>', 'write the report to a file (the summary line still goes to stderr)')
      .option('--baseline <file>', 'findings accepted in this file fail nothing: exit 1 only on new ones (write it with --update-baseline)')
      .option(
        '--update-baseline',
        "write this run's findings to the --baseline file, and exit 0 (2 when the run did not get past its first requests)",
      )
      .option('--color', 'colours in the table (default: on a terminal, unless NO_COLOR is set)')
      .option('--no-color', 'no colours')
      .action(async (target: string[], opts: CheckCommandOptions, command: Command) => {
        if (opts.stdio ? target.length === 0 : target.length !== 1)
          command.error(opts.stdio ? 'error: --stdio needs the server command: check --stdio -- COMMAND [ARGS...]' : 'error: give one URL');
        const url = opts.stdio ? { command: target[0]!, args: target.slice(1) } : parseUrl(target[0]!);
        if (opts.updateBaseline && opts.baseline === undefined) command.error('error: --update-baseline needs --baseline FILE');
        // The probes, rules and reports load only when a check runs (--help and --version stay quick).
        const { runCheckCommand } = await import('./check-run.ts');
        await runCheckCommand(url, opts, io, packageVersion);
      })
  );
}
