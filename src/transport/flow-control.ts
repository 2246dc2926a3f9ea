// Backpressure where one reader feeds several outputs, or one output is fed by several readers: a
// reader is paused while anything it feeds is past its bound, and resumed only once none is. The
// stdio client's input feeds the child's stdin and, with the answers the proxy gives itself, the
// client's own output: paused on the child's stdin alone, a client that wrote without reading grew
// the output's buffer without bound.
import type { Readable, Writable } from 'node:stream';

/** A reader and what it feeds: streams, or any object that stands for a buffer of the caller's own. */
export interface Feed {
  from: Readable;
  into: readonly object[];
}

export class FlowControl {
  /** What is past its bound now: a stream waiting for 'drain', or a buffer the caller said was full. */
  private readonly full = new Set<object>();

  constructor(private readonly feeds: readonly Feed[]) {}

  /** Writes to `out`; past its buffer, every reader feeding it pauses until it drains (one listener however many writes). */
  write(out: Writable, bytes: Buffer): void {
    if (out.write(bytes) || this.full.has(out)) return;
    this.stop(out);
    out.once('drain', () => this.go(out));
  }

  /** `into` holds too much: the readers feeding it pause. */
  stop(into: object): void {
    if (this.full.has(into)) return;
    this.full.add(into);
    for (const f of this.feeds) if (f.into.includes(into)) f.from.pause();
  }

  /** `into` has room again (or is gone, and no drain will come): each reader feeding it resumes unless it feeds another that is full. */
  go(into: object): void {
    if (!this.full.delete(into)) return;
    for (const f of this.feeds) if (f.into.includes(into) && !f.into.some((o) => this.full.has(o))) f.from.resume();
  }
}
