// silent-success (R62): a tools/call result that states the call itself failed but does not set
// isError, so the client and the model take it for a success.
//
// The definition (a warning, and a heuristic: precision matters more than recall). The rule judges
// one line, the STATEMENT: the first non-blank line of the result's text (its text blocks joined,
// first TEXT_WINDOW characters). It fires when the statement
//   1. begins with a failure statement about the operation (SILENT_SUCCESS_PATTERNS, each anchored
//      at the start of the line): "Error: …", "Exception: …", "Fatal! …", "TypeError: …",
//      "Failed to …", "Upload failed.", "Connection failed: …", "ENOENT: …", "connect ECONNREFUSED …",
//      "File not found", "Invalid API key", "Permission denied", "Unable to …", "Could not …",
//      "503 Service Unavailable", and localized equivalents ("Erreur : …", "Fehler: …", "Impossible de …");
//   2. is not a log line: no leading timestamp, bracketed level ("[ERROR] …"), upper-case level
//      word followed by text ("ERROR Error: connect …"), or `level=`;
//   3. is not a tally: no count beside failed/passed/errors/skipped ("Failed: 0, Passed: 42",
//      "3 tests failed");
//   4. is not a question or an explanation: it does not end with "?" and does not say "means",
//      "indicates", "usually", "is thrown when" ...
// So what a result reports about something else stays silent: a test run's counts, log lines, a
// code runner's program output (its sections come first: "exit code: 1", "stdout:", JSON), search
// results (they start with a file name or a count), a failure line that is not the first line,
// explanations of errors. A tool whose results open with its subject's failures (a code runner
// that returns bare stderr) is scoped off per tool in the policy.
//
// A policy's extra patterns (patterns.silentSuccess.add) judge the same statement, with the same
// exclusions. When the rule fires, the leak rules judge the result as failure text (leaks.ts).
import { asRecord, type BlockStart, excerpt, pointer, textBlocks } from './evidence.ts';
import { answerOf } from './read.ts';
import { callRule, missingFromCatalogue, notFinal, TEXT_WINDOW } from './tool-calls.ts';
import type { ExchangeRule, ExchangeSubject } from './types.ts';
import { ALL } from './versions.ts';

const SYSTEM_ERRORS = 'E(?:NOENT|CONNREFUSED|ACCES|TIMEDOUT|CONNRESET|NOTFOUND|PERM|ADDRINUSE|HOSTUNREACH|NETUNREACH|PIPE|EXIST|ISDIR|NOTDIR|MFILE|NOSPC)';
const SYSCALLS = 'connect|open|read|write|spawn|getaddrinfo|stat|lstat|mkdir|scandir|unlink|rename|access|opendir|rmdir|listen|bind';

/**
 * Failure statements, each tested against the statement line only (so `^` is its start). A policy
 * may add its own; they are compiled with the `im` flags.
 */
export const SILENT_SUCCESS_PATTERNS: readonly RegExp[] = [
  // "Error: …", "Exception - …", "Fatal! …", "Fatal error: …"
  /^(?:error|exception|fatal(?: error)?)[ \t]*(?:[:!]|-(?=\s))/i,
  // A named error: "TypeError: x is undefined", "java.io.IOException: …"
  /^(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception):/,
  // "Failed to fetch …", "Failure: …"
  /^(?:failed|failure)\b/i,
  // "Request failed with status code 500", "Upload failed.", "Connection failed: …"
  /^(?!(?:no|none|nothing|zero|never|not)\b)(?:[A-Za-z][\w.'"`-]*[ \t]+){1,3}failed(?:[ \t]*[:.!]|[ \t]+(?:to|with|because|due)\b|[ \t]*$)/i,
  // Node.js system errors as Node reports them: "ENOENT: …", "connect ECONNREFUSED …", "open '/x': ENOENT"
  new RegExp(`^(?:${SYSTEM_ERRORS}[ \\t]*[:,]|(?:${SYSCALLS})[ \\t]+${SYSTEM_ERRORS}\\b|[^\\n]{0,200}?:[ \\t]*${SYSTEM_ERRORS}\\b)`),
  // "File not found", "User 'bob' not found: …", "Not found"
  /^(?:[A-Za-z'"`][\w.'"`/-]*[ \t]+){0,3}not found\b/i,
  // "Invalid input: …", "Invalid API key"
  /^invalid\b/i,
  /^(?:permission denied|access denied|unauthori[sz]ed|forbidden)\b/i,
  // "Unable to connect …", "Could not resolve host …", "Cannot read properties of undefined"
  /^(?:unable to|could not|couldn't|cannot|can't)[ \t]+(?!find any(?:thing)?\b)\w/i,
  // An HTTP error status line
  /^(?:HTTP\/\d(?:\.\d)?[ \t]+)?[45]\d\d[ \t]+(?:Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Request Timeout|Conflict|Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout)\b/i,
  // Localized: "Erreur : …", "Fehler: …", "Ошибка: …", "错误：…", "エラー: …"
  /^(?:erreur|fehler|errore|erro|fout|fel|virhe|błąd|chyba|hata|ошибка|помилка|错误|錯誤|エラー|오류)[ \t]*[:：!]/i,
  // Localized "could not": "Impossible de …", "No se pudo …", "Não foi possível …", "Konnte nicht …", "Не удалось …", "无法…"
  /^(?:impossible d(?:e\b|')|échec\b|echec\b|no se (?:pudo|puede)\b|não (?:foi|é) possível\b|konnte nicht\b|kann nicht\b|non è (?:stato )?possibile\b|nie można\b|не удалось|无法|無法)/i,
];

const LEVEL = 'TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|PANIC|ALERT|EMERG';
/** A log line: a leading timestamp, a bracketed level, an upper-case level word followed by text, `level=`. */
const LOG_LINE = new RegExp(
  `^(?:[[(]?\\d{4}-\\d\\d-\\d\\d|[[(]?\\d\\d:\\d\\d:\\d\\d|[[(]?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\\d|\\d{10,13}\\b|[[(<](?:${LEVEL})[\\])>]|(?:${LEVEL})[ \\t]+(?![-:!])\\S|(?:level|lvl|severity)=)`,
);
/** A tally: a count beside failed, passed, errors, skipped ... ("Failed: 0", "3 tests failed", "errors=2"). */
const TALLY = /\b(?:failed|failures?|failing|errors?|passed|passing|skipped|succeeded|successes|warnings?|pending|broken|todo)[ \t]*[:=][ \t]*\d|\b\d+[ \t]+(?:[\w-]+[ \t]+)?(?:failed|failures?|failing|errors?|passed|passing|skipped|broken)\b/i;
/** A question or an explanation ("ENOENT means …", "This error usually indicates …"). */
const EXPLANATION = /\?[ \t]*$|\b(?:means?|meaning|indicates?|usually|typically|refers to|happens when|occurs when|is (?:raised|thrown|returned|caused) (?:when|by|if))\b/i;

/** The statement of a text: its first non-blank line, and where that line starts. */
export function statementOf(text: string): { line: string; index: number } | undefined {
  const m = /[^\s]/.exec(text);
  if (!m) return undefined;
  const lineStart = text.lastIndexOf('\n', m.index) + 1;
  const end = text.indexOf('\n', m.index);
  return { line: text.slice(m.index, end < 0 ? undefined : end).replace(/\r$/, '').trimEnd(), index: Math.max(lineStart, m.index) };
}

/**
 * Whether the text states a failure (see the definition above): the pattern its statement matches,
 * the statement, and where it starts; undefined when it does not.
 */
export function failureMatch(text: string, patterns: readonly RegExp[] = SILENT_SUCCESS_PATTERNS): { pattern: RegExp; index: number; line: string } | undefined {
  const statement = statementOf(text);
  if (!statement) return undefined;
  const { line, index } = statement;
  if (LOG_LINE.test(line) || TALLY.test(line) || EXPLANATION.test(line)) return undefined;
  // `search` ignores `g` and lastIndex: no state carried over.
  const pattern = patterns.find((p) => line.search(p) >= 0);
  return pattern && { pattern, index, line };
}

/** The index of the content block a position of `textBlocks(...).text` falls in. */
function blockAt(starts: readonly BlockStart[], position: number): number | undefined {
  let found: number | undefined;
  for (const s of starts) if (s.at <= position) found = s.index;
  return found;
}

/**
 * The failure a tools/call result states without setting isError, with the content block it is
 * in; undefined when the subject is not such a result (the rule's judgement, shared with the leak
 * rules so that a result judged a failure is judged as failure text).
 */
export function silentFailure(s: ExchangeSubject, patterns: readonly RegExp[] = SILENT_SUCCESS_PATTERNS): { line: string; block: number | undefined } | undefined {
  const answer = answerOf(s, 'result', 'tools/call');
  const result = asRecord(answer?.result);
  if (!result || ('isError' in result && result.isError !== false) || notFinal(s, result)) return undefined;
  if (missingFromCatalogue(s) !== undefined) return undefined; // unknown-tool-as-result says it
  const { text, starts } = textBlocks(result, TEXT_WINDOW);
  const match = failureMatch(text, patterns);
  return match && { line: match.line, block: blockAt(starts, match.index) };
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
  (s) => {
    const failure = silentFailure(s, patterns);
    if (!failure) return [];
    return [
      {
        message: `tools/call ${JSON.stringify(s.request.tool ?? '?')} result states a failure (${excerpt(failure.line, 80)}) but isError is not set`,
        pointer: failure.block === undefined ? '/response/result/content' : pointer('response', 'result', 'content', failure.block, 'text'),
        evidence: excerpt(failure.line),
        fix: 'set "isError": true on a result that reports a failure, so the client and the model treat it as one',
      },
    ];
  },
);

export const silentSuccess: ExchangeRule = silentSuccessRule(SILENT_SUCCESS_PATTERNS);
