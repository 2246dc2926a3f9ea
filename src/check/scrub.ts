// What `check` prints comes from a server nobody here trusts. Two things never reach the output
// (table, markdown, JSON, SARIF, JUnit, the baseline file): the credentials the user passed with
// -H, which a server may quote back in an error, and, in the formats read on a terminal, a peer's
// control characters (an OSC 52 clipboard write, a screen clear), shown escaped instead.
import { terminalText } from '../util/terminal.ts';

const MARK = '[REDACTED]';
/** A value shorter than this is no credential worth hiding (and hiding it would garble the report). */
const MIN_SECRET = 6;

/** The strings to hide: each -H value, and its credential alone (`Bearer TOKEN` -> TOKEN). */
export function secretsOf(headers: Readonly<Record<string, string>>): string[] {
  const out = new Set<string>();
  for (const value of Object.values(headers)) {
    out.add(value);
    const token = /^[A-Za-z][\w.-]*\s+(\S+)$/.exec(value)?.[1];
    if (token) out.add(token);
  }
  // Longest first: a whole value goes before the token inside it.
  return [...out].filter((s) => s.length >= MIN_SECRET).sort((a, b) => b.length - a.length);
}

/** A copy of `value` with every string scrubbed: secrets replaced, controls escaped when `controls`. */
export function scrub<T>(value: T, secrets: readonly string[], controls: boolean): T {
  const text = (s: string): string => {
    let out = s;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(MARK);
    return controls ? terminalText(out) : out;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return text(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && !(v instanceof Date)) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[text(k)] = walk(x);
      return out;
    }
    return v;
  };
  if (secrets.length === 0 && !controls) return value;
  return walk(value) as T;
}
