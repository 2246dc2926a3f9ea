// Patterns of leaked internals (stack traces, absolute paths, private addresses, internal hosts
// and connection strings) and the finder that applies them to a text, skipping what the client
// sent itself.
//
// - IPs and hosts must be whole tokens: `v10.0.0.1`, `10.2.3.4-beta`, `1.10.0.0.1`, `10.0.0.256`
//   and `version 10.0.0.1` are not addresses; `db.internal.example.com` is a public name.
// - Loopback (127.0.0.0/8, ::1, `localhost`) is no leak: it names the machine the server runs on,
//   maps nothing of a network, and "127.0.0.1:6443: connection refused" is what a user needs to
//   fix a server's own configuration (issue 43).
// - `file://` URIs are not paths (MCP names resources and roots by them); a file URI inside a stack
//   frame is still a stack frame.
// - Every pattern is linear: repeated parts are separated by characters their classes exclude,
//   and patterns that begin with a repeated class are anchored by a lookbehind.

export type LeakRuleId = 'leaked-stack-trace' | 'leaked-path' | 'leaked-private-address' | 'leaked-internal-host';

export interface LeakPattern {
  rule: LeakRuleId;
  /** Stable kebab-case name of the pattern. */
  name: string;
  /** What a match is, for messages: "a Node.js stack frame". */
  label: string;
  /** A match; a group named `core` (if any) is the part compared with what the client sent. */
  re: RegExp;
}

export interface Leak {
  rule: LeakRuleId;
  pattern: string;
  label: string;
  match: string;
  index: number;
  length: number;
}

// Building blocks (sources of regexes).
/** Start of a path token: start of text, whitespace, a quote or an opening bracket, `=`, `,` ... (not `/`, `:`, a letter). */
const PATH_START = String.raw`(?<![^\s"'\x60(\[{<=,;|>*])`;
/**
 * One path segment: no separators, spaces, quotes, brackets, `=` or `:` (so `:42:17` stays outside).
 * It excludes every character PATH_START accepts before a token, so no run holds a second start.
 */
const SEG = String.raw`[^\s"'\x60()<>\[\]{}|,;:=*?/\\]`;
/** A token's characters for patterns that begin after PATH_START (same exclusions, `:` allowed). */
const TOKEN = String.raw`[^\s"'\x60()<>\[\]{}|,;=*]`;
const SRC_EXT = 'js|mjs|cjs|ts|mts|cts|jsx|tsx|py|java|kt|go|rb|php|cs|rs|cpp|cc|c|h|hpp|jar|dll|so';
const ROOTS = 'home|Users|usr|var|srv|opt|etc|app|tmp|root|proc|mnt|workspace|code';
const OCT = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;
const H16 = '[0-9a-f]{1,4}';
const V6_TAIL = `(?:(?::${H16}){7}|(?::${H16}){0,5}::(?:${H16}(?::${H16}){0,5})?)`;
const PORT = String.raw`(?::\d{1,5}(?!\d))?`;
const JS_EXT = String.raw`\.(?:[cm]?[jt]sx?|coffee|vue|svelte)`;

const p = (rule: LeakRuleId, name: string, label: string, source: string, flags = ''): LeakPattern => ({
  rule,
  name,
  label,
  re: new RegExp(source, `g${flags}`),
});

const STACK = 'leaked-stack-trace';
const PATH = 'leaked-path';
const ADDR = 'leaked-private-address';
const HOST = 'leaked-internal-host';

/** Every pattern, by rule. A policy may extend the list and pass it to `findLeaks` or `leakRules`. */
export const LEAK_PATTERNS: readonly LeakPattern[] = [
  // Stack traces.
  p(
    STACK,
    'node-frame',
    'a Node.js stack frame',
    String.raw`(?<![\w$.])at (?:async )?(?:(?:new )?[^\s()]+(?: \[as [^\]\s]+\])? \()?(?:node:[\w/.-]+|(?:[^\s()/\\]*[/\\])*[^\s()/\\:]*${JS_EXT}):\d+:\d+\)?`,
  ),
  p(STACK, 'python-traceback', 'a Python traceback', String.raw`Traceback \(most recent call last\):?`),
  p(STACK, 'python-frame', 'a Python stack frame', String.raw`(?<![\w])File "[^"\n]{1,1000}", line \d+, in [^\s,]+`),
  p(
    STACK,
    'java-frame',
    'a Java/Kotlin stack frame',
    String.raw`(?<![\w$.])at (?:[\w.$@-]+/)?(?:[\w$]+\.)+[\w$<>]+\((?:[\w$.-]+\.(?:java|kt|scala|groovy|clj)(?::\d+)?|Native Method|Unknown Source)\)`,
  ),
  p(STACK, 'java-thread', 'a Java uncaught-exception header', String.raw`Exception in thread "[^"\n]{0,200}"`),
  p(
    STACK,
    'java-caused-by',
    'a Java "Caused by" chain',
    String.raw`Caused by: (?:[a-z_][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b`,
  ),
  p(STACK, 'go-goroutine', 'a Go goroutine dump', String.raw`goroutine \d+ \[[^\]\n]{1,100}\]:`),
  p(STACK, 'go-frame', 'a Go stack frame', String.raw`${PATH_START}${TOKEN}*\.go:\d+ \+0x[0-9a-f]+`),
  p(STACK, 'go-panic', 'a Go panic', String.raw`(?:(?<![^\n])panic: (?=\S)|\bpanic: runtime error: )`),
  p(STACK, 'rust-panic', 'a Rust panic', String.raw`thread '[^'\n]{0,100}' panicked at `),
  p(
    STACK,
    'dotnet-frame',
    'a .NET stack frame',
    String.raw`(?<![\w$.])at (?:[\w$\x60<>\[\],]+\.)+[\w$\x60<>|]+\([^()\n]{0,300}\) in (?:[A-Za-z]:)?[^:\n]{1,300}:line \d+`,
  ),
  p(
    STACK,
    'dotnet-exception',
    'a .NET exception type',
    String.raw`(?<![\w.])System\.(?:[A-Z]\w*\.)*[A-Z]\w*Exception\b|--- End of (?:inner exception )?stack trace`,
  ),
  p(STACK, 'ruby-frame', 'a Ruby stack frame', String.raw`${PATH_START}${TOKEN}*\.(?:rb|rake|erb):\d+:in\b`),
  p(
    STACK,
    'php-frame',
    'a PHP stack frame',
    String.raw`#\d+ (?:[A-Za-z]:)?[^\s(]{0,300}\.php\(\d+\): |#\d+ \{main\}|\bin (?:[A-Za-z]:)?[^\s:]{1,300}\.php(?: on line |:)\d+`,
  ),
  // File system paths.
  p(PATH, 'unix-path', 'an absolute file path', String.raw`${PATH_START}(?<core>/(?:${ROOTS})(?:/${SEG}+)+)(?::\d+){0,2}`),
  p(
    PATH,
    'source-path',
    'the path of a source file',
    String.raw`${PATH_START}(?<core>(?:/${SEG}+){2,}(?<=\.(?:${SRC_EXT})))(?![\w@+~%$#!-])(?::\d+){0,2}`,
  ),
  p(
    PATH,
    'windows-path',
    'a Windows file path',
    String.raw`${PATH_START}(?<core>[A-Za-z]:(?:\\{1,2}|/)(?:${SEG}+(?: ${SEG}+)*(?:\\{1,2}|/))*${SEG}+)(?::\d+){0,2}`,
  ),
  p(PATH, 'unc-path', 'a Windows network path', String.raw`${PATH_START}\\\\[\w.$-]+\\[\w.$-]+(?:\\${SEG}+)*`),
  // Private and internal addresses.
  p(
    ADDR,
    'private-ipv4',
    'a private IPv4 address',
    String.raw`(?<![\w.-])(?<!\b[Vv]ersion[ :=]{1,2})(?<core>(?:10\.${OCT}|192\.168|172\.(?:1[6-9]|2\d|3[01])|169\.254|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7]))\.${OCT}\.${OCT})(?![\w-]|\.\d)${PORT}`,
  ),
  p(
    ADDR,
    'private-ipv6',
    'a private or link-local IPv6 address',
    String.raw`(?<![\w:.])(?<core>(?:f[cd][0-9a-f]{2}|fe[89ab][0-9a-f])${V6_TAIL})(?![\w:.])(?:%[\w.-]+)?`,
    'i',
  ),
  // Internal hostnames and connection strings.
  p(
    HOST,
    'internal-hostname',
    'an internal hostname',
    String.raw`(?<![\w.-])(?<core>(?:[a-z0-9_][a-z0-9_-]*\.)+(?:internal|localdomain|local|corp|lan|intranet|home\.arpa))(?![\w-]|\.[\w-])${PORT}`,
    'i',
  ),
  p(
    HOST,
    'connection-string',
    'a connection string',
    String.raw`(?<![\w+.:-])(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|kafka|nats|memcached|cassandra|clickhouse|couchdb|neo4j(?:\+s)?|bolt|ldaps?|mqtts?|zookeeper|oracle)://[^\s"'<>]{1,500}`,
    'i',
  ),
  p(HOST, 'jdbc-url', 'a JDBC connection string', String.raw`(?<![\w.-])jdbc:[a-z]\w*:[^\s"'<>]{1,500}`, 'i'),
  p(
    HOST,
    'ado-connection-string',
    'a database connection string',
    String.raw`(?<!\w)(?:Server|Data Source|Host)=[^;\n"'=]{1,200};[^\n"']{0,400}?(?:Database|Initial Catalog|User ID|UID|Password|Pwd)=[^;\n"']*(?:; ?[\w ]{1,40}=[^;\n"']*)*`,
    'i',
  ),
];

/** Drops trailing sentence punctuation and unbalanced closing brackets from a match. */
function trimmedLength(match: string): number {
  const open = { ')': 0, ']': 0 };
  const close = { ')': 0, ']': 0 };
  for (const c of match) {
    if (c === '(') open[')']++;
    else if (c === '[') open[']']++;
    else if (c === ')' || c === ']') close[c]++;
  }
  let end = match.length;
  for (;;) {
    const c = match[end - 1];
    if (c === '.' || c === ',' || c === ';' || c === '!' || c === '?') end--;
    else if ((c === ')' || c === ']') && close[c] > open[c]) {
      close[c]--;
      end--;
    } else return end;
  }
}

export const isPathLike = (s: string): boolean => s.length > 2 && /^(?:\/|[A-Za-z]:[\\/])[^\s]/.test(s);

const LEADING_QUOTES = /^["'\x60\u2018\u201c]+/;
const TRAILING_QUOTES = /["'\x60\u2019\u201d]+$/;

/** A token without the quotes around it and the sentence punctuation after it: `"/srv/x".` is /srv/x. */
export function bare(token: string): string {
  let t = token.replace(LEADING_QUOTES, '');
  for (;;) {
    const unquoted = t.replace(TRAILING_QUOTES, '');
    const trimmed = unquoted.slice(0, trimmedLength(unquoted));
    if (trimmed === t) return t;
    t = trimmed;
  }
}

/**
 * Whether `core` is the client's own input (or what the session made known): inside a string it
 * sent, or a path under a path it sent. Both are compared bare, so a full stop or quotes around
 * either never make an echo look new.
 */
function echoed(core: string, sent: readonly string[], rule: LeakRuleId): boolean {
  const c = bare(core);
  if (c.length === 0) return false;
  return sent.some((s) => {
    if (s.includes(c)) return true;
    if (rule !== PATH) return false;
    const p = bare(s);
    if (!isPathLike(p) || !c.startsWith(p)) return false;
    const next = c[p.length];
    return next === undefined || next === '/' || next === '\\' || /[\\/]$/.test(p);
  });
}

/**
 * Every leak in `text`, ordered by position (longer first at a tie). Matches may overlap (a stack
 * frame holds a path): merge spans before replacing them. `sent`: strings the client sent; leaks
 * that merely echo them are skipped. `first`: only the first leak (what a rule reports), found
 * without reading past each pattern's first one. Pure; never throws on a well-formed pattern list.
 */
export function findLeaks(
  text: string,
  options: { patterns?: readonly LeakPattern[]; sent?: readonly string[]; first?: boolean } = {},
): Leak[] {
  const leaks: Leak[] = [];
  const sent = options.sent ?? [];
  for (const pat of options.patterns ?? LEAK_PATTERNS) {
    const re = pat.re.global ? pat.re : new RegExp(pat.re.source, `${pat.re.flags}g`);
    for (const m of text.matchAll(re)) {
      const length = trimmedLength(m[0]);
      if (length === 0 || m.index === undefined) continue;
      const match = m[0].slice(0, length);
      if (sent.length > 0 && echoed(m.groups?.core ?? match, sent, pat.rule)) continue;
      leaks.push({ rule: pat.rule, pattern: pat.name, label: pat.label, match, index: m.index, length });
      if (options.first) break;
    }
  }
  leaks.sort((a, b) => a.index - b.index || b.length - a.length);
  return options.first ? leaks.slice(0, 1) : leaks;
}
