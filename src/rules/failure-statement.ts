// Whether a text IS a failure statement: what silent-success (silent-success.ts) reads in a
// tools/call result's text. Pure functions of the text; what the tool and its arguments say about
// it is judged in silent-success.ts.
//
// A text is a failure statement when it says a failure and nothing else besides the failure's own
// detail:
//   1. its STATEMENT (first non-blank line) begins with a failure (FAILURE_PATTERNS, each anchored
//      at the start of the line): "Error: …", "TypeError: …", "Failed to …", "Upload failed.",
//      "ENOENT: …", "File not found", "Invalid API key", "Unable to …", "503 Service Unavailable",
//      "Sorry, something went wrong …", "An error occurred while …", "Authentication expired",
//      and localized equivalents ("Erreur : …", "Fehler beim …", "…に失敗しました");
//      or the text is a traceback ("Traceback (most recent call last):", indented frames) whose
//      last line names the exception (that line is the statement); or the whole text is a JSON
//      error envelope ({"error": "rate limit exceeded", "retryAfterSeconds": 60},
//      {"message": "Validation Failed", "errors": […]}, {"status": "error", "message": "…"});
//   2. the statement is not a log or report line (a leading timestamp, "[ERROR] …", an upper-case
//      level or test status word followed by text: "ERROR Error: …", "FAILED tests/x.py::t - …";
//      `level=`), a tally ("Failed: 0, Passed: 42", "3 tests failed"), a question or an
//      explanation ("… means …", "… usually indicates …");
//   3. every other line is the failure's own detail: a stack frame ("    at f (x.js:1:2)",
//      '  File "x.py", line 3', "Caused by: …"), its reason or advice ("Reason: …", "Please try
//      again later.", "Check …").
// Anything else around the statement (more records, headers, an exit code, a paragraph) makes the
// text a report about something: log lines, a fetched page, a linter's findings, search results.

import { isObject } from '../codec/json-value.ts';

const SYSTEM_ERRORS =
  'E(?:NOENT|CONNREFUSED|ACCES|TIMEDOUT|CONNRESET|NOTFOUND|PERM|ADDRINUSE|HOSTUNREACH|NETUNREACH|PIPE|EXIST|ISDIR|NOTDIR|MFILE|NOSPC)';
const SYSCALLS = 'connect|open|read|write|spawn|getaddrinfo|stat|lstat|mkdir|scandir|unlink|rename|access|opendir|rmdir|listen|bind';

/**
 * Failure statements, each tested against the statement line only (so `^` is its start). A policy
 * may add its own; they are compiled with the `im` flags.
 */
export const FAILURE_PATTERNS: readonly RegExp[] = [
  // "Error: …", "Exception - …", "Fatal! …", "Fatal error: …"
  /^(?:error|exception|fatal(?: error)?)[ \t]*(?:[:!]|-(?=\s))/i,
  // A named error: "TypeError: x is undefined", "java.io.IOException: …", Python's repr "HTTPError('401 …')"
  /^(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception)(?::|\(['"])/,
  // "An error occurred while …", "Error executing tool x: …", "Exception occurred: …"
  /^(?:an? )?(?:(?:unexpected|internal|unknown) )?(?:error|exception)(?: has)? (?:occurred|occured|happened|was (?:raised|thrown|encountered))\b/i,
  /^(?:error|exception) (?:while|when|during|executing|calling|querying|fetching|retrieving|processing|reading|writing|creating|updating|deleting|sending|connecting|loading|saving|getting|running|invoking|contacting|uploading|downloading)\b/i,
  // By shape, whatever the verb: "Error searching libraries: TypeError: fetch failed", "Error
  // listing pods: connect ECONNREFUSED …": "Error <verb>ing …:" then an exception's name or a
  // system error (the verb list above misses most verbs; what follows the colon says failure).
  // The name must end its clause ("TypeError: …", "TypeError" alone): "Error handling: TypeError,
  // RangeError and more" is a title. (`\x28` is "(": test/unit/fast-path.property.test.ts strips
  // lookaheads that hold no bracket.)
  new RegExp(
    `^(?:[Ee]rror|[Ee]xception)[ \\t]+[a-z]+ing\\b[^\\n:]{0,120}:[ \\t]*(?:(?:[\\w$]+\\.)*[A-Z]\\w*(?:Error|Exception)(?=[:\\x28]|[ \\t]*$)|(?:(?:${SYSCALLS})[ \\t]+)?${SYSTEM_ERRORS}\\b)`,
  ),
  // "Failed to fetch …", "Failure: …"
  /^(?:failed|failure)\b/i,
  // "Request failed with status code 500", "Upload failed.", "Connection failed: …"
  /^(?!(?:no|none|nothing|zero|never|not)\b)(?:[A-Za-z][\w.'"`-]*[ \t]+){1,3}failed(?:[ \t]*[:.!]|[ \t]+(?:to|with|because|due)\b|[ \t]*$)/i,
  // Node.js system errors as Node reports them: "ENOENT: …", "connect ECONNREFUSED …", "open '/x': ENOENT"
  new RegExp(`^(?:${SYSTEM_ERRORS}[ \\t]*[:,]|(?:${SYSCALLS})[ \\t]+${SYSTEM_ERRORS}\\b|[^\\n]{0,200}?:[ \\t]*${SYSTEM_ERRORS}\\b)`),
  // "File not found", "User 'bob' not found: …", "Issue #9999 not found", "Not found"
  /^(?:[A-Za-z'"`#][\w.'"`/#-]*[ \t]+){0,3}not found\b/i,
  // "Invalid input: …", "Invalid API key"
  /^invalid\b/i,
  /^(?:permission denied|access denied|unauthori[sz]ed|forbidden)\b/i,
  // "Unable to connect …", "Could not resolve host …", "Cannot read properties of undefined"
  /^(?:unable to|could not|couldn't|cannot|can't)[ \t]+(?!find any(?:thing)?\b)\w/i,
  // "Deployment could not be started.", "The note cannot be saved"
  /^(?:[A-Za-z][\w'"`-]*[ \t]+){1,4}(?:could not|couldn't|cannot|can't) be\b/i,
  // "Something went wrong", "I'm sorry, but I was unable to …", "Oops! The upload failed"
  /^(?:something went wrong|(?:(?:i'm|i am|we're|we are)[ \t]+)?(?:sorry|oops|whoops|unfortunately)\b[^\n]{0,80}?\b(?:went wrong|failed|could not|couldn't|cannot|can't|unable|error))\b/i,
  // "Search is temporarily unavailable.", "Authentication expired. Please re-authorize …"
  /^(?!<)[^\n]{0,60}\btemporarily unavailable\b/i,
  // "Request to availability provider timed out after 30000ms"
  /^(?:the )?(?:request|connection|call|operation|query|upload|download)\b[^\n]{0,60}?\btimed out\b/i,
  /^(?:your |the )?(?:authentication|authori[sz]ation|session|access token|token|credentials|api key)(?: has)? (?:expired|been revoked)\b/i,
  // An HTTP error status line
  /^(?:HTTP\/\d(?:\.\d)?[ \t]+)?[45]\d\d[ \t]+(?:Bad Request|Unauthorized|Forbidden|Not Found|Method Not Allowed|Request Timeout|Conflict|Too Many Requests|Internal Server Error|Bad Gateway|Service Unavailable|Gateway Timeout)\b/i,
  // Localized: "Erreur : …", "Fehler: …", "Ошибка: …", "错误：…", "エラー: …"; "Fehler beim …", "Erro ao …", "Error al …"
  /^(?:erreur|fehler|errore|erro|fout|fel|virhe|błąd|chyba|hata|ошибка|помилка|错误|錯誤|エラー|오류)[ \t]*[:：!]/i,
  /^(?:fehler (?:beim|bei der|während)|erro (?:ao|na|no|durante)|error (?:al|en la|durante)|erreur (?:lors|pendant)|errore (?:durante|nel))\b/i,
  // Localized apologies and "failed": "Lo sentimos, no pudimos …", "Désolé, …", "Leider konnte …", "…に失敗しました", "发送邮件失败："
  /^(?:(?:lo sentimos|désolé|desolé|entschuldigung|leider|desculpe|infelizmente|purtroppo)\b[^\n]{0,80}?\b(?:no (?:pudimos|se pudo|fue posible)|impossible|konnte|nicht möglich|não (?:foi|conseguimos)|non è stato)|[^\n]{1,40}?(?:に失敗しました|できませんでした)|[^\n]{1,20}?(?:失败|失敗)[：:，,。])/i,
  // Localized "could not": "Impossible de …", "No se pudo …", "Não foi possível …", "Konnte nicht …", "Не удалось …", "无法…"
  /^(?:impossible d(?:e\b|')|échec\b|echec\b|no se (?:pudo|puede)\b|não (?:foi|é) possível\b|konnte nicht\b|kann nicht\b|non è (?:stato )?possibile\b|nie można\b|не удалось|无法|無法)/i,
];

/**
 * Words one of FAILURE_PATTERNS needs (each pattern holds one of them, in the same case-blind
 * spelling): a line without any cannot match, so most lines are read once instead of by every
 * pattern. test/unit/fast-path.property.test.ts proves it on generated and recorded lines.
 */
export const FAILURE_WORDS = new RegExp(
  [
    "error|exception|fatal|fail|invalid|not found|denied|unauthori|forbidden|unable|could|cannot|can't",
    'went wrong|sorry|oops|unfortunately|unavailable|timed out|expired|revoked',
    'bad request|not allowed|request timeout|conflict|too many requests|bad gateway|gateway timeout',
    SYSTEM_ERRORS,
    'erreur|fehler|erro|fout|fel|virhe|błąd|chyba|hata|ошибка|помилка|错误|錯誤|エラー|오류',
    'lo sentimos|désolé|desolé|entschuldigung|leider|desculpe|infelizmente|purtroppo|失敗|失败|できませんでした',
    'impossible|échec|echec|no se|não|konnte|kann nicht|non è|nie można|не удалось|无法|無法',
  ].join('|'),
  'i',
);
const BUILT_IN: ReadonlySet<RegExp> = new Set(FAILURE_PATTERNS);

/** A pattern list's own patterns (a policy's additions), tried even on a line without FAILURE_WORDS; kept as long as its policy. */
const ownPatterns = new WeakMap<readonly RegExp[], readonly RegExp[]>();
function ownOf(patterns: readonly RegExp[]): readonly RegExp[] {
  let own = ownPatterns.get(patterns);
  if (!own) ownPatterns.set(patterns, (own = patterns.filter((p) => !BUILT_IN.has(p))));
  return own;
}

// Log levels, and the status words test runners open a report line with ("FAILED tests/x.py::t - …", "FAIL\tpkg 0.2s").
const LEVEL =
  'TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|SEVERE|PANIC|ALERT|EMERG|FAILED|FAIL|PASSED|PASS|SKIPPED|XFAIL|XPASS';
/** A log or report line: a leading timestamp, a bracketed level, an upper-case level or status word followed by text, `level=`. */
const LOG_LINE = new RegExp(
  `^(?:[[(]?\\d{4}-\\d\\d-\\d\\d|[[(]?\\d\\d:\\d\\d:\\d\\d|[[(]?(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\\d|\\d{10,13}\\b|[[(<](?:${LEVEL})[\\])>]|(?:${LEVEL})[ \\t]+(?![-:!])\\S|(?:level|lvl|severity)=)`,
);
/** A tally: a count beside failed, passed, errors, skipped ... ("Failed: 0", "3 tests failed", "errors=2"). */
const TALLY =
  /\b(?:failed|failures?|failing|errors?|passed|passing|skipped|succeeded|successes|warnings?|pending|broken|todo)[ \t]*[:=][ \t]*\d|\b(?![45]\d\d[ \t]+(?:client|server)[ \t]+error)\d+[ \t]+(?:[\w-]+[ \t]+)?(?:failed|failures?|failing|errors?|passed|passing|skipped|broken)\b/i;
/** A question or an explanation ("ENOENT means …", "This error usually indicates …"). */
const EXPLANATION =
  /\?[ \t]*$|\b(?:means?|meaning|indicates?|usually|typically|refers to|happens when|occurs when|is (?:raised|thrown|returned|caused) (?:when|by|if))\b/i;

/** A line of the failure's own trace: a JavaScript, Python, Java, .NET or Go frame, or a chained cause. */
const FRAME =
  /^(?:[ \t]+(?:at[ \t]+\S|File[ \t]+"|\.\.\.[ \t]*\d+[ \t]+more\b)|Caused by:|During handling of the above exception|The above exception was the direct cause|goroutine \d+ \[|[ \t]+\/\S+\.go:\d+)/;
/** Advice or the reason that closes a failure message ("Please try again later.", "Reason: the token lacks a scope."). */
const ADVICE =
  /^(?:(?:please|try again|retry|check|make sure|ensure|verify|contact|ask|see|refer to|bitte|veuillez|merci de|por favor|prière de|si prega)\b|(?:reason|cause)[ \t]*:|пожалуйста|请|請|もう一度)/i;
/** The first line of a Python traceback. */
const TRACEBACK = /^Traceback \(most recent call last\):[ \t]*$/;
/** The line that ends a traceback: the exception and its message ("requests.exceptions.HTTPError: 401 …"). */
const EXCEPTION_LINE = /^(?:[\w$]+\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning)\b/;

/** Keys an error envelope may have ({"error": "…", "retryAfterSeconds": 60}, {"message": "…", "errors": […], "status": "422"}). */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  'error',
  'errors',
  'error_description',
  'errorDescription',
  'error_code',
  'errorCode',
  'message',
  'code',
  'status',
  'statusCode',
  'status_code',
  'success',
  'ok',
  'detail',
  'details',
  'reason',
  'type',
  'title',
  'hint',
  'retryAfter',
  'retryAfterSeconds',
  'retry_after',
  'requestId',
  'request_id',
  'documentation_url',
]);
/** A status an error envelope states: "error", "fail(ed)", or an HTTP error code (422, "503"). */
const ERROR_STATUS = /^(?:error|fail(?:ed|ure)?|[45]\d\d)$/i;

/** What a failure statement is: the line that states it, where that line starts, and what recognised it. */
export interface FailureStatement {
  line: string;
  index: number;
  /** The failure pattern the line matched; absent for a JSON error envelope. */
  pattern?: RegExp;
}

/** The statement of a text: its first non-blank line, and where that line starts. */
export function statementOf(text: string): { line: string; index: number } | undefined {
  const m = /[^\s]/.exec(text);
  if (!m) return undefined;
  const end = text.indexOf('\n', m.index);
  return {
    line: text
      .slice(m.index, end < 0 ? undefined : end)
      .replace(/\r$/, '')
      .trimEnd(),
    index: m.index,
  };
}

/** Whether a statement line reads as a failure (a pattern matches; not a log line, tally or explanation). */
function failurePattern(line: string, patterns: readonly RegExp[]): RegExp | undefined {
  // `search` ignores `g` and lastIndex: no state carried over. The patterns first: most lines
  // match none, and the three exclusions then need not run (the answer is the same either way).
  const tried = FAILURE_WORDS.test(line) ? patterns : ownOf(patterns);
  const pattern = tried.find((p) => line.search(p) >= 0);
  if (!pattern || LOG_LINE.test(line) || TALLY.test(line) || EXPLANATION.test(line)) return undefined;
  return pattern;
}

/** The lines of `text` after position `from`, without a last line cut by the text window. */
function linesAfter(text: string, from: number, complete: boolean): string[] {
  const end = text.indexOf('\n', from);
  if (end < 0) return [];
  const rest = text.slice(end + 1).split('\n');
  if (!complete) rest.pop();
  return rest.map((l) => l.replace(/\r$/, ''));
}

/** A traceback's statement: its last non-blank line, when every line between is indented (a frame or its code). */
function tracebackStatement(text: string, first: { index: number }, complete: boolean): { line: string; index: number } | undefined {
  const lines = linesAfter(text, first.index, complete);
  while (lines.length > 0 && lines.at(-1)?.trim() === '') lines.pop();
  const last = lines.pop();
  if (last === undefined || !EXCEPTION_LINE.test(last) || !lines.every((l) => l.trim() === '' || /^[ \t]/.test(l) || FRAME.test(l)))
    return undefined;
  return { line: last.trimEnd(), index: text.lastIndexOf(last) };
}

/**
 * A JSON error envelope: nothing but envelope keys, stating an error: a non-empty `error`, a
 * non-empty `errors` list, an error `status` (or statusCode) with a message, or `success`/`ok` false.
 */
function errorEnvelope(text: string, complete: boolean): boolean {
  const trimmed = text.trim();
  if (!complete || !trimmed.startsWith('{') || !trimmed.endsWith('}')) return false;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return false;
  }
  if (!isObject(value)) return false;
  if (!Object.keys(value).every((k) => ENVELOPE_KEYS.has(k))) return false;
  const { error, errors, status, statusCode, message, success, ok } = value;
  const said = typeof message === 'string' && message.trim() !== '';
  return (
    (typeof error === 'string' && error.trim() !== '') ||
    isObject(error) ||
    (Array.isArray(errors) && errors.length > 0) ||
    (said && [status, statusCode].some((v) => (typeof v === 'string' || typeof v === 'number') && ERROR_STATUS.test(String(v)))) ||
    (said && (success === false || ok === false))
  );
}

/**
 * The line failureStatement judges, whatever the patterns: a traceback's exception line, else the
 * text's first line (what silent-success compares the call's arguments with).
 */
export function statementLine(text: string, complete = true): string | undefined {
  const first = statementOf(text);
  if (!first || !TRACEBACK.test(first.line)) return first?.line;
  return tracebackStatement(text, first, complete)?.line;
}

/**
 * Whether `text` is a failure statement (see the definition above); `complete` says the text was
 * not cut by the reader's window (a cut JSON text is no envelope, a cut last line is not judged).
 */
export function failureStatement(
  text: string,
  patterns: readonly RegExp[] = FAILURE_PATTERNS,
  complete = true,
): FailureStatement | undefined {
  const first = statementOf(text);
  if (!first) return undefined;
  if (TRACEBACK.test(first.line)) {
    const statement = tracebackStatement(text, first, complete);
    const pattern =
      statement && (failurePattern(statement.line, patterns) ?? (EXCEPTION_LINE.test(statement.line) ? EXCEPTION_LINE : undefined));
    return statement && pattern && { ...statement, pattern };
  }
  if (errorEnvelope(text, complete)) return first;
  const pattern = failurePattern(first.line, patterns);
  if (!pattern) return undefined;
  const detailOnly = linesAfter(text, first.index, complete).every((l) => l.trim() === '' || FRAME.test(l) || ADVICE.test(l.trim()));
  return detailOnly ? { ...first, pattern } : undefined;
}
