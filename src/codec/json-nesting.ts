// Follows the nesting of a JSON text that comes a line at a time, each character looked at once:
// a reader joining lines learns where the value ends, or that the lines can never be one, without
// parsing what it joined again at every line (that made joining quadratic).

/** After a line: the value is still `open`, `closed` (whole, nothing but whitespace after), or `broken` (no line can mend it). */
export type Nesting = 'open' | 'closed' | 'broken';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

export class NestingScanner {
  /** The closers the open brackets wait for, innermost last. */
  private readonly closers: number[] = [];
  private inString = false;
  private escaped = false;
  private closed = false;
  private broken = false;

  /** The next line (the text joined so far gets `\n` and then it). */
  line(text: string): Nesting {
    for (let i = 0; i < text.length && !this.broken; i++) this.broken = !this.char(text.charCodeAt(i));
    // A JSON string cannot hold a raw newline: one still open at the line's end never closes.
    if (this.inString) this.broken = true;
    return this.broken ? 'broken' : this.closed ? 'closed' : 'open';
  }

  /** Starts over, for the next value. */
  reset(): void {
    this.closers.length = 0;
    this.inString = false;
    this.escaped = false;
    this.closed = false;
    this.broken = false;
  }

  /** Whether `c` may come next. Only structure is checked; what JSON.parse alone can judge (a bad literal) is its to find. */
  private char(c: number): boolean {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) this.inString = false;
      else if (c < 0x20) return false;
      return true;
    }
    if (this.closed) return isSpace(c);
    if (c === QUOTE) this.inString = true;
    else if (c === OPEN_OBJECT) this.closers.push(CLOSE_OBJECT);
    else if (c === OPEN_ARRAY) this.closers.push(CLOSE_ARRAY);
    else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (this.closers.pop() !== c) return false;
      this.closed = this.closers.length === 0;
    }
    return true;
  }
}
