// Splits a text/event-stream byte stream into raw event blocks, so the proxy can forward each
// unedited block byte for byte and inspect only complete ones. Line rules are the WHATWG SSE ones
// (CRLF, LF or a lone CR). Every byte pushed comes back exactly once, in order: concatenating all
// `raw` buffers gives back the input, however it was cut into chunks.
//
// A block larger than maxBlockBytes is never held whole: it comes out as `oversize` pieces as the
// bytes arrive, the piece holding its terminating blank line marked `last: true`. Blocks are sized
// on their full length, so whether a block is oversize does not depend on how it was chunked.

export type SsePiece = { kind: 'block'; raw: Buffer } | { kind: 'oversize'; raw: Buffer; last: boolean };

const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf];

// What the CR that ended the previous chunk was: an LF starting the next chunk belongs to it.
type PendingCr = 'none' | 'ends-line' | 'ends-block';

export class SseSplitter {
  readonly #max: number;
  #held: Buffer[] = []; // bytes of the pending block not returned yet
  #heldBytes = 0;
  #oversize = false; // inside a block already returned in part
  #atLineStart = true;
  #cr: PendingCr = 'none';
  #bom = 0; // bytes of a leading BOM matched so far; -1 once the stream start is past

  constructor(maxBlockBytes: number) {
    this.#max = maxBlockBytes;
  }

  push(chunk: Uint8Array): SsePiece[] {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const len = buf.length;
    const out: SsePiece[] = [];
    if (len === 0) return out;
    let i = 0; // scan position
    let start = 0; // first byte of buf not yet returned
    if (this.#cr !== 'none') {
      if (buf[0] === LF) i = 1;
      if (this.#cr === 'ends-block') {
        this.#finish(out, buf.subarray(0, i));
        start = i;
      }
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
      if (p === len) {
        this.#atLineStart = false;
        break;
      }
      const blank = p === i && this.#atLineStart;
      let end = p + 1;
      this.#atLineStart = true;
      if (buf[p] === CR) {
        if (end === len) {
          // Undecided until the next byte: the block (if this CR ends one) is held until then.
          this.#cr = blank ? 'ends-block' : 'ends-line';
          break;
        }
        if (buf[end] === LF) end++;
      }
      i = end;
      if (blank) {
        this.#finish(out, buf.subarray(start, end));
        start = end;
      }
    }

    if (start < len) this.#hold(buf.subarray(start));
    if (this.#oversize || this.#heldBytes > this.#max) this.#spill(out);
    return out;
  }

  // The stream ended: return what is pending, terminated or not, so it is still forwarded. An
  // oversize block cut off here still gets its last:true piece, empty if nothing was left.
  end(): SsePiece[] {
    const out: SsePiece[] = [];
    if (this.#oversize) out.push({ kind: 'oversize', raw: this.#take(), last: true });
    else if (this.#heldBytes > 0) out.push({ kind: 'block', raw: this.#take() });
    this.#oversize = false;
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
        if (this.#bom > 0) this.#atLineStart = false; // a partial BOM is ordinary content
        this.#bom = -1;
      }
    }
    return i;
  }

  // The pending block ends with `tail`.
  #finish(out: SsePiece[], tail: Buffer): void {
    if (tail.length > 0) this.#hold(tail);
    const raw = this.#take();
    if (this.#oversize || raw.length > this.#max) out.push({ kind: 'oversize', raw, last: true });
    else out.push({ kind: 'block', raw });
    this.#oversize = false;
  }

  // Over the limit: return everything held but a CR that may end the block (it must come out
  // with last:true, together with the LF that may follow it).
  #spill(out: SsePiece[]): void {
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

function indexOrEnd(buf: Buffer, byte: number, from: number): number {
  const at = buf.indexOf(byte, from);
  return at === -1 ? buf.length : at;
}
