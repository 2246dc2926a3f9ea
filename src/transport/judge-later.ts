// Under audit a body goes out before it is judged; the judging and its records then wait for the
// end of the event loop's poll phase and run together, off the response path (issue 15: the same
// code run back to back, while its caches are warm, costs ~10% less CPU per exchange than run
// between network callbacks). The transport calls `flush` before every other engine call that
// reads or changes what the engine shares between exchanges (a POST or GET opening, an SSE event,
// a stream's end, a failure, the sweeper's tick; not the upstream's headers, which complete only
// the exchange's own answers): an audited body's plan changes nothing until it is judged, so the
// engine's shared state sees the same changes in the same order as if each body were judged at
// once (review-15-reorder.test.ts).

export class JudgingQueue {
  private readonly tasks: (() => void)[] = [];
  /** `failed`: what a task threw (a task reports its own failures; this is the net under it). */
  constructor(private readonly failed: (err: unknown) => void) {}
  private scheduled = false;
  private flushing = false;
  private readonly run = (): void => {
    this.scheduled = false;
    this.flush();
  };

  /** Runs `task` once the poll phase's callbacks are done (setImmediate), after the tasks before it. */
  defer(task: () => void): void {
    this.tasks.push(task);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.run);
    }
  }

  /**
   * Runs every waiting task now, in order (tasks deferred meanwhile included). Called from inside
   * a task (one whose judging failed goes to the endpoint's fail(), which flushes), it returns:
   * the rest run after that task, never in the middle of it.
   */
  flush(): void {
    if (this.flushing) return;
    this.flushing = true;
    try {
      this.drain();
    } finally {
      this.flushing = false;
    }
  }

  private drain(): void {
    while (this.tasks.length > 0) {
      const task = this.tasks.shift()!;
      try {
        task();
      } catch (err) {
        this.failed(err);
      }
    }
  }

  get size(): number {
    return this.tasks.length;
  }
}
