// `mcp-warden check URL`: audits a live MCP server from outside, the way an agent meets it, and
// prints a report (table, json, sarif, junit, markdown). Exit 0: no error-severity finding; 1: at
// least one; 2: the server could not be reached or needs credentials.
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { applyBaseline, baselineOf, readBaseline, writeBaseline } from '../check/baseline.ts';
import { CHECK_DEFAULTS, runCheck } from '../check/run.ts';
import { renderJson } from '../check/report-json.ts';
import { renderJunit } from '../check/report-junit.ts';
import { renderMarkdown } from '../check/report-markdown.ts';
import { renderSarif } from '../check/report-sarif.ts';
import { renderTable } from '../check/report-table.ts';
import { summaryLine, type CheckReport } from '../check/report.ts';
import { scrub, secretsOf } from '../check/scrub.ts';
import { parseDuration, parseSize, parseUrl } from '../config/cli-options.ts';
import { VERSIONS } from '../mcp/versions.ts';
import { TRANSPORT_MODES } from '../transport/legacy-sse.ts';

const { version: packageVersion } = createRequire(import.meta.url)('../../package.json') as { version: string };

export const CHECK_FORMATS = ['table', 'json', 'sarif', 'junit', 'markdown'] as const;
export type CheckFormat = (typeof CHECK_FORMATS)[number];

/** Where the command writes, and how it ends; the process by default, a test's buffers otherwise. */
export interface CheckIo {
  stdout(text: string): void;
  stderr(text: string): void;
  exit(code: 0 | 1 | 2): void;
  /** Whether stdout is a terminal (colours by default). */
  isTTY: boolean;
}

const processIo: CheckIo = {
  stdout: (t) => void process.stdout.write(t),
  stderr: (t) => void process.stderr.write(t),
  exit: (code) => {
    process.exitCode = code;
  },
  get isTTY() {
    return process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
  },
};

interface CheckCommandOptions {
  baseline?: string;
  updateBaseline?: boolean;
  stdio?: boolean;
  transport: 'auto' | 'sse' | 'streamable-http';
  protocol: string;
  format: CheckFormat;
  header: Record<string, string>;
  safeTool: string[];
  toolCalls: boolean;
  timeout: number;
  probeTimeout: number;
  maxBytes: number;
  output?: string;
  color?: boolean;
}

/** `Name: value` from --header, collected into one object (a repeated name: the last wins). */
export function collectHeader(value: string, previous: Record<string, string>): Record<string, string> {
  const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*?)\s*$/.exec(value);
  if (!m || /[\r\n]/.test(value))
    throw new InvalidArgumentError(`expected "Name: value" such as "Authorization: Bearer TOKEN", got "${value.replace(/:.*/, ': ...')}"`);
  return { ...previous, [m[1]!.toLowerCase()]: m[2]! };
}

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function render(report: CheckReport, format: CheckFormat, color: boolean): string {
  switch (format) {
    case 'json':
      return renderJson(report);
    case 'sarif':
      return renderSarif(report);
    case 'junit':
      return renderJunit(report);
    case 'markdown':
      return renderMarkdown(report);
    default:
      return renderTable(report, { color });
  }
}

/** The report with --baseline applied; with --update-baseline, the baseline written first (from a run that reached the server). */
async function withBaseline(report: CheckReport, opts: CheckCommandOptions, io: CheckIo): Promise<CheckReport> {
  if (opts.baseline === undefined) return report;
  if (opts.updateBaseline && report.reach.status === 'ok') {
    const written = baselineOf(report, new Date());
    await writeBaseline(opts.baseline, written);
    io.stderr(`baseline written: ${written.findings.length} findings to ${opts.baseline}\n`);
    return applyBaseline(report, written, opts.baseline);
  }
  if (opts.updateBaseline) return report;
  return applyBaseline(report, await readBaseline(opts.baseline), opts.baseline);
}

export function registerCheckCommand(program: Command, io: CheckIo = processIo): Command {
  return program
    .command('check')
    .description(
      "audit a live MCP server from outside: send a fixed set of probes, judge each answer with the proxy's rules, print a report (exit 0 ok, 1 an error-severity finding, 2 unreachable or needs credentials)",
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
    .option('--timeout <duration>', 'longest the whole check may take', parseDuration, CHECK_DEFAULTS.timeoutMs)
    .option(
      '--probe-timeout <duration>',
      'longest one probe may take (then its verdict is timeout)',
      parseDuration,
      CHECK_DEFAULTS.probeTimeoutMs,
    )
    .option('--max-bytes <size>', 'bytes read of one answer', parseSize, CHECK_DEFAULTS.maxBytes)
    .option('-o, --output <file>', 'write the report to a file (the summary line still goes to stderr)')
    .option('--baseline <file>', 'findings accepted in this file fail nothing: exit 1 only on new ones (write it with --update-baseline)')
    .option('--update-baseline', "write this run's findings to the --baseline file, and exit 0 (2 when unreachable)")
    .option('--color', 'colours in the table (default: on a terminal, unless NO_COLOR is set)')
    .option('--no-color', 'no colours')
    .action(async (target: string[], opts: CheckCommandOptions, command: Command) => {
      if (opts.stdio ? target.length === 0 : target.length !== 1)
        command.error(opts.stdio ? 'error: --stdio needs the server command: check --stdio -- COMMAND [ARGS...]' : 'error: give one URL');
      const url = opts.stdio ? { command: target[0]!, args: target.slice(1) } : parseUrl(target[0]!);
      if (opts.updateBaseline && opts.baseline === undefined) command.error('error: --update-baseline needs --baseline FILE');
      const ran = await runCheck({
        url,
        transport: opts.transport,
        protocol: opts.protocol,
        headers: opts.header,
        safeTools: opts.safeTool,
        toolCalls: opts.toolCalls,
        timeoutMs: opts.timeout,
        probeTimeoutMs: opts.probeTimeout,
        connectTimeoutMs: Math.min(CHECK_DEFAULTS.connectTimeoutMs, opts.probeTimeout),
        maxBytes: opts.maxBytes,
        clientVersion: packageVersion,
      });
      // The user's credentials never reach the output or the baseline; a terminal never gets a peer's controls.
      const shown = scrub(ran, secretsOf(opts.header), opts.format === 'table' || opts.format === 'markdown');
      const report = await withBaseline(shown, opts, io);
      const text = render(report, opts.format, opts.color ?? (io.isTTY && opts.output === undefined));
      if (opts.output !== undefined) {
        await writeFile(opts.output, text);
        io.stderr(`${summaryLine(report)}\n`);
      } else {
        io.stdout(text);
      }
      io.exit(report.exitCode);
    });
}
