// Credentials found by their shape in any text: error messages, excerpts, URLs, tool arguments
// logged in full. Three passes, each linear: a few regexes anchored on a literal (`eyJ`, `://`)
// and skipped outright when the text lacks it; credential-named pairs found from their separators;
// token runs found by one loop. A token starts where a word can start, or right after a JSON
// escape (`\n`): text may be JSON whose strings were never unescaped. Precision matters as much
// as recall: UUIDs, short hex (commit SHAs), digests and ids that say so, version strings, paths,
// URLs without userinfo and prose stay.
import { isSecretName, isSecretNumberName } from './names.ts';

/** What stands in for a credential in every log line, capture and report. */
export const REDACTED = '[REDACTED]';

type Replacer = (match: string, ...groups: string[]) => string;

interface Shape {
  /** Cheap test of whether the text can hold the shape at all. */
  gate: (text: string) => boolean;
  re: RegExp;
  to: string | Replacer;
}

/** Letters of the JSON escapes that may stand right before a token in text never unescaped. */
const ESCAPE_LETTER: ReadonlySet<string> = new Set(['n', 'r', 't', 'b', 'f']);

const always = (): boolean => true;
const has =
  (needle: string) =>
  (text: string): boolean =>
    text.includes(needle);

const WORD_CHAR = /\w/;

/** Whether a token may start at `at`: not inside a word, or right after a JSON escape (`\n`). */
const tokenStart = (text: string, at: number): boolean =>
  at === 0 || !WORD_CHAR.test(text[at - 1]!) || (at > 1 && text[at - 2] === '\\' && ESCAPE_LETTER.has(text[at - 1]!));

/** Credentials after `Bearer`/`Basic`, not a word of prose ("Basic Authentication", "bearer of"). */
const credentials = (token: string): boolean => token.length >= 6 && !/^[A-Za-z][a-z]*$/.test(token);

// Where a token can start: not inside a word, or right after a JSON escape such as `\n`.
const SHAPES: readonly Shape[] = [
  // A PEM private key, to its END line (or to the end of a cut excerpt).
  {
    gate: has('PRIVATE KEY-----'),
    re: /-----BEGIN[A-Z ]{0,40} PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z ]{0,40} PRIVATE KEY-----|$)/g,
    to: REDACTED,
  },
  // scheme://user:password@ (the password runs to the last `@` of the authority: one holding `@` goes whole).
  {
    gate: has('://'),
    re: /(?:(?<=\\[nrtbf])|(?<![\w+.-]))([a-z][\w+.-]{0,30}:\/\/[^\s/@:"'<>]{0,256}:)[^\s/?#"'<>]{0,256}@/gi,
    to: `$1${REDACTED}@`,
  },
  // jdbc:oracle:thin:user/password@host
  {
    gate: has('jdbc:'),
    re: /(?:(?<=\\[nrtbf])|(?<![\w.-]))(jdbc:oracle:\w+:[^\s/@"']{0,256})\/[^\s"'<>]{0,256}@/gi,
    to: `$1/${REDACTED}@`,
  },
  // An authorization scheme and its credentials (token68: `Bearer abc.def`, `Basic dXNlcjpwYXNz==`),
  // not a challenge's parameters (`Bearer realm="x", resource_metadata="…"`).
  // The scheme comes first, so the regex scans for its letters; where it starts is checked after.
  {
    gate: always,
    re: /(Bearer|Basic)(\s+)([\w.~+/-]+=*)(?![\w.~+/="-])/gi,
    to: (m, scheme, space, token, at, text) => (tokenStart(text!, Number(at)) && credentials(token!) ? `${scheme}${space}${REDACTED}` : m),
  },
];

// JWT, JWS and JWE: 3 or 5 base64url parts, the first a JSON header (`eyJ`). Found with indexOf
// and read by hand where a token may start: a regex tries its lookbehinds at every position, and
// backtracks through a long base64 run (`eyJeyJ…`) that no `.` follows, far slower than this loop.
const isBase64Url = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 45;

/** The end of the base64url run starting at `at`. */
function runEnd(text: string, at: number): number {
  let i = at;
  while (i < text.length && isBase64Url(text.charCodeAt(i))) i++;
  return i;
}

/** Where a JWT starting at `at` ends (header.payload.signature, two more parts for a JWE), or -1. */
function jwtEnd(text: string, at: number): number {
  const header = runEnd(text, at);
  if (header - at < 11 || text[header] !== '.') return -1;
  const payload = runEnd(text, header + 1);
  if (payload - header - 1 < 8 || text[payload] !== '.') return -1;
  let end = runEnd(text, payload + 1);
  for (let extra = 0; extra < 2 && text[end] === '.' && isBase64Url(text.charCodeAt(end + 1)); extra++) end = runEnd(text, end + 1);
  return end;
}

function redactJwts(text: string): string {
  let out = '';
  let from = 0;
  for (let at = text.indexOf('eyJ'); at >= 0; at = text.indexOf('eyJ', Math.max(at + 3, from))) {
    // Not inside a run (a `-` joins base64url too), unless right after a JSON escape.
    if (!tokenStart(text, at) || (at > 0 && text[at - 1] === '-')) continue;
    const end = jwtEnd(text, at);
    if (end < 0) continue;
    out += `${text.slice(from, at)}${REDACTED}`;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

// `name=value`, `name: value`, `"name": "value"` where the name ends like a credential's
// (names.ts). Found from the separators (indexOf, no regex over the whole text): the name before
// each is read back and judged, and only then is the value after it matched.
const VALUE = /[ \t]*(?:(\\?")([^"\\\r\n]+)|(\\?')([^'\\\r\n]+)|([^\s"'\\&,;<>{}()[\]=:][^\s"'\\&,;<>{}()[\]]*))/y;
const SCHEME = /^(?:bearer|basic)$/i;
/** Values that say whether, not what: `"has_password": true`, `token: null`. */
const NOT_A_SECRET = /^(?:true|false|null|undefined)$/;
/** A number is a count unless the name is a PIN's or a password's (`pass: 14`, `pin: 1234`). */
const DIGITS = /^\d+$/;
const NEXT_TOKEN = /(\s+)([^\s"'\\&,;<>{}()[\]]+)/y;

/** The last letters of the words names.ts takes for a credential's. */
const LAST_LETTERS = 'deghlnpsty';

/** Characters of a name: letters, digits, `_`, `.`, `-`. */
const isNameCode = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46 || c === 45;

/** The name that ends right before the separator at `sep` (past spaces and a closing quote), or ''. */
function nameBefore(text: string, sep: number): string {
  let end = sep;
  while (end > 0 && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
  if (end > 0 && (text[end - 1] === '"' || text[end - 1] === "'")) end -= end > 1 && text[end - 2] === '\\' ? 2 : 1;
  // Every credential name ends in one of these letters (password, token, key, auth, ...): most names are passed over here.
  if (end === 0 || !LAST_LETTERS.includes(text[end - 1]!.toLowerCase())) return '';
  let start = end;
  while (start > 0 && end - start < 64 && isNameCode(text.charCodeAt(start - 1))) start--;
  return text.slice(start, end);
}

/** Where the value after the separator at `sep` ends, and what it becomes; undefined to leave it. */
function pairValue(text: string, sep: number, name: string): { at: number; end: number; to: string } | undefined {
  VALUE.lastIndex = sep + 1;
  const m = VALUE.exec(text);
  if (!m) return undefined;
  const value = m[2] ?? m[4] ?? m[5]!;
  const end = sep + 1 + m[0].length;
  if (value === REDACTED || NOT_A_SECRET.test(value) || (DIGITS.test(value) && !isSecretNumberName(name))) return undefined;
  if (!SCHEME.test(value)) return { at: end - value.length, end, to: REDACTED };
  // `Authorization: Bearer abc`: the scheme stays, the credentials after it go.
  NEXT_TOKEN.lastIndex = end;
  const next = NEXT_TOKEN.exec(text);
  if (!next || next[2] === REDACTED) return undefined;
  return { at: end, end: end + next[0].length, to: `${next[1]}${REDACTED}` };
}

function redactPairs(text: string): string {
  let out = '';
  let from = 0;
  // The next `:` and `=`, each looked up again only once passed: one scan of the text for each.
  let colon = text.indexOf(':');
  let equals = text.indexOf('=');
  while (colon >= 0 || equals >= 0) {
    const sep = colon < 0 ? equals : equals < 0 ? colon : Math.min(colon, equals);
    let next = sep + 1;
    const name = nameBefore(text, sep);
    const pair = isSecretName(name) ? pairValue(text, sep, name) : undefined;
    if (pair) {
      out += `${text.slice(from, pair.at)}${pair.to}`;
      from = next = pair.end;
    }
    if (colon >= 0 && colon < next) colon = text.indexOf(':', next);
    if (equals >= 0 && equals < next) equals = text.indexOf('=', next);
  }
  return from === 0 ? text : out + text.slice(from);
}

// Tokens are runs of the base64 alphabet (`A-Za-z0-9_+/-`, then `=` padding), found by one loop
// over the text: a regex that only starts at a run's first character needs a lookbehind, tried at
// every position (several times the loop's cost). A run is a credential when a piece of it is a
// well-known service's key, or when it is 32+ hex digits or 32..512 characters that read as random.
const RUN_CHAR = new Uint8Array(65536); // indexed by any UTF-16 unit: no range check in the loop
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/-') RUN_CHAR[c.charCodeAt(0)] = 1;
/** The shortest run worth judging: a Slack key (`xoxb-` and 10). */
const MIN_RUN = 15;
/** Runs longer than this are data (an image, a blob); a key is never that long. */
const MAX_KEY_RUN = 1024;

// AWS access key ids, GitHub, Slack, Google, GitLab, npm, Hugging Face, and Stripe/OpenAI-style
// `sk-`/`pk_`/`rk_` keys (with a digit or a capital: not a snake_case word). Tried only where a
// key can start inside a run: at its start, and after a `/` or `+`.
const PROVIDER =
  /^(?:(?:AKIA|ASIA)[A-Z0-9]{16}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,}|xox[a-z]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}|AIza[\w-]{30,}|glpat-[\w-]{20,}|npm_[A-Za-z0-9]{30,}|hf_[A-Za-z0-9]{30,}|[spr]k[-_][\w-]{16,})$/;
const providerKey = (piece: string): boolean => PROVIDER.test(piece) && (!/^[spr]k[-_]/.test(piece) || /[A-Z0-9]/.test(piece.slice(3)));

/** Letters a service's key starts with (AKIA, ASIA, AIza, gh, github_pat_, glpat-, xox, xapp-, npm_, hf_, sk/pk/rk). */
const KEY_START = new Set('Agxnhspr');

/** A key after a glue: `pk_` in an identifier is a primary key, so Stripe's underscore keys count only with their mode. */
const gluedKey = (piece: string): boolean => providerKey(piece) && (!/^[spr]k_/.test(piece) || /^[spr]k_(?:live|test)_/.test(piece));

/**
 * The piece with a service's key replaced: the whole piece, or a key glued to a word before it
 * by `-` or `_` (`x-AKIA…`, `cli_sk-…`), from the first place one starts to the piece's end.
 * Each glue point is tried once and a try stops at the first character that cannot follow, so a
 * piece costs about its length.
 */
function providerPiece(piece: string): string {
  if (piece.length < MIN_RUN) return piece;
  if (providerKey(piece)) return REDACTED;
  for (let i = 1; i <= piece.length - MIN_RUN; i++) {
    const glue = piece.charCodeAt(i - 1);
    if ((glue === 45 || glue === 95) && KEY_START.has(piece[i]!) && gluedKey(piece.slice(i))) return `${piece.slice(0, i)}${REDACTED}`;
  }
  return piece;
}

/** The run with each `/`- or `+`-separated piece that is (or ends in) a service's key replaced. */
function providerKeys(run: string): string {
  if (run.length > MAX_KEY_RUN) return run;
  if (!run.includes('/') && !run.includes('+')) return providerPiece(run);
  const pieces = run.split(/([/+])/);
  let changed = false;
  for (let i = 0; i < pieces.length; i += 2) {
    const to = providerPiece(pieces[i]!);
    if (to !== pieces[i]) {
      pieces[i] = to;
      changed = true;
    }
  }
  return changed ? pieces.join('') : run;
}

/** What a run (its `=` padding aside) becomes, or undefined when it stays. */
function judgeRun(text: string, start: number, end: number): string | undefined {
  const run = text.slice(start, end);
  const to = providerKeys(run);
  if (to !== run) return to;
  if (end - start < 32) return undefined;
  const opaque = opaqueRun(run, start, text);
  return opaque === run ? undefined : opaque;
}

function redactRuns(text: string): string {
  let out = '';
  let from = 0;
  let start = -1;
  const n = text.length;
  for (let i = 0; i <= n; i++) {
    if (i < n && RUN_CHAR[text.charCodeAt(i)] === 1) {
      // The letter of a JSON escape (`\n`, `\t`) is not part of the token after it.
      if (start < 0) start = i > 0 && text.charCodeAt(i - 1) === 92 && ESCAPE_LETTER.has(text[i]!) ? i + 1 : i;
      continue;
    }
    if (start < 0) continue;
    const to = i - start >= MIN_RUN ? judgeRun(text, start, i) : undefined;
    if (to !== undefined) {
      // Padding goes with the token it pads.
      let end = i;
      while (end < n && end - i < 2 && text.charCodeAt(end) === 61) end++;
      out += `${text.slice(from, start)}${to}`;
      from = end;
    }
    start = -1;
  }
  return from === 0 ? text : out + text.slice(from);
}

const HEX = /^(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*[0-9])(?:[0-9a-f]+|[0-9A-F]+)$/;
/** A label that says the hex is a digest, a revision or an id, not a secret: `sha256:…`, `commit …`, `/blob/…`, `trace-id: …`. */
const HEX_LABEL =
  /(?:sha\d{0,3}|md5|blake\w*|commits?|digest|hash|checksum|etag|integrity|revision|rev|oid|object|blob|tree|[\w-]*id)[\s:=@"'/-]{1,3}$/i;
/** An SRI digest (`sha512-…` in package-lock files): base64 that says what it is. */
const DIGEST_PREFIX = /^(?:sha(?:1|224|256|384|512)|md5)-/i;
/** A path segment that is a word: the run is a path or a URL, judged segment by segment. */
const PLAIN_WORD = /^[a-z][a-z0-9_-]+$/;

/** Whether alphanumerics read as random: all three character classes, changing often. */
function random(run: string): boolean {
  let upper = 0;
  let lower = 0;
  let digit = 0;
  let pairs = 0;
  let changes = 0;
  let prev = 0;
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    const cls = c >= 65 && c <= 90 ? 1 : c >= 97 && c <= 122 ? 2 : c >= 48 && c <= 57 ? 3 : 0;
    if (cls === 1) upper++;
    else if (cls === 2) lower++;
    else if (cls === 3) digit++;
    if (cls !== 0 && prev !== 0) {
      pairs++;
      if (cls !== prev) changes++;
    }
    prev = cls;
  }
  // Random base62 changes class ~62% of the time; camelCase identifiers and paths 20-35%.
  return upper > 0 && lower > 0 && digit > 0 && pairs >= 24 && changes >= 0.42 * pairs;
}

/** Whether one run (or path segment) is a credential, given the text just before it. */
function opaque(part: string, before: string): boolean {
  if (part.length < 32) return false;
  if (HEX.test(part)) return !HEX_LABEL.test(before.slice(-24));
  return part.length <= 512 && !DIGEST_PREFIX.test(part) && random(part); // longer: data (an image), not a key
}

function opaqueRun(run: string, offset: number, text: string): string {
  const before = text.slice(Math.max(0, offset - 24), offset);
  const parts = run.split('/');
  if (parts.length === 1 || !parts.some((p) => PLAIN_WORD.test(p))) return opaque(run, before) ? REDACTED : run;
  let prev = before;
  let changed = false;
  const out = parts.map((p) => {
    const secret = opaque(p, prev);
    prev = `${p}/`;
    changed ||= secret;
    return secret ? REDACTED : p;
  });
  return changed ? out.join('/') : run;
}

/**
 * `text` with every credential-shaped part replaced by [REDACTED]: private keys, JWTs, URL
 * userinfo passwords, provider keys, `Bearer`/`Basic` credentials, values of credential-named
 * pairs, and long random tokens. Idempotent; linear in the text.
 */
export function redactText(text: string): string {
  if (text.length < 5) return text;
  let out = text;
  if (out.includes('eyJ')) out = redactJwts(out);
  for (const s of SHAPES) {
    if (!s.gate(out)) continue;
    out = typeof s.to === 'string' ? out.replace(s.re, s.to) : out.replace(s.re, s.to);
  }
  if (out.includes(':') || out.includes('=')) out = redactPairs(out);
  if (out.length >= MIN_RUN) out = redactRuns(out);
  return out;
}
