// Calls to tools the server does not have: they must get JSON-RPC error -32602, not a result or
// another code.
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { textBlocks } from '../mcp/content.ts';
import { type Answer, integerCode } from './read.ts';
import { callRule, missingFromCatalogue, notFinal, TEXT_WINDOW, UNRELATED_CODES, WHOLE_TEXT } from './tool-calls.ts';
import type { UnknownToolAnswer } from '../config/types.ts';
import type { ExchangeRule, ExchangeSubject, Report, RuleInfo } from './types.ts';
import { unusableBody } from './bodies.ts';
import { ALL } from './versions.ts';

const INVALID_PARAMS = -32602;

// The phrases that say a tool does not exist. A name is what MCP allows in one (2025-11-25:
// letters, digits, `_`, `-`, `.`; `/` and `:` seen in the wild), and every quantifier is bounded:
// a 4 MiB text is scanned in one linear pass.
const LEAD = String.raw`\b(?:unknown tool|no such tool|tool not found)\b`;
const NAME = String.raw`["'\`]?([\w./:-]{1,128})["'\`]?`;
const NAMED_BEFORE = String.raw`\btool\s{1,8}${NAME}\s{1,8}(?:(?:(?:was|is)\s{1,8})?not\s{1,8}found\b|does\s{0,8}(?:not|n't)\s{1,8}exist\b)`;

/** Text that clearly says the named tool does not exist. */
export const UNKNOWN_TOOL_TEXT = new RegExp(`${LEAD}|${NAMED_BEFORE}`, 'i');

/** The same phrases naming the tool ("Unknown tool: NAME", "Tool 'NAME' not found"): its name is a capture. */
const NAMED_UNKNOWN_TOOL = new RegExp(`${LEAD}[\\s:'"\`(]{0,4}${NAME}|${NAMED_BEFORE}`, 'gi');

/**
 * Whether a server's words say the tool `name` is unknown: such a phrase in the opening
 * TEXT_WINDOW characters (where it is the answer's own statement), or anywhere in the text
 * (bounded by the audit limit, the largest body the proxy parses) when it names that tool, so that
 * padding before "Unknown tool: NAME" hides nothing while a long text that merely mentions some
 * other unknown tool (a log, a listing) is not read as this call's answer.
 */
export function saysUnknown(words: string, name: string): boolean {
  if (UNKNOWN_TOOL_TEXT.test(words.slice(0, TEXT_WINDOW))) return true;
  for (const m of words.matchAll(NAMED_UNKNOWN_TOOL)) {
    const said = m[1] ?? m[2] ?? '';
    if (said === name || said.replace(/[.:]+$/, '') === name) return true;
  }
  return false;
}

type How = 'catalogue' | 'text';

/**
 * How the proxy knows the named tool does not exist: the complete catalogue lacks it, or (without
 * a complete catalogue) the server's own words say so.
 */
function unknownTool(s: ExchangeSubject, words: unknown): How | undefined {
  const name = s.request.tool;
  if (name === undefined) return undefined;
  if (s.session.toolsComplete) return s.session.tools.has(name) ? undefined : 'catalogue';
  if (s.session.tools.has(name)) return undefined;
  return typeof words === 'string' && saysUnknown(words, name) ? 'text' : undefined;
}

/** The finding's message: which tool, how the proxy knows it is unknown, and what came back. */
const named = (name: string, how: How, got: string): string =>
  `tools/call named ${JSON.stringify(name)}, ${how === 'catalogue' ? "which is not in the server's tools/list" : 'which the server itself calls unknown'}, and got ${got}`;

const fixFor = (name: string): string =>
  `answer with a JSON-RPC error {"code": -32602, "message": ${JSON.stringify(`Unknown tool: ${name}`)}}`;

/** The finding when the call named a tool the server does not have, by its catalogue or by its `words`; `got` is what came back instead. */
function unknownToolReport(s: ExchangeSubject, words: unknown, got: string, at: Pick<Report, 'pointer' | 'evidence'>): Report[] {
  const name = s.request.tool;
  const how = unknownTool(s, words);
  if (name === undefined || !how) return [];
  return [{ message: named(name, how, got), ...at, fix: fixFor(name) }];
}

const unknownToolRule = <K extends 'result' | 'error'>(
  kind: K,
  r: Pick<RuleInfo, 'id' | 'summary'>,
  check: (s: ExchangeSubject, answer: Answer<K>) => Report[],
): ExchangeRule =>
  callRule(
    kind,
    {
      group: 'unknown-tool',
      severity: 'error',
      versions: ALL,
      source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling',
      ...r,
    },
    check,
  );

/**
 * The unknown-tool rules expecting `answer` (UnknownToolAnswer, policy `answers.unknownTool`):
 * under `iserror` (SEP-2145), an isError result for an unknown tool is an answer, not a finding.
 */
export const unknownToolRules = (expected: UnknownToolAnswer): readonly ExchangeRule[] => [
  unknownToolRule(
    'result',
    {
      id: 'unknown-tool-as-iserror',
      summary: 'A tools/call for a tool the server does not have was answered with an isError result instead of JSON-RPC error -32602',
    },
    (s, answer) => {
      if (expected === 'iserror') return [];
      const result = asRecord(answer.result);
      const name = s.request.tool;
      if (result?.isError !== true || name === undefined || s.session.tools.has(name)) return [];
      // The whole text, read only for a tool the session does not know.
      const { text } = textBlocks(result, WHOLE_TEXT);
      return unknownToolReport(s, text, 'an isError result instead of a JSON-RPC error', {
        pointer: '/response/result/isError',
        evidence: excerpt(text || result),
      });
    },
  ),
  unknownToolRule(
    'result',
    {
      id: 'unknown-tool-as-result',
      summary: 'A tools/call for a tool missing from tools/list was answered with a plain result instead of JSON-RPC error -32602',
    },
    (s, answer) => {
      const result = asRecord(answer.result);
      const name = missingFromCatalogue(s);
      if (name === undefined || result?.isError === true || (result && notFinal(s, result))) return [];
      return [
        {
          message: named(name, 'catalogue', 'a result as if the tool had run'),
          pointer: '/response/result',
          evidence: excerpt(textBlocks(result, TEXT_WINDOW).text || answer.result),
          fix: fixFor(name),
        },
      ];
    },
  ),
  unknownToolRule(
    'error',
    {
      id: 'unknown-tool-wrong-code',
      summary: 'A tools/call for a tool the server does not have got a JSON-RPC error whose code is not -32602',
    },
    (s, e) => {
      const code = integerCode(e.code);
      if (code === undefined || code === INVALID_PARAMS || UNRELATED_CODES.has(code)) return [];
      const at = { pointer: '/response/error/code', evidence: excerpt({ code, message: e.message }) };
      return unknownToolReport(s, e.message, `JSON-RPC error ${code} instead of -32602 (invalid params)`, at);
    },
  ),
];

/**
 * A tools/call of a tool the complete catalogue lacks, answered with no JSON-RPC message at all
 * (an HTML page, an empty body, text): the body rules say the answer is unusable, this one says
 * what it should have been, so a rewrite of it as an unknown tool has its finding in the log. It
 * comes after the body rules in the catalogue (index.ts): the body rewriter puts it right.
 */
export const unknownToolUnanswered: ExchangeRule = {
  id: 'unknown-tool-unanswered',
  group: 'unknown-tool',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary:
    'A tools/call for a tool missing from tools/list was answered with no JSON-RPC message (an HTML page, an empty body, text) instead of error -32602',
  source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling',
  check(s): Report[] {
    const got = s.request.method === 'tools/call' ? unusableBody(s) : undefined;
    const name = got === undefined ? undefined : missingFromCatalogue(s);
    if (name === undefined) return [];
    return [
      {
        message: named(name, 'catalogue', `${got} instead of a JSON-RPC error`),
        pointer: '/response/body',
        evidence: s.bodyProblem!.excerpt,
        fix: fixFor(name),
      },
    ];
  },
};

export const UNKNOWN_TOOL_RULES: readonly ExchangeRule[] = unknownToolRules('spec');
