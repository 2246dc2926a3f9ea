// A message a child wrote over several lines (pretty-printed JSON) is put back together here, so it
// is judged as the one message it is (and, under enforce, sent on one line); every other line is a
// unit of its own. Only a line that opens a JSON value without closing it starts a join; each line
// held is scanned once for its nesting (codec/json-nesting.ts), and the join is parsed once, when
// the value closes. It gives up at a line that cannot continue the value (a closer that does not
// match, text after the value) or that opens another at column 0. A message past the bounds cannot
// be read: its lines are handed on unread (relayed as they came, never judged one by one as lines
// that are no message) up to the line that closes it. An ordinary line costs two character tests.

import { NestingScanner } from '../codec/json-nesting.ts';

/** What the engine judges: one line, or the lines of one message joined by `\n`. */
export interface LineUnit {
  data: string;
  raw: Buffer;
  lines: number;
  /** Its bytes already went to the client (audit writes each line as it comes). */
  written: boolean;
  /** A line of a message too large to join: relay it, do not judge it (`first`: the message's first such unit). */
  unread?: 'first' | 'more';
}

interface Part {
  raw: Buffer;
  text: string;
  written: boolean;
}

const textOf = (raw: Buffer): string => raw.toString('utf8', 0, raw.length > 0 && raw[raw.length - 1] === 13 ? raw.length - 1 : raw.length);

const opens = (c: string | undefined): boolean => c === '{' || c === '[';
const closes = (c: string | undefined): boolean => c === '}' || c === ']';

/** Whether `text` looks like a whole JSON value on one line (opens and closes one). */
const looksWhole = (t: string): boolean => opens(t.trimStart()[0]) && closes(t.trimEnd().at(-1));

function parses(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null;
  } catch {
    return false;
  }
}

export class MessageJoiner {
  private parts: Part[] = [];
  /** The nesting of the held lines, followed as they come. */
  private readonly nesting = new NestingScanner();
  /** Inside a message too large to join, until the line that closes it. */
  private overflow = false;
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxLines: number,
    private readonly emit: (unit: LineUnit) => void,
  ) {}

  /** A line as the child wrote it (without `\n`); `written`: it went to the client already. */
  line(raw: Buffer, written: boolean): void {
    const part = { raw, text: textOf(raw), written };
    const { text } = part;
    // Pretty-printers put a message's first and last lines at column 0 and indent the rest.
    const topLevel = text.length > 0 && text[0] !== ' ' && text[0] !== '\t';
    const ends = topLevel && closes(text.trimEnd().at(-1));
    if (this.overflow) {
      this.unread(part, 'more');
      this.overflow = !ends;
      return;
    }
    if (this.parts.length > 0) {
      const nesting = this.nesting.line(text);
      if (nesting === 'closed') return void this.join(part);
      if (this.bytes + raw.length > this.maxBytes || this.parts.length + 1 >= this.maxLines) {
        // Too large to read: what was held and the rest of the message go on unread.
        const held = this.parts;
        this.parts = [];
        this.bytes = 0;
        for (const [i, p] of held.entries()) this.unread(p, i === 0 ? 'first' : 'more');
        this.unread(part, 'more');
        this.overflow = !ends;
        return;
      }
      // A line at column 0 that opens a value starts another message: what was held is lines of their own.
      if (nesting === 'open' && !(topLevel && opens(text[0]))) return void this.hold(part);
      this.flush();
    }
    if (this.maxLines > 1 && opens(text.trimStart()[0]) && !looksWhole(text)) {
      this.nesting.reset();
      if (this.nesting.line(text) === 'open') return void this.hold(part);
    }
    this.single(part);
  }

  /** The held lines and `last` closed a value: one message if they parse, else the lines they are. */
  private join(last: Part): void {
    this.hold(last);
    const all = this.parts;
    const joined = all.map((p) => p.text).join('\n');
    if (!parses(joined)) return void this.flush();
    this.parts = [];
    this.bytes = 0;
    this.emit({
      data: joined,
      raw: Buffer.concat(all.flatMap((p, i) => (i === 0 ? [p.raw] : [NEWLINE, p.raw]))),
      lines: all.length,
      written: all.every((p) => p.written),
    });
  }

  /** What is held goes out as the lines it is (the stream ended, or the join gave up). */
  flush(): void {
    const held = this.parts;
    this.parts = [];
    this.bytes = 0;
    for (const p of held) this.single(p);
  }

  /** Whether lines are held, waiting for the rest of a message. */
  get holding(): boolean {
    return this.parts.length > 0;
  }

  private hold(part: Part): void {
    this.parts.push(part);
    this.bytes += part.raw.length;
  }

  private unread(p: Part, which: 'first' | 'more'): void {
    this.emit({ data: p.text, raw: p.raw, lines: 1, written: p.written, unread: which });
  }

  private single(p: Part): void {
    this.emit({ data: p.text, raw: p.raw, lines: 1, written: p.written });
  }
}

const NEWLINE = Buffer.from('\n');
