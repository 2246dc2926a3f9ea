// The regular expressions of tool schemas (`pattern`, `patternProperties`) run under RE2 (re2js):
// linear in the input, so a server's `^(a+)+$` cannot hold the event loop for every client. JSON
// Schema patterns are ECMA-262 (ajv passes the `u` flag); RE2 has neither lookaround nor
// backreferences, and a pattern it cannot run is refused (UnsafePattern), never handed to V8's
// backtracking engine. Where the two syntaxes read alike but mean different things (`\s`, `.`,
// `[]`, `\uXXXX`, `[[:x:]]`), the pattern is rewritten to say what ECMA-262 means.
import type { CodeOptions } from 'ajv';
import { RE2JS } from 're2js';

type RegExpEngine = NonNullable<CodeOptions['regExp']>;

/** A pattern the proxy cannot run in linear time: the schema holding it is not judged. */
export class UnsafePattern extends Error {
  constructor(
    readonly pattern: string,
    why: string,
  ) {
    super(why);
    this.name = 'UnsafePattern';
  }
}

/** ECMA-262 WhiteSpace and LineTerminator (what `\s` matches); RE2's `\s` is ASCII only. */
const SPACE: ReadonlyArray<readonly [number, number]> = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x1680, 0x1680],
  [0x2000, 0x200a],
  [0x2028, 0x2029],
  [0x202f, 0x202f],
  [0x205f, 0x205f],
  [0x3000, 0x3000],
  [0xfeff, 0xfeff],
];
const MAX_CODE_POINT = 0x10ffff;

const hex = (cp: number): string => `\\x{${cp.toString(16)}}`;
const ranges = (rs: ReadonlyArray<readonly [number, number]>): string =>
  rs.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('');

/** The code points between SPACE's ranges: `\S`, written as class items so it also fits inside a class. */
function complement(rs: ReadonlyArray<readonly [number, number]>): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let next = 0;
  for (const [a, b] of rs) {
    if (a > next) out.push([next, a - 1]);
    next = b + 1;
  }
  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT]);
  return out;
}

const SPACE_ITEMS = ranges(SPACE);
const NON_SPACE_ITEMS = ranges(complement(SPACE));
/** `.` without the `s` flag: anything but a LineTerminator (RE2's `.` excludes only \n). */
const DOT = `[^${ranges([
  [0x0a, 0x0a],
  [0x0d, 0x0d],
  [0x2028, 0x2029],
])}]`;
const ALL = `${hex(0)}-${hex(MAX_CODE_POINT)}`;
/** Control escapes by letter: `\f`, `\n`, `\r`, `\t`, `\v`. */
const CONTROL: Readonly<Record<string, number>> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };

const isHighSurrogate = (cp: number): boolean => cp >= 0xd800 && cp <= 0xdbff;
const isLowSurrogate = (cp: number): boolean => cp >= 0xdc00 && cp <= 0xdfff;

/**
 * An ECMA-262 pattern (valid under the `u` flag: the caller checked) as RE2 syntax with the same
 * meaning; throws UnsafePattern for what RE2 cannot run. Class items other than escapes mean the
 * same in both syntaxes, as do `^`, `$` (no `m` flag), quantifiers, `\d`, `\w` and `\b` (ASCII in both).
 */
function toRE2(pattern: string): string {
  let out = '';
  let inClass = false;
  let i = 0;
  const hexAt = (start: number, length: number): number => Number.parseInt(pattern.slice(start, start + length), 16);

  /** `\uXXXX` or `\u{X...}` at i (after the backslash): its code point and where it ends. */
  const unicodeEscape = (at: number): { cp: number; end: number } => {
    if (pattern[at + 1] === '{') {
      const close = pattern.indexOf('}', at);
      return { cp: hexAt(at + 2, close - at - 2), end: close + 1 };
    }
    return { cp: hexAt(at + 1, 4), end: at + 5 };
  };

  const translateEscape = (): void => {
    const c = pattern[i + 1]!;
    i += 2;
    if ('dDwWB'.includes(c)) return void (out += `\\${c}`);
    if (c === 'p' || c === 'P') {
      // A property RE2 has means the same there (checked against V8 for every code point); one it lacks does not compile.
      const close = pattern.indexOf('}', i);
      out += `\\${c}${pattern.slice(i, close + 1)}`;
      i = close + 1;
      return;
    }
    if (c === 's' || c === 'S') {
      const items = c === 's' ? SPACE_ITEMS : NON_SPACE_ITEMS;
      out += inClass ? items : `[${items}]`;
      return;
    }
    if (c === 'b') {
      // Inside a class \b is a backspace.
      out += inClass ? hex(0x08) : '\\b';
      return;
    }
    if (c >= '1' && c <= '9') throw new UnsafePattern(pattern, 'a backreference');
    if (c === 'k') throw new UnsafePattern(pattern, 'a named backreference');
    const control = CONTROL[c];
    if (control !== undefined) return void (out += hex(control));
    if (c === 'c') {
      out += hex(pattern.charCodeAt(i) % 32);
      i += 1;
      return;
    }
    if (c === '0') return void (out += hex(0));
    if (c === 'x') {
      out += hex(hexAt(i, 2));
      i += 2;
      return;
    }
    if (c === 'u') {
      let { cp, end } = unicodeEscape(i - 1);
      // Under `u` a surrogate pair written as two escapes is one code point.
      if (isHighSurrogate(cp) && pattern.startsWith('\\u', end) && pattern[end + 2] !== '{') {
        const low = hexAt(end + 2, 4);
        if (isLowSurrogate(low)) {
          cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          end += 6;
        }
      }
      out += hex(cp);
      i = end;
      return;
    }
    // An identity escape (a syntax character, `/`, `-`): the character itself.
    out += hex(c.charCodeAt(0));
  };

  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      translateEscape();
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      // A literal `[` inside a class, so that RE2 reads no POSIX class (`[[:alpha:]]`).
      out += c === '[' ? hex(0x5b) : c;
      i += 1;
      continue;
    }
    if (c === '[') {
      // ECMA-262's empty class matches nothing and `[^]` anything; to RE2 `]` right after `[` is a literal.
      if (pattern.startsWith('[]', i)) {
        out += `[^${ALL}]`;
        i += 2;
      } else if (pattern.startsWith('[^]', i)) {
        out += `[${ALL}]`;
        i += 3;
      } else {
        inClass = true;
        out += pattern[i + 1] === '^' ? '[^' : '[';
        i += pattern[i + 1] === '^' ? 2 : 1;
      }
      continue;
    }
    if (c === '.') {
      out += DOT;
      i += 1;
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const rest = pattern.slice(i + 2, i + 4);
      if (rest.startsWith(':')) {
        out += '(?:';
        i += 3;
      } else if (rest[0] === '=' || rest[0] === '!' || rest === '<=' || rest === '<!') {
        throw new UnsafePattern(pattern, 'a lookaround assertion');
      } else if (rest[0] === '<') {
        // A named group: its name matters to no test.
        out += '(?:';
        i = pattern.indexOf('>', i) + 1;
      } else throw new UnsafePattern(pattern, 'a modifier group');
      continue;
    }
    out += c;
    i += 1;
  }
  return out;
}

/** A pattern compiled for ajv's `code.regExp`: RE2 with ECMA-262's meaning, or UnsafePattern. */
function compile(pattern: string, flags: string): ReturnType<RegExpEngine> {
  // ajv passes `u` (its unicodeRegExp default); the translation reads the syntax of that flag.
  if (flags !== 'u') throw new Error(`schema patterns are read with the u flag, not ${JSON.stringify(flags)}`);
  // V8 only parses it here (linear, never run): a pattern ECMA-262 rejects is a schema that does not compile.
  new RegExp(pattern, flags);
  let re: RE2JS;
  try {
    re = RE2JS.compile(toRE2(pattern));
  } catch (err) {
    if (err instanceof UnsafePattern) throw err;
    throw new UnsafePattern(pattern, err instanceof Error ? err.message : String(err));
  }
  // ajv keys its compiled patterns by toString(): one per pattern, as a RegExp's would be.
  const key = `/${pattern}/${flags}`;
  const compiled = { test: (s: string) => re.test(s), toString: () => key };
  return compiled;
}

/** ajv's `code.regExp`: every schema pattern runs in linear time. */
export const linearRegExp: RegExpEngine = Object.assign(compile, { code: 'linearRegExp' });
