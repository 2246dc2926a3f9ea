// Leaked internals in failure text: stack traces, absolute file paths, private addresses and
// internal hostnames or connection strings. They help attackers map the server and confuse the
// model that reads the error (the spec bars "internal system details that could aid attacks" from
// log messages: https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging#security).
//
// The definition: the leak rules judge what a server reveals of itself when something fails, and
// only that. Failure text is
//   - a JSON-RPC error: `error.message` and every string of `error.data` (any depth);
//   - an `isError: true` result: the text of its text blocks, the text of its embedded resources
//     (`{ type: "resource", resource: { text } }`), and every string of its `structuredContent`;
//   - a result silent-success judges a failure (it states that the call failed without setting
//     isError): the same places as an isError result. Under enforce.yaml silent-success sets
//     isError on it, and the leak rewriter then redacts it in the same rewrite.
// at most MAX_TEXT characters per response. The content of any other result is the tool's subject
// matter and is never judged: a ping's address, a file tool's paths, log lines, a code runner's
// traceback.
//
// Decisions (see also the tests):
// - Text is scanned after credentials are masked, so no password reaches message or evidence.
// - What the client sent itself is not a leak: a match found in a string of the request's params
//   (a path, URI or URL argument echoed back) is skipped, and so is a path under a path the
//   client sent (a directory it named). Nor is what the session made known before: a path, host
//   or address the client sent in an earlier request or its roots, or the server returned in a
//   success (known-values.ts). Only the session's own words, never guesses; compared without the
//   quotes and punctuation around them.
// - What a leak looks like (patterns, whole tokens, file URIs): leak-patterns.ts.
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { redactText } from '../redact/text.ts';
import { secretField } from '../redact/values.ts';
import { findLeaks, LEAK_PATTERNS, type Leak, type LeakPattern, type LeakRuleId } from './leak-patterns.ts';
import type { Echo, ExchangeRule, ExchangeSubject, Report, Rule } from './types.ts';
import { SILENT_SUCCESS_PATTERNS, silentFailure } from './silent-success.ts';
import { ALL } from './versions.ts';
import { boundedPointer, budget, type Cut, type Segment, WALK_BOUNDS, walkStrings } from './walk.ts';

export { findLeaks, LEAK_PATTERNS, type Leak, type LeakPattern, type LeakRuleId } from './leak-patterns.ts';

/** At most this many characters of error text are examined per response (past it: unreadable-response). */
export const MAX_TEXT = WALK_BOUNDS.text;
/**
 * At most this many characters of the client's params are read for the echo check. It only spares
 * the client's own words (a miss costs a false positive, never a missed leak), and its cost grows
 * with every match it is compared with, so it reads less than the error text.
 */
const SENT_TEXT = 64 * 1024;

// Linear like the leak patterns: anchored by lookbehinds, and the password part is bounded (it runs
// to the last `@` of the authority, so a password holding `@` is masked whole). JWTs are masked here
// before redactText sees them: its callback mishandles group-less patterns (see the report).
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
  return redactText(out);
}

export interface Place {
  /** Where, in words: "error.message". */
  where: string;
  pointer: string;
  /** The text as it came (cut to the text bound). */
  text: string;
  /** The text with credentials masked: what the patterns read. */
  masked: string;
}

/** The error text of a response, and what a bound left unread of it. */
export interface ErrorText {
  places: Place[];
  /** Why and where the walk stopped early (a JSON Pointer from the subject); undefined when all was read. */
  cut: { reason: Cut['reason']; pointer: string } | undefined;
}

const place = (where: string, path: Segment[], text: string): Place => ({
  where,
  pointer: boundedPointer(path),
  text,
  masked: redactCredentials(text),
});

/** The error text of a response, read once per response (the four leak rules and unreadable-response share it). */
const scans = new WeakMap<object, ErrorText>();
const NO_TEXT: ErrorText = Object.freeze({ places: [], cut: undefined }) as ErrorText;

/** Whether a result is one whose content is failure text: isError true, or `failed` (silent-success judged it a failure). */
const failureResult = (response: ExchangeSubject['response'], failed: boolean): Record<string, unknown> | undefined => {
  if (response?.kind !== 'result') return undefined;
  const result = asRecord(response.result);
  return result && (result.isError === true || failed) ? result : undefined;
};

/**
 * The failure text of a response: error message and data (every string, any key, in document
 * order), or a failure result's text blocks, embedded resources' text and structuredContent
 * strings, within the walk bounds shared by the message. `failed`: the response is a result
 * silent-success judges a failure (read like an isError result).
 */
export function errorText(response: ExchangeSubject['response'], failed = false): ErrorText {
  // Most answers hold no error text: they are not read, nor remembered.
  const result = failureResult(response, failed);
  if (!response || !(response.kind === 'error' || result)) return NO_TEXT;
  const cached = scans.get(response);
  if (cached) return cached;
  const b = budget();
  const places: Place[] = [];
  if (response.kind === 'error') {
    if (typeof response.message === 'string')
      walkStrings(response.message, b, (text, at) => void places.push(place('error.message', at(), text)), {
        path: ['response', 'error', 'message'],
      });
    walkStrings(response.data, b, (text, at) => void places.push(place('error.data', at(), text)), {
      path: ['response', 'error', 'data'],
      depth: 3,
    });
  } else if (result) {
    const content = result.content;
    const what = result.isError === true ? 'isError result' : 'failure result';
    if (Array.isArray(content)) {
      // Only text is failure text: each block is one value read, its text counts against the text bound.
      for (let i = 0; i < content.length && b.cut === undefined; i++) {
        if (b.nodes-- <= 0) b.cut = { reason: 'nodes', path: ['response', 'result', 'content', i] };
        const block = asRecord(content[i]);
        if (b.cut || !block) continue;
        if (block.type === 'text' && typeof block.text === 'string') {
          walkStrings(block.text, b, (text, at) => void places.push(place(`${what} text`, at(), text)), {
            path: ['response', 'result', 'content', i, 'text'],
          });
        } else if (block.type === 'resource' && typeof asRecord(block.resource)?.text === 'string') {
          walkStrings(asRecord(block.resource)!.text, b, (text, at) => void places.push(place(`${what} resource text`, at(), text)), {
            path: ['response', 'result', 'content', i, 'resource', 'text'],
          });
        }
      }
    }
    if (b.cut === undefined && 'structuredContent' in result) {
      walkStrings(result.structuredContent, b, (text, at) => void places.push(place(`${what} structuredContent`, at(), text)), {
        path: ['response', 'result', 'structuredContent'],
        depth: 3,
      });
    }
  }
  const out: ErrorText = { places, cut: b.cut && { reason: b.cut.reason, pointer: boundedPointer(b.cut.path) } };
  scans.set(response, out);
  return out;
}

/** An error page or text body that answered instead of JSON-RPC (its readable text: subjects.ts pageText) as failure text. */
function errorPageText(s: ExchangeSubject): ErrorText {
  const text = s.request.from === 'client' ? s.bodyProblem?.text : undefined;
  return text ? { places: [place('error page', ['response', 'body'], text)], cut: undefined } : NO_TEXT;
}

const sentCache = new WeakMap<object, { raw: string[]; masked?: string[] }>();

/** The strings of a request's params the echo check reads, with the key each is under. */
function paramStrings(params: unknown, visit: (text: string, key: Segment | undefined) => void): void {
  walkStrings(params, { nodes: WALK_BOUNDS.nodes, text: SENT_TEXT }, (text, at) => void visit(text, at().at(-1)), { depth: 2 });
}

/**
 * The strings a client sent in a request's params (a leak that merely echoes one is not a leak):
 * as sent, for the rewriter, which reads the text as sent; `masked`, for the rules, which read it
 * with credentials masked. In a replay, the leaks the capture's facts say merely echo the request.
 */
export function sentStrings(s: Pick<ExchangeSubject, 'request' | 'response' | 'facts' | 'session'>, masked = false): string[] {
  let entry = sentCache.get(s.request);
  if (!entry) {
    const raw: string[] = [];
    if (s.facts) for (const e of s.facts.echoes ?? []) raw.push(echoText(s.response?.value, e));
    else {
      paramStrings(s.request.params, (text) => void raw.push(text));
      // What the session made known before (rules/known-values.ts): masked when learnt.
      if (s.session.known) raw.push(...s.session.known);
    }
    entry = { raw };
    sentCache.set(s.request, entry);
  }
  if (!masked) return entry.raw;
  entry.masked ??= entry.raw.map(redactCredentials);
  return entry.masked;
}

/** Echoes a capture keeps at most per exchange. */
const MAX_ECHOES = 256;

/**
 * The leaks of `response` (the message as a capture keeps it: every string, any place) that merely
 * echo what the request's params sent or the session made `known`, as the rules judge them under `patterns`: the fact a
 * capture keeps in place of the params' text. It says only that this leak-shaped text (a path, an
 * address, a host, a trace) came from the client, never what else the client sent; an echo of a
 * value under a credential's name is not kept (a replay then calls it a leak).
 */
export function echoesOf(
  request: ExchangeSubject['request'],
  response: unknown,
  patterns: readonly LeakPattern[] = LEAK_PATTERNS,
  known: readonly string[] = [],
): Echo[] {
  const sent: string[] = [...known];
  paramStrings(request.params, (text, key) => {
    if (!secretField(key, text)) sent.push(redactCredentials(text));
  });
  const out: Echo[] = [];
  if (sent.length === 0) return out;
  walkStrings(response, budget(), (text, at) => {
    const masked = redactCredentials(text);
    const all = findLeaks(masked, { patterns });
    if (all.length === 0) return undefined;
    const leaks = new Set(findLeaks(masked, { patterns, sent }).map((l) => `${l.pattern}@${l.index}`));
    for (const l of all) {
      if (leaks.has(`${l.pattern}@${l.index}`) || out.length >= MAX_ECHOES) continue;
      // The rules read the text masked; the echo points into the text as kept (the same, unless masking moved it).
      const start = masked === text ? l.index : text.indexOf(l.match);
      if (start >= 0) out.push({ at: at(), start, end: start + l.length });
    }
    return undefined;
  });
  return out;
}

/** The text an echo points at in a response ('' when it points at none: a hand-made capture). */
function echoText(response: unknown, e: Echo): string {
  let v: unknown = response;
  for (const k of e.at) v = typeof v === 'object' && v !== null ? (v as Record<string | number, unknown>)[k] : undefined;
  return typeof v === 'string' ? v.slice(e.start, e.end) : '';
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
  'leaked-private-address': { severity: 'warning', summary: 'Error text carries a private or link-local IP address (loopback is none)' },
  'leaked-internal-host': { severity: 'warning', summary: 'Error text carries an internal hostname or a connection string' },
};

/**
 * The four leak rules over a pattern list (a policy may pass an extended one), and the
 * silent-success patterns that say which results without isError are failures (a policy's own).
 */
export function leakRules(
  patterns: readonly LeakPattern[] = LEAK_PATTERNS,
  silentPatterns: readonly RegExp[] = SILENT_SUCCESS_PATTERNS,
): ExchangeRule[] {
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
      source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging#security',
      check(s): Report[] {
        if (s.request.from !== 'client') return [];
        const failed =
          s.response?.kind === 'result' && asRecord(s.response.result)?.isError !== true && silentFailure(s, silentPatterns) !== undefined;
        const { places } = s.response ? errorText(s.response, failed) : errorPageText(s);
        if (places.length === 0) return [];
        const sent = sentStrings(s, true);
        for (const place of places) {
          const text = place.masked;
          const leak = findLeaks(text, { patterns: mine, sent, first: true })[0];
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
