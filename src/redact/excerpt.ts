// Evidence for a log line or a report: a short, one-line, redacted excerpt of any value, and a
// client's request shown by its shape only. Redacted before it is cut, so no secret survives in part.
import { asRecord } from '../codec/json-value.ts';
import { REDACTED, redactText } from './text.ts';
import { hideText, secretField } from './values.ts';

/** The envelope members a request excerpt shows as sent (still masked for credential shapes). */
const ENVELOPE: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method']);

/**
 * A client's request as evidence: its shape (method, id, keys, types), with the values of
 * `params` and of any member beyond the envelope hidden, so no secret reaches a log line.
 */
export function requestExcerpt(message: unknown, max = 160): string {
  const m = asRecord(message);
  if (!m) return excerpt(hideText(message), max);
  const shown = Object.fromEntries(
    Object.entries(m).map(([k, v]) => [k, ENVELOPE.has(k) && (typeof v !== 'object' || v === null) ? v : hideText(v)]),
  );
  return excerpt(shown, max);
}

/** An excerpt shows a few thousand characters at most: a longer text is redacted in a head this long, not whole. */
const HEAD = 16 * 1024;
/** Dropped from the end of a redacted head: a credential the cut split in two may no longer have its shape. */
const CUT_MARGIN = 1024;

/** The text redacted, or a redacted head of it long enough for `max` characters and `…`. */
function redactedHead(text: string, max: number): string {
  if (text.length <= HEAD) return redactText(text);
  const head = redactText(text.slice(0, HEAD));
  // Redaction shortens a head only by what it replaces; one left too short is redacted whole instead.
  return head.length - CUT_MARGIN > max ? `${head.slice(0, head.length - CUT_MARGIN)}…` : redactText(text);
}

/**
 * A value as redacted JSON text. Strings are redacted as they are, before JSON escapes them
 * (`\n` would hide where a token starts), and values under credential names at any depth; past
 * HEAD characters of strings, the rest (never shown) is left out. So is every value past the
 * first `max` + 1: each value written adds at least one character that is not white space (a
 * bracket, a quote, a digit, a key) before the next is read, so what follows cannot reach the
 * excerpt's `max` characters. Past them nothing is entered (a value nested deeper than the stack
 * is not walked to an overflow); the rest of a list already entered is still visited, as null.
 */
function redactedJson(value: unknown, max: number): string {
  let budget = HEAD;
  let written = 0;
  const replacer = (key: string, v: unknown): unknown => {
    if (written > max) return undefined;
    // Written as nothing: an object member that is undefined, a function or a symbol.
    if (v !== undefined && typeof v !== 'function' && typeof v !== 'symbol') written++;
    if (key !== '' && secretField(key, v)) return REDACTED;
    if (typeof v !== 'string') return v;
    if (budget <= 0) return '…';
    budget -= v.length;
    return redactedHead(v, max);
  };
  try {
    return JSON.stringify(value, replacer) ?? String(value);
  } catch {
    // Circular or holding a BigInt within what is shown: a placeholder (String() of a deep array recurses).
    return typeof value !== 'object' || value === null ? String(value) : Array.isArray(value) ? '[…]' : '{…}';
  }
}

const cut = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A short, one-line, redacted excerpt of any value, for the evidence field. */
export function excerpt(value: unknown, max = 160): string {
  // Redacted, then cut: a cut first could leave half a secret that no shape matches.
  const text = typeof value === 'string' ? redactedHead(value, max) : redactedJson(value, max);
  return cut(text.replace(/\s+/g, ' ').trim(), max);
}

/** A line of a peer's text as a record quotes it (a child's stderr): redacted, then cut to `max` characters; its spacing kept. */
export function redactedLine(text: string, max: number): string {
  return cut(redactedHead(text, max), max);
}
