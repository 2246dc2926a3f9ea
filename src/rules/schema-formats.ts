// The `format` values the proxy asserts when it judges tool arguments: the string formats of JSON
// Schema that a model gets wrong and can put right (the article's own probe sends "not-a-date" for
// a `format: date` parameter). ajv-formats defines them; the ones it writes as regular expressions
// run under RE2 here (linear in the input, like schema patterns: schema-regexp.ts), the dates and
// times are its functions (RFC 3339, one bounded regex each). A format not listed stays what the
// JSON Schema dialects make every format by default: an annotation, never asserted.
import type { Format } from 'ajv';
import { fastFormats, fullFormats } from 'ajv-formats/dist/formats.js';
import { RE2JS } from 're2js';

/** A format written as a regular expression, run by RE2 with the same flags (only `i` is used). */
function linear(re: Format): Format {
  if (!(re instanceof RegExp)) throw new TypeError('a format given as a regular expression was expected');
  const compiled = RE2JS.compile(re.source, re.flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0);
  return (value: string) => compiled.matches(value);
}

/**
 * The asserted formats. `email` and `uri` as ajv-formats' fast forms (its full ones backtrack, or
 * need lookaround RE2 has not); `hostname` is left out for that reason too.
 */
export const ASSERTED_FORMATS: Readonly<Record<string, Format>> = {
  date: fullFormats.date,
  time: fullFormats.time,
  'date-time': fullFormats['date-time'],
  email: linear(fastFormats.email),
  uri: linear(fastFormats.uri),
  uuid: linear(fullFormats.uuid),
  ipv4: linear(fullFormats.ipv4),
  ipv6: linear(fullFormats.ipv6),
};
