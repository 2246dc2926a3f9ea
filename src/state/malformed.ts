// What the store sent that is not what this proxy writes (a fact of the wrong shape, a reply of
// the wrong type, a value past its size bound): each one counted (mcp_warden_state_errors_total
// {op, reason}), said at most once a minute (with how many came since it was last said), and
// ignored by the caller. Anyone who can write to Redis can send a flood of them: the log stays quiet.
import { STATE_BOUNDS } from '../config/defaults.ts';
import type { Logger } from '../sinks/logger.ts';

/** Why an operation on the store gave nothing: it failed (or timed out), its reply was malformed, or too large. */
export type StateErrorReason = 'failed' | 'malformed' | 'too-large' | 'unavailable';

export class MalformedReplies {
  private saidAt = Number.NEGATIVE_INFINITY;
  private unsaid = 0;

  constructor(
    private readonly logger: Logger,
    private readonly onError: (op: string, reason: StateErrorReason) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** A reply of `op` ignored: `what` says what it was (never its contents). */
  report(op: string, what: string, reason: Exclude<StateErrorReason, 'failed'> = 'malformed'): void {
    this.onError(op, reason);
    this.unsaid++;
    const now = this.now();
    if (now - this.saidAt < STATE_BOUNDS.malformedLogEveryMs) return;
    this.saidAt = now;
    this.logger.warn(
      { op, what, reason, count: this.unsaid },
      'state store sent what this proxy does not write: ignored, judged with what this replica knows',
    );
    this.unsaid = 0;
  }
}
