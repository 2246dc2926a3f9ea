// Splits a text/event-stream byte stream into raw event blocks, so the proxy can forward each
// unedited block byte for byte and inspect only complete ones. Line rules are the WHATWG SSE ones
// (CRLF, LF or a lone CR). Every byte pushed comes back exactly once, in order: concatenating all
// `raw` buffers gives back the input, however it was cut into chunks.
//
// A block larger than maxBlockBytes is never held whole: it comes out as `oversize` pieces as the
// bytes arrive, the piece holding its terminating blank line marked `last: true`. Blocks are sized
// on their full length, so whether a block is oversize does not depend on how it was chunked.
//
// SseRelaySplitter (the proxy's relay) also returns what cannot be part of an event as soon as its
// line is complete: comment lines before the first field line of a block (a keep-alive such as
// ": ping\n" with no blank line after it) come out as `comment` pieces, and the block that follows
// holds only the rest. A comment line longer than the limit comes out as it arrives, never as an
// oversize block. Comment lines after a field line stay in their block, as do blank lines.

export type SsePiece = { kind: 'block'; raw: Buffer } | { kind: 'oversize'; raw: Buffer; last: boolean };
/** Comment lines at the start of a block (SseRelaySplitter only); the last one may be cut off by the limit or the stream's end. */
export type SseCommentPiece = { kind: 'comment'; raw: Buffer };
export type SseRelayPiece = SsePiece | SseCommentPiece;

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const BOM = [0xef, 0xbb, 0xbf];

// What the CR that ended the previous chunk was: an LF starting the next chunk belongs to it.
type PendingCr = 'none' | 'ends-line' | 'ends-block' | 'ends-comment';

class Splitter {
  readonly #max: number;
  /** Comment lines at a block's start come out as soon as they are complete. */
  readonly #early: boolean;
  #held: Buffer[] = []; // bytes of the pending block (or comment line) not returned yet
  #heldBytes = 0;
  #oversize = false; // inside a block already returned in part
  #atLineStart = true;
  #cr: PendingCr = 'none';
  #bom = 0; // bytes of a leading BOM matched so far; -1 once the stream start is past
  #fields = false; // (early) the pending block has a line that is not a comment
  #comment = false; // (early) the line begun last is a comment at its block's start

  constructor(maxBlockBytes: number, early: boolean) {
    this.#max = maxBlockBytes;
    this.#early = early;
  }

  push(chunk: Uint8Array): SseRelayPiece[] {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const len = buf.length;
    const out: SseRelayPiece[] = [];
    if (len === 0) return out;
    let i = 0; // scan position
    let start = 0; // first byte of buf not yet returned
    let run = -1; // (early) end of the comment lines in buf[start..] not returned yet
    if (this.#cr !== 'none') {
      if (buf[0] === LF) i = 1;
      if (this.#cr === 'ends-block') {
        this.#finish(out, buf.subarray(0, i));
        start = i;
      } else if (this.#cr === 'ends-comment' && i === 1) run = 1;
      this.#cr = 'none';
    }
    i = this.#skipBom(buf, i);

    // Next LF and CR at or after i (len when none); each indexOf covers fresh bytes only.
    let nextLf = -1;
    let nextCr = -1;
    while (i < len) {
      if (nextLf < i) nextLf = indexOrEnd(buf, LF, i);
      if (nextCr < i) nextCr = indexOrEnd(buf, CR, i);
      const p = Math.min(nextLf, nextCr);
      if (this.#early && !this.#fields && this.#atLineStart && p > i) {
        // A line begins at i before any field line of its block: a comment, or the first field line.
        this.#comment = buf[i] === COLON;
        if (!this.#comment) {
          this.#fields = true;
          if (run >= 0) start = this.#comments(out, buf, start, run);
          run = -1;
        }
      }
      if (p === len) {
        this.#atLineStart = false;
        break;
      }
      const blank = p === i && this.#atLineStart;
      const comment = !blank && this.#comment; // always false unless early
      if (blank && run >= 0) {
        start = this.#comments(out, buf, start, run);
        run = -1;
      }
      let end = p + 1;
      this.#atLineStart = true;
      if (buf[p] === CR) {
        if (end === len) {
          // Undecided until the next byte: the block (if this CR ends one) is held until then; a
          // comment line goes now, and an LF that follows goes after it.
          if (comment) run = len;
          this.#cr = comment ? 'ends-comment' : blank ? 'ends-block' : 'ends-line';
          break;
        }
        if (buf[end] === LF) end++;
      }
      i = end;
      if (comment) run = end;
      else if (blank) {
        this.#finish(out, buf.subarray(start, end));
        start = end;
      }
    }

    if (run >= 0) start = this.#comments(out, buf, start, run);
    if (start < len) this.#hold(buf.subarray(start));
    if (this.#early && !this.#fields) {
      // No event is pending, only a BOM or a comment line still coming: over the limit, the
      // comment goes out as it is.
      if (this.#comment && !this.#atLineStart && this.#heldBytes > this.#max) out.push({ kind: 'comment', raw: this.#take() });
    } else if (this.#oversize || this.#heldBytes > this.#max) this.#spill(out);
    return out;
  }

  // The stream ended: return what is pending, terminated or not, so it is still forwarded. An
  // oversize block cut off here still gets its last:true piece, empty if nothing was left.
  end(): SseRelayPiece[] {
    const out: SseRelayPiece[] = [];
    if (this.#oversize) out.push({ kind: 'oversize', raw: this.#take(), last: true });
    else if (this.#heldBytes > 0) {
      const comment = this.#early && !this.#fields && this.#comment && !this.#atLineStart;
      const raw = this.#take();
      // Over the limit only when early held a BOM (and a CR) that may have started a comment.
      out.push(
        comment ? { kind: 'comment', raw } : raw.length > this.#max ? { kind: 'oversize', raw, last: true } : { kind: 'block', raw },
      );
    }
    this.#oversize = false;
    this.#fields = false;
    this.#comment = false;
    this.#cr = 'none';
    return out;
  }

  // A UTF-8 BOM at the stream start is not line content: "\uFEFF\n" is a blank line.
  #skipBom(buf: Buffer, i: number): number {
    while (this.#bom >= 0 && i < buf.length) {
      if (buf[i] === BOM[this.#bom]) {
        i++;
        this.#bom = this.#bom === BOM.length - 1 ? -1 : this.#bom + 1;
      } else {
        if (this.#bom > 0) {
          // A partial BOM is ordinary content: the first line is a field line (named by it).
          this.#atLineStart = false;
          this.#fields = this.#early;
        }
        this.#bom = -1;
      }
    }
    return i;
  }

  // Comment lines end at `to`: returned with what is held (a BOM, the start of the first line).
  #comments(out: SseRelayPiece[], buf: Buffer, from: number, to: number): number {
    if (to > from) this.#hold(buf.subarray(from, to));
    out.push({ kind: 'comment', raw: this.#take() });
    return to;
  }

  // The pending block ends with `tail`.
  #finish(out: SseRelayPiece[], tail: Buffer): void {
    if (tail.length > 0) this.#hold(tail);
    const raw = this.#take();
    if (this.#oversize || raw.length > this.#max) out.push({ kind: 'oversize', raw, last: true });
    else out.push({ kind: 'block', raw });
    this.#oversize = false;
    this.#fields = false;
    this.#comment = false;
  }

  // Over the limit: return everything held but a CR that may end the block (it must come out
  // with last:true, together with the LF that may follow it).
  #spill(out: SseRelayPiece[]): void {
    this.#oversize = true;
    if (this.#heldBytes === 0) return;
    const all = this.#take();
    const keep = this.#cr === 'ends-block' ? 1 : 0;
    if (all.length > keep) out.push({ kind: 'oversize', raw: all.subarray(0, all.length - keep), last: false });
    if (keep) this.#hold(Buffer.from(all.subarray(all.length - 1))); // a copy, so `all` is not retained
  }

  #hold(bytes: Buffer): void {
    this.#held.push(bytes);
    this.#heldBytes += bytes.length;
  }

  #take(): Buffer {
    const held = this.#held;
    const raw = held.length === 1 ? held[0]! : Buffer.concat(held, this.#heldBytes);
    this.#held = [];
    this.#heldBytes = 0;
    return raw;
  }
}

/** Blocks and oversize pieces only: comment lines stay in their block. */
export class SseSplitter {
  readonly #s: Splitter;

  constructor(maxBlockBytes: number) {
    this.#s = new Splitter(maxBlockBytes, false);
  }

  push(chunk: Uint8Array): SsePiece[] {
    return this.#s.push(chunk) as SsePiece[];
  }

  end(): SsePiece[] {
    return this.#s.end() as SsePiece[];
  }
}

/** For a relay: comment lines at a block's start come out as `comment` pieces as soon as each is complete. */
export class SseRelaySplitter {
  readonly #s: Splitter;

  constructor(maxBlockBytes: number) {
    this.#s = new Splitter(maxBlockBytes, true);
  }

  push(chunk: Uint8Array): SseRelayPiece[] {
    return this.#s.push(chunk);
  }

  end(): SseRelayPiece[] {
    return this.#s.end();
  }
}

function indexOrEnd(buf: Buffer, byte: number, from: number): number {
  const at = buf.indexOf(byte, from);
  return at === -1 ? buf.length : at;
}
