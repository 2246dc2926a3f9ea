// `mcp-warden report FILE...`: reads exchange logs and captures (plain or gzip, `-` or a pipe for
// stdin) as streams, in bounded memory, and writes one self-contained HTML page (or the data as
// JSON). Progress goes to stderr once a read takes more than a second. Exit 1 when an input or the
// policy cannot be read or the output cannot be written (what was read is still reported).
import { stat, writeFile } from 'node:fs/promises';
import type { ReportData } from '../report/model.ts';
import { renderReportHtml } from '../report/html.ts';
import { INPUT_BOUNDS } from '../config/defaults.ts';
import { formatCount } from '../util/count.ts';
import { inputLineBatches, type InputLimits, OVERSIZE, whyUnreadable } from '../report/input.ts';
import { ReportReader } from '../report/reader.ts';
import { policyOrErrors, SHIPPED_ENFORCE } from './startup-policy.ts';

export interface ReportCommandOptions {
  output?: string;
  policy?: string;
  format: 'html' | 'json';
  progress: boolean;
  title?: string;
  /** How often progress is written once a read is under way (default 1 s; tests shorten it). */
  progressEveryMs?: number;
  /** Each input's bounds (INPUT_BOUNDS unless given): `--max-lines`, `--max-ratio`. */
  limits?: Partial<InputLimits>;
}

export interface ReportIo {
  out: { write(text: string): unknown };
  err: { write(text: string): unknown };
  /** Whether stdin is a terminal (then no input means a usage error, not a wait for a pipe). */
  stdinIsTTY: boolean;
}

const mib = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MiB`;

/** Progress on stderr: silent for a read shorter than `everyMs`, then a line every `everyMs`. */
class Progress {
  private bytes = 0;
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly total: number | undefined,
    private readonly lines: () => number,
    err: ReportIo['err'],
    everyMs: number | undefined,
  ) {
    if (everyMs === undefined) return;
    this.timer = setInterval(() => {
      const of = this.total ? ` of ${mib(this.total)} (${Math.floor((100 * this.bytes) / this.total)}%)` : '';
      err.write(`report: ${mib(this.bytes)}${of} read, ${formatCount(this.lines())} lines\n`);
    }, everyMs);
    this.timer.unref();
  }

  read = (n: number): void => {
    this.bytes += n;
  };

  stop(): void {
    clearInterval(this.timer);
  }
}

/** The inputs' total size, when every one is a file. */
async function totalSize(sources: string[]): Promise<number | undefined> {
  let total = 0;
  for (const s of sources) {
    if (s === '-') return undefined;
    total += await stat(s).then(
      (st) => st.size,
      () => 0,
    );
  }
  return total;
}

/** Runs the command; returns the exit code. */
export async function runReportCommand(
  inputs: string[],
  opts: ReportCommandOptions,
  io: ReportIo = { out: process.stdout, err: process.stderr, stdinIsTTY: process.stdin.isTTY === true },
): Promise<number> {
  const { err } = io;
  if (inputs.length === 0 && io.stdinIsTTY) {
    err.write('report: name the logs or captures to read (FILE..., or - for stdin), or pipe one in\n');
    return 2;
  }
  const sources = inputs.length === 0 ? ['-'] : inputs;
  const policy = await policyOrErrors(opts.policy ?? SHIPPED_ENFORCE, err);
  if (!policy) return 1;

  const limits = { ...INPUT_BOUNDS, ...opts.limits };
  const reader = new ReportReader(policy);
  const progress = new Progress(
    await totalSize(sources),
    () => reader.lines,
    err,
    opts.progress ? (opts.progressEveryMs ?? 1000) : undefined,
  );
  let failed = false;
  for (const source of sources) {
    try {
      for await (const batch of inputLineBatches(source, progress.read, limits)) {
        for (const line of batch) {
          if (line === OVERSIZE) reader.oversize();
          else if (typeof line === 'number') reader.blanks(line);
          else reader.line(line);
        }
      }
    } catch (e) {
      failed = true;
      err.write(`report: ${source}: cannot read it all: ${whyUnreadable(e)} (what was read is reported)\n`);
    }
  }
  progress.stop();
  // No input could be opened at all: an empty report would only hide that.
  if (failed && reader.lines === 0) {
    err.write('report: nothing could be read: no report written\n');
    return 1;
  }

  const data = reader.data(sources.map((s) => (s === '-' ? 'stdin' : s)));
  const output = opts.output ?? (opts.format === 'html' ? 'report.html' : '-');
  const text = opts.format === 'json' ? `${JSON.stringify(data, null, 2)}\n` : renderReportHtml(data, opts.title);
  try {
    if (output === '-') io.out.write(text);
    else await writeFile(output, text);
  } catch (e) {
    err.write(`report: cannot write ${output}: ${whyUnreadable(e)}\n`);
    return 1;
  }
  err.write(`${summaryLine(data)}${output === '-' ? '' : ` -> ${output}`}\n`);
  return failed ? 1 : 0;
}

/** `report: 120 exchanges (9 failed), judged 118 of 120 exchanges, 14 findings (3 error, 9 warning, 2 info), 2 bad lines; policy would rewrite 4, block 1` */
export function summaryLine(d: ReportData): string {
  const { summary: s, whatIf: w } = d;
  const total = s.findings.error + s.findings.warning + s.findings.info;
  const whatIf =
    w.source === 'none'
      ? ''
      : `; ${w.source === 'replay' ? 'the policy' : 'the shadow policy'} would rewrite ${w.decisions.rewrite}, block ${w.decisions.block}`;
  return (
    `report: ${s.exchanges} exchanges (${s.errors} failed), judged ${s.coverage.judged} of ${s.coverage.of} exchanges, ${total} findings ` +
    `(${s.findings.error} error, ${s.findings.warning} warning, ${s.findings.info} info), ${d.input.bad} bad lines${whatIf}`
  );
}
