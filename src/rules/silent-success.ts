// silent-success: a tools/call result that states the call itself failed but does not set
// isError, so the client and the model take it for a success.
//
// The definition (a warning, and a heuristic: precision matters more than recall). The rule fires
// when a result without isError
//   1. is a failure statement and nothing else (failure-statement.ts): its text (text blocks
//      joined, TEXT_WINDOW characters from its first non-blank one, however much blank text comes
//      first) opens with a failure ("Error: …", "Failed to …", "Invalid API key", "Issue #12 not
//      found", a traceback, a JSON error envelope) and holds nothing else but the failure's stack
//      frames and advice ("Please try again later."). A failure line after other text is not one
//      (a log, a listing, quoted text): "anywhere" stops at the first non-blank character;
//   2. is about the call, not about what it was given or asked for: no string argument of the call
//      opens the statement (a phrase or an error name; a bare lower-case keyword such as an enum's
//      "error" quotes nothing) or reads as a failure itself (explain_error("ECONNREFUSED"),
//      translate("Fehler: …")), and no argument asks for failures (a search for "^Error:", a query
//      of `last_error`, `level:error`): then failures are the answer;
//   3. comes from a tool that does not work on what it is given: the tool's name, title and
//      description (from tools/list; the name alone when the session has not listed tools) name no
//      INPUT_TOOL work (validating, linting, verifying, auditing, diagnosing, explaining,
//      translating, reviewing, parsing; executing a code cell, running a program or snippet,
//      stdout/stderr, a sandbox or kernel; fetching a URL or page; logs or a journal): a
//      validator's "Invalid email address: …" is its verdict, a sandbox's "NameError: …" the
//      program's output, a fetch's {"message": "Not Found"} the page it fetched, a log tail's
//      one line a line of the log.
// A failure whose text (the statement and its detail) names the tool's own action is about the
// call whatever 2 and 3 say: "Failed to list workflow runs: Bad credentials" from
// list_workflow_runs, "Translation failed: quota exceeded" from translate_text, "Error executing
// tool create_invoice: …", a traceback through `in summarize` from summarize_url.
// So what a result reports about something else stays silent: a test run's counts, log lines, a
// code runner's program output, a fetched 404 page, a validator's "Invalid email address", search
// results, CI job lists, explanations of errors. A tool whose whole result can be one line of its
// subject's failure (a code runner that returns bare stderr, a log search that returns one line)
// is scoped off per tool in the policy.
//
// A policy's extra patterns (patterns.silentSuccess.add) judge the same statement, with the same
// exclusions. When the rule fires, the leak rules judge the result as failure text (leaks.ts).
import type { Tool } from '../exchange/catalogues.ts';
import { asRecord } from '../codec/json-value.ts';
import { type BlockStart, textBlocks } from '../mcp/content.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { FAILURE_PATTERNS, failureStatement, statementLine } from './failure-statement.ts';
import { answerOf } from './read.ts';
import { callRule, missingFromCatalogue, notFinal, TEXT_WINDOW, WHOLE_TEXT } from './tool-calls.ts';
import type { ExchangeRule, ExchangeSubject } from './types.ts';
import { ALL } from './versions.ts';

export { failureStatement, statementOf } from './failure-statement.ts';

/** The built-in failure statements (a policy may add to them, or replace them). */
export const SILENT_SUCCESS_PATTERNS: readonly RegExp[] = FAILURE_PATTERNS;

/**
 * Words of a tool's name, title or description that say its results are about what it is given:
 * it judges, explains or transforms it, or runs it as code and returns the program's output.
 */
export const INPUT_TOOL =
  /(?:^|[^a-z])(?:validat|lint|verif|audit|diagnos|explain|translat|review|pars(?:e|er|es|ing)\b|stdout|stderr|sandbox|interpreter|kernel|repl\b|(?:execut|run)\w* (?:an? |the )?(?:code|cell|snippet|script|program|notebook)|fetch\w* (?:an? |the )?(?:url|uri|page|web)|logs?\b|journal)/i;

/** A tool name's words: snake_case, kebab-case and camelCase split. */
const nameWords = (name: string): string => name.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_\-.]+/g, ' ');

/** Whether the tool's own words (name, title, description) say its results are about what it is given. */
export function worksOnItsInput(name: string | undefined, tool: Tool | undefined): boolean {
  return INPUT_TOOL.test(nameWords(name ?? '')) || INPUT_TOOL.test(tool?.title ?? '') || INPUT_TOOL.test(tool?.description ?? '');
}

/**
 * Whether a failure's text names the tool's own action: the tool's name, or its first word (the
 * verb of list_workflow_runs, translate_text, save_note; four letters or more) opening one of its
 * words ("list", "Translation", "save").
 */
export function namesItsAction(text: string, name: string | undefined): boolean {
  if (!name) return false;
  const statement = text.toLowerCase();
  if (statement.includes(name.toLowerCase())) return true;
  const verb = nameWords(name).trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  if (verb.length < 4) return false;
  const stem = verb.slice(0, 6);
  return statement.split(/[^a-z0-9]+/).some((w) => w.startsWith(stem));
}

/** The call's string arguments (top level and in top-level arrays), trimmed, bounded. */
function stringArguments(args: unknown): string[] {
  const found: string[] = [];
  const take = (v: unknown) => {
    if (typeof v === 'string' && v.trim().length >= 3 && found.length < 32) found.push(v.trim().slice(0, 512));
  };
  for (const v of Object.values(asRecord(args) ?? {})) {
    if (Array.isArray(v)) v.slice(0, 32).forEach(take);
    else take(v);
  }
  return found;
}

/** A bare lower-case word (an enum value such as `error`): it names a kind, it quotes no text. */
const KEYWORD = /^[a-z]+$/;

/** Words of an argument that ask for failures ("^Error:", "last_error", "level:error", "status: failed"). */
const ASKS_FOR_FAILURES = /(?:^|[^a-z])(?:error|fail|exception|crash|fatal|panic)/i;

/**
 * Whether the statement is about what the call was given or asked for: an argument opens it (a
 * phrase or an error name, not a bare keyword: get_message({type: "error"}) answering "Error: …"
 * quotes nothing), reads as a failure itself, or asks for failures.
 */
function aboutItsArguments(line: string, args: unknown): boolean {
  const statement = line.toLowerCase();
  return stringArguments(args).some(
    (a) =>
      ASKS_FOR_FAILURES.test(a) ||
      (!KEYWORD.test(a) && (statement.startsWith(a.toLowerCase()) || failureStatement(a.split('\n')[0] ?? '') !== undefined)),
  );
}

/**
 * Whether a tools/call result's statement line (whatever the patterns: the line a failure would be
 * read from) is about the call's arguments, as aboutItsArguments judges it: the fact a capture
 * keeps in place of the arguments' text.
 */
export function statementAboutArguments(s: ExchangeSubject): boolean {
  const result = asRecord(answerOf(s, 'result', 'tools/call')?.result);
  if (!result) return false;
  const { window, complete } = openingOf(result);
  const line = statementLine(window, complete);
  return line !== undefined && aboutItsArguments(line, asRecord(s.request.params)?.arguments);
}

/**
 * The window of a result's text a statement is read in: TEXT_WINDOW characters from its first
 * one that is not blank (blank text before a statement says nothing, so it is read past, however
 * long: the whole text is bounded by the audit limit); `lead`: where the window opens in `text`.
 */
function openingOf(result: Record<string, unknown>): {
  text: string;
  starts: readonly BlockStart[];
  lead: number;
  window: string;
  complete: boolean;
} {
  let { text, starts } = textBlocks(result, TEXT_WINDOW + 1);
  if (text.length > TEXT_WINDOW && /^\s/.test(text)) ({ text, starts } = textBlocks(result, WHOLE_TEXT));
  const lead = Math.max(0, text.search(/\S/));
  const opening = text.slice(lead, lead + TEXT_WINDOW + 1);
  return { text, starts, lead, window: opening.slice(0, TEXT_WINDOW), complete: opening.length <= TEXT_WINDOW };
}

/** The index of the content block a position of `textBlocks(...).text` falls in. */
function blockAt(starts: readonly BlockStart[], position: number): number | undefined {
  let found: number | undefined;
  for (const s of starts) if (s.at <= position) found = s.index;
  return found;
}

/** A failure statement a result holds, and the content block it is in. */
export interface SilentFailure {
  line: string;
  block: number | undefined;
}

/**
 * The failure a tools/call result states without setting isError, with the content block it is
 * in; undefined when the subject is not such a result (the rule's judgement, shared with the leak
 * rules so that a result judged a failure is judged as failure text).
 */
export function silentFailure(s: ExchangeSubject, patterns: readonly RegExp[] = SILENT_SUCCESS_PATTERNS): SilentFailure | undefined {
  const answer = answerOf(s, 'result', 'tools/call');
  const result = asRecord(answer?.result);
  if (!result || ('isError' in result && result.isError !== false) || notFinal(s, result)) return undefined;
  if (missingFromCatalogue(s) !== undefined) return undefined; // unknown-tool-as-result says it
  // silent-success and the four leak rules ask about the same subject: its text is read once.
  const memo = (s as Memoised)[JUDGED];
  if (memo?.patterns === patterns) return memo.found;
  const found = statedFailure(s, result, patterns);
  Object.defineProperty(s, JUDGED, { value: { patterns, found }, writable: true, configurable: true });
  return found;
}

/** What silentFailure found, kept on the subject under a hidden key (never enumerated, copied or logged). */
const JUDGED = Symbol('silentFailure');
type Memoised = ExchangeSubject & { [JUDGED]?: { patterns: readonly RegExp[]; found: SilentFailure | undefined } };

/** The failure a tools/call result's text states, when it is about the call (see the definition above). */
function statedFailure(s: ExchangeSubject, result: Record<string, unknown>, patterns: readonly RegExp[]): SilentFailure | undefined {
  const { starts, lead, window, complete } = openingOf(result);
  const statement = failureStatement(window, patterns, complete);
  if (!statement) return undefined;
  const name = s.request.tool;
  const found = { line: statement.line, block: blockAt(starts, lead + statement.index) };
  if (namesItsAction(window, name)) return found;
  // A replay reads what the live proxy found of the arguments; the capture does not keep their text.
  if (s.facts ? s.facts.aboutArguments === true : aboutItsArguments(statement.line, asRecord(s.request.params)?.arguments))
    return undefined;
  if (worksOnItsInput(name, name === undefined ? undefined : s.session.tools.get(name))) return undefined;
  return found;
}

/** The silent-success rule judging with `patterns` (a policy may add to the built-in ones, or replace them). */
export const silentSuccessRule = (patterns: readonly RegExp[]): ExchangeRule =>
  callRule(
    'result',
    {
      id: 'silent-success',
      group: 'silent-success',
      severity: 'warning',
      versions: ALL,
      summary: 'A tools/call result reads as a failure but does not set isError: true',
      source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling',
    },
    (s) => {
      const failure = silentFailure(s, patterns);
      if (!failure) return [];
      return [
        {
          message: `tools/call ${JSON.stringify(s.request.tool ?? '?')} result states a failure (${excerpt(failure.line, 80)}) but isError is not set`,
          pointer:
            failure.block === undefined ? '/response/result/content' : pointer('response', 'result', 'content', failure.block, 'text'),
          evidence: excerpt(failure.line),
          fix: 'set "isError": true on a result that reports a failure, so the client and the model treat it as one',
        },
      ];
    },
  );

export const silentSuccess: ExchangeRule = silentSuccessRule(SILENT_SUCCESS_PATTERNS);
