// Leaked internals in error text: stack traces, absolute file paths, private addresses and
// internal hostnames or connection strings. They help attackers map the server and confuse the
// model that reads the error (R73: no exploitable internal detail; the brief lists them).
//
// Where: `error.message` and the strings of `error.data` (any depth) of a JSON-RPC error, and the
// text blocks of an `isError: true` result; at most MAX_TEXT characters per response. A result
// that is not an error is never judged: tools legitimately return paths and hosts.
//
// Decisions (see also the tests):
// - Text is scanned after credentials are masked, so no password reaches message or evidence.
// - What the client sent itself is not a leak: a match found in a string of the request's params
//   (a path, URI or URL argument echoed back) is skipped, and so is a path under a path the
//   client sent (a directory it named). Only the client's own words, never guesses.
// - What a leak looks like (patterns, whole tokens, file URIs): leak-patterns.ts.
import { asRecord, excerpt, pointer, redactSecrets } from './evidence.ts';
import { findLeaks, LEAK_PATTERNS, type Leak, type LeakPattern, type LeakRuleId } from './leak-patterns.ts';
import type { ExchangeRule, ExchangeSubject, Report, Rule } from './types.ts';
import { ALL } from './versions.ts';

export { findLeaks, LEAK_PATTERNS, type Leak, type LeakPattern, type LeakRuleId } from './leak-patterns.ts';

/** At most this many characters of error text are examined per response. */
export const MAX_TEXT = 16 * 1024;
const MAX_NODES = 2000;
const MAX_DEPTH = 32;

// Linear like the leak patterns: anchored by lookbehinds, and the password part is bounded (it runs
// to the last `@` of the authority, so a password holding `@` is masked whole). JWTs are masked here
// before redactSecrets sees them: its callback mishandles group-less patterns (see the report).
const CREDENTIALS: Array<[RegExp, string]> = [
  [/(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, '[REDACTED]'], // JWT
  [/(?<![\w+.-])([a-z][\w+.-]*:\/\/[^\s/@:"'<>]*:)[^\s/?#"'<>]{0,256}@/gi, '$1[REDACTED]@'], // scheme://user:password@
  [/(?<![\w.-])(jdbc:oracle:\w+:[^\s/@"']{0,256})\/[^\s"'<>]{0,256}@/gi, '$1/[REDACTED]@'], // jdbc:oracle:thin:user/password@
  [/(?<!\w)((?:pwd|passwd|password)\s*=\s*)[^;\s"'&]+/gi, '$1[REDACTED]'],
];

/** Masks credentials, including passwords inside connection strings. */
export function redactCredentials(text: string): string {
  let out = text;
  for (const [re, to] of CREDENTIALS) out = out.replace(re, to);
  return redactSecrets(out);
}

interface Place {
  /** Where, in words: "error.message". */
  where: string;
  pointer: string;
  text: string;
}

/** Strings under `value` (depth-first, in order), within the node, depth and character budgets. */
function strings(value: unknown, budget: { chars: number; nodes: number }, path: Array<string | number> = []): Array<{ path: Array<string | number>; text: string }> {
  const out: Array<{ path: Array<string | number>; text: string }> = [];
  const stack: Array<{ v: unknown; path: Array<string | number> }> = [{ v: value, path }];
  while (stack.length > 0 && budget.chars > 0 && budget.nodes-- > 0) {
    const { v, path: at } = stack.pop()!;
    if (typeof v === 'string') {
      if (v.length > 0) out.push({ path: at, text: v.slice(0, budget.chars) });
      budget.chars -= Math.min(v.length, budget.chars);
    } else if (typeof v === 'object' && v !== null && at.length - path.length < MAX_DEPTH) {
      // At most as many children as nodes are left, pushed in reverse so they pop in order.
      const children: Array<{ v: unknown; path: Array<string | number> }> = [];
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length && children.length < budget.nodes; i++) children.push({ v: v[i], path: [...at, i] });
      } else {
        for (const k in v) {
          if (children.length >= budget.nodes) break;
          if (Object.hasOwn(v, k)) children.push({ v: (v as Record<string, unknown>)[k], path: [...at, k] });
        }
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
    }
  }
  return out;
}

/** The error text of a response: error message and data, or an isError result's text blocks. */
export function errorText(response: ExchangeSubject['response']): Place[] {
  const budget = { chars: MAX_TEXT, nodes: MAX_NODES };
  const places: Place[] = [];
  if (response?.kind === 'error') {
    if (typeof response.message === 'string') {
      places.push({ where: 'error.message', pointer: '/response/error/message', text: response.message.slice(0, budget.chars) });
      budget.chars -= Math.min(response.message.length, budget.chars);
    }
    for (const s of strings(response.data, budget)) places.push({ where: 'error.data', pointer: `/response/error/data${pointer(...s.path)}`, text: s.text });
  } else if (response?.kind === 'result' && asRecord(response.result)?.isError === true) {
    const content = asRecord(response.result)?.content;
    if (!Array.isArray(content)) return places;
    for (let i = 0; i < content.length && i < MAX_NODES && budget.chars > 0; i++) {
      const block = asRecord(content[i]);
      if (block?.type !== 'text' || typeof block.text !== 'string') continue;
      places.push({ where: 'isError result text', pointer: `/response/result/content/${i}/text`, text: block.text.slice(0, budget.chars) });
      budget.chars -= Math.min(block.text.length, budget.chars);
    }
  }
  return places;
}

/** A short redacted excerpt around a leak: some context before, the leaked part, a little after. */
function evidenceOf(text: string, leak: Leak): string {
  const start = Math.max(0, leak.index - 30);
  const end = Math.min(text.length, leak.index + leak.length + 30);
  return excerpt(`${start > 0 ? '…' : ''}${text.slice(start, end)}${end < text.length ? '…' : ''}`, 160);
}

const FIX: Record<LeakRuleId, string> = {
  'leaked-stack-trace':
    'keep stack traces in the server log; send a short message saying what failed and what the caller can do, without code locations',
  'leaked-path':
    'keep absolute paths in the server log; name files by what the client knows (a resource URI, a path relative to a root it shared) or not at all',
  'leaked-private-address':
    'name the failing dependency by its role ("the database is unreachable"), not by its address; keep addresses in the server log',
  'leaked-internal-host':
    'name the failing dependency by its role, not by hostname or connection string (it may carry credentials); keep those in the server log',
};

const INFO: Record<LeakRuleId, { severity: 'error' | 'warning'; summary: string }> = {
  'leaked-stack-trace': { severity: 'error', summary: 'Error text carries a stack trace (JS, Python, Java, Go, .NET, Ruby, PHP, Rust)' },
  'leaked-path': { severity: 'warning', summary: 'Error text carries an absolute file system path' },
  'leaked-private-address': { severity: 'warning', summary: 'Error text carries a private, loopback or link-local IP address' },
  'leaked-internal-host': { severity: 'warning', summary: 'Error text carries an internal hostname or a connection string' },
};

/** The four leak rules over a pattern list (a policy may pass an extended one). */
export function leakRules(patterns: readonly LeakPattern[] = LEAK_PATTERNS): ExchangeRule[] {
  return (Object.keys(INFO) as LeakRuleId[]).map((id) => {
    const mine = patterns.filter((x) => x.rule === id);
    return {
      id,
      group: 'leaks',
      severity: INFO[id].severity,
      versions: ALL,
      party: 'server',
      subject: 'exchange',
      summary: INFO[id].summary,
      source: 'R73, brief',
      check(s): Report[] {
        if (s.request.from !== 'client') return [];
        const places = errorText(s.response);
        if (places.length === 0) return [];
        const sent = strings(s.request.params, { chars: MAX_TEXT, nodes: MAX_NODES }).map((x) => redactCredentials(x.text));
        for (const place of places) {
          const text = redactCredentials(place.text);
          const leak = findLeaks(text, { patterns: mine, sent })[0];
          if (!leak) continue;
          const what = s.request.tool ? `${s.request.method} (${s.request.tool})` : s.request.method;
          return [
            {
              message: `${what}: ${place.where} contains ${leak.label}`,
              pointer: place.pointer,
              evidence: evidenceOf(text, leak),
              fix: FIX[id],
            },
          ];
        }
        return [];
      },
    };
  });
}

export const LEAK_RULES: readonly Rule[] = leakRules();
