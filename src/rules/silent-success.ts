// Results that read as a failure but do not set isError: the client and the model take them for
// success (R62).
import { asRecord, type BlockStart, excerpt, pointer, textBlocks } from './evidence.ts';
import { callRule, missingFromCatalogue, notFinal, TEXT_WINDOW } from './tool-calls.ts';
import type { ExchangeRule } from './types.ts';
import { ALL } from './versions.ts';

/**
 * Text that reads as a failure, judged on the first ~1 KB of a result's text. Patterns are anchored
 * at the start of the text or of a line wherever the words are common in ordinary output.
 */
export const SILENT_SUCCESS_PATTERNS: readonly RegExp[] = [
  // "Error: …", "Exception - …", "Fatal! …" at the start of a line
  /^[ \t]*(?:error|exception|fatal)\b[ \t]*(?:[:!]|-(?=\s))/im,
  // A named error at the start of a line: "TypeError: x is undefined", "java.io.IOException: …"
  /^[ \t]*(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception):/m,
  /\bTraceback \(most recent call last\)/,
  // "Failed to fetch …", "Failure: …"
  /^[ \t]*(?:failed|failure)\b/im,
  // "Request failed with status code 500", "Upload failed.", "Connection failed: …" (not "2 tests failed, 3 passed")
  /^[ \t]*(?!(?:no|none|nothing|zero|never|not)\b)(?:[A-Za-z][\w.'"`-]*[ \t]+){1,3}failed(?:[ \t]*[:.!]|[ \t]+(?:to|with|because|due)\b|[ \t]*$)/im,
  // Node.js system errors as Node reports them ("connect ECONNREFUSED …", "open '/x': ENOENT"), not code that tests for them
  /(?:^[ \t]*|\b(?:connect|open|read|write|spawn|getaddrinfo|stat|lstat|mkdir|scandir|unlink|rename|access)[ \t]+|:[ \t]*)E(?:NOENT|CONNREFUSED|ACCES|TIMEDOUT|CONNRESET|NOTFOUND|PERM|ADDRINUSE)\b/m,
  // "File not found", "User 'bob' not found: …"
  /^[ \t]*(?:[A-Za-z'"`][\w.'"`/-]*[ \t]+){0,3}not found\b/im,
  // "Invalid input: …", "Invalid API key"
  /^[ \t]*invalid\b/im,
  /^[ \t]*(?:permission denied|access denied|unauthori[sz]ed|forbidden)\b/im,
  // "Unable to connect …", "Could not resolve host …", "Cannot read properties of undefined" (start of the text only)
  /^\s*(?:unable to|could not|couldn't|cannot|can't)\s+(?!find any(?:thing)?\b)\w/i,
  // An HTTP error status line
  /^[ \t]*(?:HTTP\/\d(?:\.\d)?[ \t]+)?[45]\d\d[ \t]+(?:Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Request Timeout|Conflict|Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout)\b/im,
];

/** The first pattern the text matches, with the line it matched on; undefined when none does. */
export function failureMatch(text: string, patterns: readonly RegExp[] = SILENT_SUCCESS_PATTERNS): { pattern: RegExp; index: number; line: string } | undefined {
  for (const pattern of patterns) {
    const index = text.search(pattern); // `search` ignores `g` and lastIndex: no state carried over
    if (index < 0) continue;
    const lineStart = text.lastIndexOf('\n', index) + 1;
    const lineEnd = text.indexOf('\n', index);
    const line = text.slice(lineStart, lineEnd < 0 ? undefined : lineEnd);
    return { pattern, index: Math.max(index, lineStart), line: line.trim() || text.slice(index, index + 160) };
  }
  return undefined;
}

/** The index of the content block a position of `textBlocks(...).text` falls in. */
function blockAt(starts: readonly BlockStart[], position: number): number | undefined {
  let found: number | undefined;
  for (const s of starts) if (s.at <= position) found = s.index;
  return found;
}

/** The silent-success rule judging with `patterns` (a policy may add to the built-in ones, or replace them). */
export const silentSuccessRule = (patterns: readonly RegExp[]): ExchangeRule => callRule(
  'result',
  {
    id: 'silent-success',
    group: 'silent-success',
    severity: 'warning',
    versions: ALL,
    summary: 'A tools/call result reads as a failure but does not set isError: true',
    source: 'R62',
  },
  (s, answer) => {
    const result = asRecord(answer.result);
    if (!result || ('isError' in result && result.isError !== false) || notFinal(s, result)) return [];
    if (missingFromCatalogue(s) !== undefined) return []; // unknown-tool-as-result says it
    const { text, starts } = textBlocks(result, TEXT_WINDOW);
    const match = failureMatch(text, patterns);
    if (!match) return [];
    const block = blockAt(starts, match.index);
    return [
      {
        message: `tools/call ${JSON.stringify(s.request.tool ?? '?')} result reads as a failure (${excerpt(match.line, 80)}) but isError is not set`,
        pointer: block === undefined ? '/response/result/content' : pointer('response', 'result', 'content', block, 'text'),
        evidence: excerpt(match.line),
        fix: 'set "isError": true on a result that reports a failure, so the client and the model treat it as one',
      },
    ];
  },
);

export const silentSuccess: ExchangeRule = silentSuccessRule(SILENT_SUCCESS_PATTERNS);
