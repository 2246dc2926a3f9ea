// A stdio server's stderr, kept apart from the proxy's own records: each line the child writes is
// logged as a record of the proxy's (`stdio server stderr`, its text in `line`), never written
// through as it came. A child sharing the log's stream could write a line that reads as the
// proxy's (an `exchange` record a report would count) or put its credentials in the log; quoted
// in a string, redacted and cut, its text is still there to debug with. Bounds: STDERR_BOUNDS.
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { LineSplitter } from '../codec/line-splitter.ts';
import { STDERR_BOUNDS } from '../config/defaults.ts';
import { redactedLine } from '../redact/excerpt.ts';

/** `burst` at once, then `perSecond`: a token bucket, refilled as time passes. */
class LineBudget {
  private tokens: number;
  private last: number;

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
    private readonly now: () => number,
  ) {
    this.tokens = burst;
    this.last = now();
  }

  take(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) * this.perSecond) / 1000);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export class ChildStderr {
  private readonly splitter: LineSplitter;
  private readonly budget: LineBudget;
  /** Lines dropped over the budget since the last record. */
  private dropped = 0;
  /** Inside a line longer than STDERR_BOUNDS.heldBytes: its first piece was shown, the rest is dropped. */
  private inLongLine = false;
  /** The last STDERR_BOUNDS.tailLines lines, redacted and cut: why a child that exits died, for its no-response findings. */
  private readonly lastLines: string[] = [];
  /** `now`: a clock in ms (tests pass their own). */
  constructor(
    stream: Readable,
    private readonly logger: Logger,
    now: () => number = () => performance.now(),
  ) {
    const { heldBytes, burstLines, linesPerSecond } = STDERR_BOUNDS;
    this.budget = new LineBudget(burstLines, linesPerSecond, now);
    this.splitter = new LineSplitter(heldBytes, {
      line: (raw) => this.line(raw),
      oversize: (piece, last) => {
        if (!this.inLongLine) this.line(piece);
        this.inLongLine = !last;
      },
    });
    stream.on('data', (chunk: Buffer) => this.splitter.push(chunk));
    stream.once('end', () => {
      this.splitter.end();
      this.reportDropped();
    });
  }

  private line(raw: Buffer): void {
    const text = raw.toString('utf8', 0, raw.at(-1) === 13 ? raw.length - 1 : raw.length);
    if (text.trim() === '') return;
    // Kept whatever the budget: the lines before an exit are the ones that say why.
    this.lastLines.push(redactedLine(text, STDERR_BOUNDS.tailChars));
    if (this.lastLines.length > STDERR_BOUNDS.tailLines) this.lastLines.shift();
    if (!this.budget.take()) return void this.dropped++;
    this.reportDropped();
    this.logger.info({ line: redactedLine(text, STDERR_BOUNDS.lineChars) }, 'stdio server stderr');
  }

  /** The last lines the child wrote (redacted, cut), oldest first. */
  tail(): readonly string[] {
    return [...this.lastLines];
  }

  private reportDropped(): void {
    if (this.dropped === 0) return;
    this.logger.warn({ lines: this.dropped, limit: STDERR_BOUNDS.linesPerSecond }, 'stdio server stderr dropped');
    this.dropped = 0;
  }
}
