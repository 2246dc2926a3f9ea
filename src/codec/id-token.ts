// The raw JSON text of the "id" member of JSON-RPC messages (and where each message of a batch
// sits), read from the text they were parsed from. JSON.parse keeps the value, not the token: `1.0`, `1e2` and `-0` come back as 1, 100 and
// -0 (which JSON.stringify writes as 0), an integer beyond 2^53 as the nearest double (two such ids
// become one), a string written with optional escapes ("\u0041", "\/") as its plain form. A
// rewritten answer must carry the request's id token byte for byte, and correlation must keep two
// big ids apart, so the token is read back from the text.
//
// The text is JSON that JSON.parse accepted, so the scan trusts its grammar: it walks the members
// of the top-level object (or of each object of a top-level array), skipping every other value
// without building it (strings by indexOf, containers by a bracket count), and takes the value
// text of the last "id" member, as JSON.parse does. No recursion, no allocation but the tokens.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

const isWs = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipWs(t: string, i: number): number {
  while (i < t.length && isWs(t.charCodeAt(i))) i++;
  return i;
}

/** Index after the string starting with the quote at `i`. */
function stringEnd(t: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = t.indexOf('"', from);
    if (q < 0) return t.length;
    let backslashes = 0;
    for (let b = q - 1; b > i && t.charCodeAt(b) === BACKSLASH; b--) backslashes++;
    if (backslashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Index after the value starting at `i` (a string, an object, an array, or a literal / number). */
function valueEnd(t: string, i: number): number {
  const c = t.charCodeAt(i);
  if (c === QUOTE) return stringEnd(t, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < t.length; j++) {
      const d = t.charCodeAt(j);
      if (d === QUOTE) j = stringEnd(t, j) - 1;
      else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return j + 1;
    }
    return t.length;
  }
  let j = i;
  while (j < t.length) {
    const d = t.charCodeAt(j);
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isWs(d)) break;
    j++;
  }
  return j;
}

/** The "id" token of the object starting at `i` (undefined when it has none), and the index after the object. */
function objectId(t: string, i: number): { token: string | undefined; end: number } {
  let token: string | undefined;
  let j = skipWs(t, i + 1);
  if (t.charCodeAt(j) === CLOSE_BRACE) return { token, end: j + 1 };
  while (j < t.length) {
    const keyEnd = stringEnd(t, j);
    const raw = t.slice(j + 1, keyEnd - 1);
    // A key written with escapes ("\u0069d") is read as JSON.parse reads it.
    const key = raw.includes('\\') ? (JSON.parse(t.slice(j, keyEnd)) as string) : raw;
    j = skipWs(t, skipWs(t, keyEnd) + 1);
    const end = valueEnd(t, j);
    if (key === 'id') token = t.slice(j, end);
    j = skipWs(t, end);
    if (t.charCodeAt(j) !== COMMA) return { token, end: j + 1 };
    j = skipWs(t, j + 1);
  }
  return { token, end: t.length };
}

/** Where one message sits in its payload's text, and the raw text of its id. */
export interface MessageSpan {
  /** The value text of its "id" member; undefined without one (or for a message that is not an object). */
  token: string | undefined;
  start: number;
  end: number;
}

/**
 * Each message of `text`: the top-level value, or each element of a top-level array (`batch`),
 * with its span and id token. `text` must be JSON that JSON.parse accepted, without surrounding
 * whitespace.
 */
export function messageSpans(text: string, batch: boolean): MessageSpan[] {
  if (!batch) return [{ token: text.charCodeAt(0) === OPEN_BRACE ? objectId(text, 0).token : undefined, start: 0, end: text.length }];
  const out: MessageSpan[] = [];
  let j = skipWs(text, 1);
  if (text.charCodeAt(j) === CLOSE_BRACKET) return out;
  while (j < text.length) {
    const start = j;
    if (text.charCodeAt(j) === OPEN_BRACE) {
      const { token, end } = objectId(text, j);
      out.push({ token, start, end });
      j = end;
    } else {
      j = valueEnd(text, j);
      out.push({ token: undefined, start, end: j });
    }
    j = skipWs(text, j);
    if (text.charCodeAt(j) !== COMMA) break;
    j = skipWs(text, j + 1);
  }
  return out;
}

const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * One spelling for every JSON number token of the same mathematical value: `9007199254740993`,
 * `9007199254740993.0` and `9.007199254740993e15` give `9007199254740993`; a value with a
 * fraction gives `<digits>e<exponent>`; `-0` gives `0`. What is not a number token comes back as it is.
 */
export function canonicalNumber(token: string): string {
  const m = NUMBER.exec(token);
  if (!m) return token;
  const [, sign, int = '', frac = '', exp = '0'] = m;
  let digits = (int + frac).replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = BigInt(exp) - BigInt(frac.length);
  const kept = digits.replace(/0+$/, '');
  exponent += BigInt(digits.length - kept.length);
  digits = kept;
  // An integer is written out (a finite double has at most 309 digits, and only those are ids).
  if (exponent >= 0n && exponent <= 400n) return `${sign}${digits}${'0'.repeat(Number(exponent))}`;
  return `${sign}${digits}e${exponent}`;
}
