// What `mcp-warden check` does once its arguments are read: run the probes, keep the user's
// credentials and a peer's terminal controls out of the output, apply the baseline, render, exit.
// Loaded only when a check runs.
import { writeFile } from 'node:fs/promises';
import { applyBaseline, baselineOf, readBaseline, writeBaseline } from '../check/baseline.ts';
import { CHECK_DEFAULTS, type CheckFormat } from '../check/defaults.ts';
import { renderJson } from '../check/report-json.ts';
import { renderJunit } from '../check/report-junit.ts';
import { renderMarkdown } from '../check/report-markdown.ts';
import { renderSarif } from '../check/report-sarif.ts';
import { renderTable } from '../check/report-table.ts';
import { summaryLine, type CheckReport } from '../check/report.ts';
import { runCheck, type StdioTarget } from '../check/run.ts';
import { scrub, secretsOf } from '../check/scrub.ts';

/** Where the command writes, and how it ends; the process by default, a test's buffers otherwise. */
export interface CheckIo {
  stdout(text: string): void;
  stderr(text: string): void;
  exit(code: 0 | 1 | 2): void;
  /** Whether stdout is a terminal (colours by default). */
  isTTY: boolean;
  /** The columns the table is fitted to (`COLUMNS`, else the terminal's); undefined: no limit. */
  columns?: number;
}

export interface CheckCommandOptions {
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
  /** --sarif-artifact: the repository file SARIF results are placed on. */
  sarifArtifact?: string;
}

function render(report: CheckReport, opts: CheckCommandOptions, color: boolean, width: number | undefined): string {
  switch (opts.format) {
    case 'json':
      return renderJson(report);
    case 'sarif':
      return renderSarif(report, { artifact: opts.sarifArtifact });
    case 'junit':
      return renderJunit(report);
    case 'markdown':
      return renderMarkdown(report);
    default:
      return renderTable(report, { color, width });
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

/** Checks `url` (a URL, or a stdio server's command) as the options say, and writes the report. */
export async function runCheckCommand(
  url: URL | StdioTarget,
  opts: CheckCommandOptions,
  io: CheckIo,
  packageVersion: string,
): Promise<void> {
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
  const toScreen = opts.output === undefined;
  const text = render(report, opts, opts.color ?? (io.isTTY && toScreen), toScreen ? io.columns : undefined);
  if (opts.output !== undefined) {
    await writeFile(opts.output, text);
    io.stderr(`${summaryLine(report)}\n`);
  } else {
    io.stdout(text);
  }
  io.exit(report.exitCode);
}
