// Splits a byte stream into newline-delimited lines (stdio's framing), holding at most `max` bytes
// of one line: a longer line is handed on in pieces as they come, since it cannot be read whole,
// only relayed (or dropped). Memory stays bounded whatever the peer writes.

export interface LineSink {
  /** A whole line, without its `\n` (a `\r` before it is kept: the reader decides). */
  line(bytes: Buffer): void;
  /** A piece of a line longer than the limit, in order; `last`: its final piece (the `\n` not included). */
  oversize(piece: Buffer, last: boolean): void;
  /** `n` empty lines in a row; without it each is a `line` of no bytes. A run costs a scan, not a call per line. */
  blanks?(n: number): void;
}

export class LineSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  /** Inside a line over the limit: its pieces go on as they come. */
  private over = false;

  constructor(
    private readonly max: number,
    private readonly sink: LineSink,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      if (this.sink.blanks && chunk[start] === 10 && this.heldBytes === 0 && this.held.length === 0 && !this.over) {
        let end = start + 1;
        while (end < chunk.length && chunk[end] === 10) end++;
        this.sink.blanks(end - start);
        start = end;
        continue;
      }
      const nl = chunk.indexOf(10, start);
      const ends = nl !== -1;
      const piece = chunk.subarray(start, ends ? nl : chunk.length);
      start = ends ? nl + 1 : chunk.length;
      if (this.over) {
        this.over = !ends;
        this.sink.oversize(piece, ends);
      } else if (this.heldBytes + piece.length > this.max) {
        const first = this.take(piece);
        this.over = !ends;
        this.sink.oversize(first, ends);
      } else if (ends) {
        this.sink.line(this.take(piece));
      } else {
        this.held.push(piece);
        this.heldBytes += piece.length;
      }
    }
  }

  /** The stream ended: a last line without its `\n` is still handed on. */
  end(): void {
    if (this.over) {
      this.over = false;
      this.sink.oversize(Buffer.alloc(0), true);
    } else if (this.held.length > 0) {
      this.sink.line(this.take(Buffer.alloc(0)));
    }
  }

  /** The held start of a line with its last piece, and nothing held after. */
  private take(piece: Buffer): Buffer {
    const whole = this.held.length === 0 ? piece : Buffer.concat([...this.held, piece]);
    this.held = [];
    this.heldBytes = 0;
    return whole;
  }
}
