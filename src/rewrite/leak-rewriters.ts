// Rewriter for leaked internals in error text: stack traces, absolute paths, private
// addresses, internal hosts and connection strings. Where the leak rules look (error.message,
// every string of error.data; an isError result's text blocks, embedded resources' text and
// structuredContent strings), the leaked parts are replaced
// by the marker and the rest is kept readable. Only the patterns of the finding's rule are
// replaced: a policy may rewrite one kind of leak and only log another.
import { findLeaks, LEAK_PATTERNS, sentStrings, type Leak, type LeakPattern } from '../rules/leaks.ts';
import { asRecord } from '../codec/json-value.ts';
import { budget, walkStrings } from '../rules/walk.ts';
import type { Rewriter } from './types.ts';
import { defineRewriter, errorOf, resultOf } from './message.ts';

const LEAK_RULE_IDS = ['leaked-stack-trace', 'leaked-path', 'leaked-private-address', 'leaked-internal-host'] as const;

/** Stack patterns whose line is trace material (frames, "Traceback", "Caused by", a goroutine header): the line goes. */
const TRACE_LINE = new Set([
  'node-frame',
  'python-frame',
  'java-frame',
  'go-frame',
  'dotnet-frame',
  'ruby-frame',
  'php-frame',
  'python-traceback',
  'go-goroutine',
  'java-caused-by',
  'rust-panic',
]);
/** Stack patterns that prefix an otherwise readable line ("Exception in thread "main" java.lang.X: why"): only the match goes. */
const HEADER = new Set(['java-thread', 'go-panic', 'dotnet-exception']);

const isTrace = (l: Leak): boolean => TRACE_LINE.has(l.pattern) || (l.pattern === 'dotnet-exception' && l.match.startsWith('---'));
const isHeader = (l: Leak): boolean => HEADER.has(l.pattern) && !isTrace(l);

/** `text` with every leak span replaced by the marker; overlapping and touching spans are merged first. */
export function replaceSpans(text: string, leaks: readonly Leak[], marker: string): string {
  const spans = leaks.map((l) => [l.index, l.index + l.length] as [number, number]).sort((a, b) => a[0] - b[0] || b[1] - a[1]);
  let out = '';
  let at = 0;
  let open: [number, number] | undefined;
  for (const span of spans) {
    if (open && span[0] <= open[1]) open[1] = Math.max(open[1], span[1]);
    else {
      if (open) {
        out += text.slice(at, open[0]) + marker;
        at = open[1];
      }
      open = [span[0], span[1]];
    }
  }
  if (open) {
    out += text.slice(at, open[0]) + marker;
    at = open[1];
  }
  return out + text.slice(at);
}

interface Line {
  text: string;
  start: number;
}

function linesOf(text: string): Line[] {
  const lines: Line[] = [];
  const eol = /\r?\n|\r/g;
  let start = 0;
  for (let m = eol.exec(text); m !== null; m = eol.exec(text)) {
    lines.push({ text: text.slice(start, m.index), start });
    start = m.index + m[0].length;
  }
  lines.push({ text: text.slice(start), start });
  return lines;
}

/** A frame line no pattern names (no file location: "   at System.Linq.Enumerable.First()", "    at Array.forEach (<anonymous>)"). */
const FRAME_LIKE = /^[ \t]+at (?:async |new )?[^\s()]+ ?\(/;

/** A line that continues the trace above it: indented text ("    foo()" under a Python frame), "... 5 more". */
const CONTINUATION = /^(?:[ \t]+\S|[ \t]*\.\.\. \d+ (?:more|common frames omitted))/;

/**
 * A stack trace out of `text`: the lines from the first trace line to the last (and the indented
 * lines that continue it) give way to one marker; text before the first frame on its line is kept
 * ("Error: boom at f (/app/x.js:1:2)" → "Error: boom <marker>"), and so are the lines before and
 * after the trace ("TypeError: …" above Node frames, "ValueError: …" below a Python traceback),
 * with exception headers ("Exception in thread "main"") taken off them.
 */
export function redactStack(text: string, patterns: readonly LeakPattern[], sent: readonly string[], marker: string): string {
  const leaks = findLeaks(text, { patterns, sent });
  if (leaks.length === 0) return text;
  const lines = linesOf(text);
  const eol = /\r\n/.test(text) ? '\r\n' : /\r(?!\n)/.test(text) ? '\r' : '\n';
  // The leaks that start on each line (both lists are in order of position: one sweep).
  const byLine: Leak[][] = lines.map(() => []);
  let at = 0;
  for (const leak of [...leaks].sort((a, b) => a.index - b.index)) {
    while (at + 1 < lines.length && lines[at + 1]!.start <= leak.index) at++;
    byLine[at]!.push(leak);
  }
  let first = -1;
  let last = -1;
  let prefix = '';
  lines.forEach((line, i) => {
    const trace = byLine[i]!.filter(isTrace);
    if (trace.length === 0 && !FRAME_LIKE.test(line.text)) return;
    if (first < 0) {
      first = i;
      prefix = trace.length === 0 ? '' : line.text.slice(0, Math.min(...trace.map((l) => l.index)) - line.start).trimEnd();
    }
    last = i;
  });
  if (first < 0) return replaceSpans(text, leaks, marker);
  while (last + 1 < lines.length && CONTINUATION.test(lines[last + 1]!.text)) last++;
  const strip = (line: Line, i: number): string | undefined => {
    const headers = byLine[i]!.filter(isHeader);
    if (headers.length === 0) return line.text;
    let out = '';
    let pos = 0;
    for (const h of headers) {
      const from = h.index - line.start;
      if (from < pos) continue;
      out += line.text.slice(pos, from);
      pos = from + h.length;
      while (pos < line.text.length && /[:\s]/.test(line.text[pos]!)) pos++;
    }
    out = (out + line.text.slice(pos)).trimEnd();
    return out.trim() === '' ? undefined : out;
  };
  const kept = (from: number, to: number): string[] =>
    lines.slice(from, to).flatMap((line, k) => {
      const s = strip(line, from + k);
      return s === undefined ? [] : [s];
    });
  const out = [...kept(0, first), prefix === '' ? marker : `${prefix} ${marker}`, ...kept(last + 1, lines.length)].join(eol);
  // Whatever a line-based cut missed (a trace inside a line of other text) goes span by span.
  const rest = findLeaks(out, { patterns, sent });
  return rest.length === 0 ? out : replaceSpans(out, rest, marker);
}

/**
 * leaked-stack-trace, leaked-path, leaked-private-address, leaked-internal-host over a pattern list
 * (a policy may extend it, as it may for the rules).
 */
export function leakRewriter(patterns: readonly LeakPattern[] = LEAK_PATTERNS): Rewriter {
  return defineRewriter(LEAK_RULE_IDS, (message, { subject: s, finding, marker }) => {
    const rule = finding.rule;
    if (!message || s.request.from !== 'client') return undefined;
    const mine = patterns.filter((p) => p.rule === rule);
    const sent = sentStrings(s);
    const redact = (text: string): string =>
      rule === 'leaked-stack-trace'
        ? redactStack(text, mine, sent, marker)
        : replaceSpans(text, findLeaks(text, { patterns: mine, sent }), marker);
    let changed = false;
    const fix = (text: string): string => {
      const out = redact(text);
      if (out !== text) changed = true;
      return out;
    };
    // The same walk, within the same bounds, as the leak rules' (errorText): what they read, this
    // puts right; what they could not read is unreadable-response's to report.
    const b = budget();
    const error = errorOf(message);
    const result = resultOf(message);
    if (error) {
      if (typeof error.message === 'string') error.message = walkStrings(error.message, b, fix, { depth: 3, whole: true });
      if ('data' in error) error.data = walkStrings(error.data, b, fix, { depth: 3, whole: true });
    } else if (result?.isError === true) {
      // An isError result: the server's own, or one an earlier rewrite (silent-success) judged a
      // failure; a result that is not (still) isError is the tool's subject matter and is left.
      if (Array.isArray(result.content)) {
        for (let i = 0; i < result.content.length && b.nodes-- > 0 && b.cut === undefined; i++) {
          const block = asRecord(result.content[i]);
          if (block?.type === 'text' && typeof block.text === 'string')
            block.text = walkStrings(block.text, b, fix, { depth: 4, whole: true });
          const resource = block?.type === 'resource' ? asRecord(block.resource) : undefined;
          if (resource && typeof resource.text === 'string') resource.text = walkStrings(resource.text, b, fix, { depth: 5, whole: true });
        }
      }
      if (b.cut === undefined && 'structuredContent' in result)
        result.structuredContent = walkStrings(result.structuredContent, b, fix, { depth: 3, whole: true });
    }
    return changed ? { message } : undefined;
  });
}

export const LEAK_REWRITER: Rewriter = leakRewriter();
