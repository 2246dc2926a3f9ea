// Arguments that fail a tool's inputSchema: from 2025-11-25 they are tool execution errors
// (isError) the model can read and correct, so the error must name what is wrong.
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { textBlocks } from '../mcp/content.ts';
import { unescapeSegment } from '../codec/json-pointer.ts';
import { namesBackendFailure } from './backend-failure.ts';
import { type Answer, answerOf, integerCode } from './read.ts';
import { type ArgumentError, mentions, validateArguments } from './tool-arguments.ts';
import { callRule, UNRELATED_CODES, WHOLE_TEXT } from './tool-calls.ts';
import type { ExchangeRule, ExchangeSubject, Report, RuleInfo } from './types.ts';
import { ALL, where } from './versions.ts';

/** The arguments of a call, when they have the shape CallToolRequest allows (an object, or none). */
function callArguments(s: ExchangeSubject): { args: Record<string, unknown> } | undefined {
  const params = asRecord(s.request.params);
  if (!params) return undefined;
  if (params.arguments === undefined) return { args: {} };
  const args = asRecord(params.arguments);
  return args ? { args } : undefined;
}

/** The catalogued tool's inputSchema and the call's arguments, when the call has both. */
function schemaAndArguments(s: ExchangeSubject): { schema: unknown; args: Record<string, unknown> } | undefined {
  const tool = s.request.tool;
  const known = tool === undefined ? undefined : s.session.tools.get(tool);
  const call = callArguments(s);
  return known && call && { schema: known.inputSchema, args: call.args };
}

/** How a call's arguments fail its catalogued tool's inputSchema (undefined: they do not, or it cannot tell): the fact a capture keeps. */
export function argumentErrors(s: ExchangeSubject): ArgumentError[] | undefined {
  const input = schemaAndArguments(s);
  const verdict = input && validateArguments(input.schema, input.args, s.version, 'formats');
  return !verdict || verdict.valid || verdict.errors.length === 0 ? undefined : verdict.errors;
}

/** An error code that may be about the call's arguments (not a transport, version or parse rejection, not "method not found"). */
function argumentsCode(code: unknown): number | undefined {
  const n = integerCode(code);
  return n === undefined || UNRELATED_CODES.has(n) || n === -32601 ? undefined : n;
}

/** The versions whose input validation errors are tool execution errors (isError). */
const TOOL_ERROR_VERSIONS = where((v) => v.inputErrorsAreToolErrors);

/**
 * The inputSchema the rules below validate this exchange's arguments against, if they do: the
 * answer is an error that may be about the arguments (from 2025-11-25), or an isError result.
 * Coverage reads it: a schema the proxy cannot run leaves such an exchange not judged in full.
 */
export function inputSchemaRead(s: ExchangeSubject): unknown {
  const input = schemaAndArguments(s);
  if (!input) return undefined;
  const error = answerOf(s, 'error', 'tools/call');
  const reads = error
    ? s.version !== undefined && TOOL_ERROR_VERSIONS.includes(s.version) && argumentsCode(error.code) !== undefined
    : asRecord(answerOf(s, 'result', 'tools/call')?.result)?.isError === true;
  return reads ? input.schema : undefined;
}

/** The failed validation of a call to a catalogued tool, if its arguments fail the tool's inputSchema. */
function failedValidation(s: ExchangeSubject): { tool: string; errors: ArgumentError[] } | undefined {
  const tool = s.request.tool;
  if (tool === undefined) return undefined;
  // A replay reads the live proxy's verdict: the capture does not keep the arguments' values.
  const errors = s.facts ? s.facts.argumentErrors : argumentErrors(s);
  return errors && { tool, errors };
}

const describeErrors = (errors: readonly ArgumentError[], max = 3): string =>
  errors
    .slice(0, max)
    .map((e) => `${e.path || '/'} ${e.message}`)
    .join('; ') + (errors.length > max ? `; +${errors.length - max} more` : '');

const validationRule = <K extends 'result' | 'error'>(
  kind: K,
  r: Pick<RuleInfo, 'id' | 'versions' | 'summary'>,
  check: (s: ExchangeSubject, answer: Answer<K>) => Report[],
): ExchangeRule =>
  callRule(
    kind,
    {
      group: 'input-validation',
      severity: 'warning',
      source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling',
      ...r,
    },
    check,
  );

export const INPUT_VALIDATION_RULES: readonly ExchangeRule[] = [
  validationRule(
    'error',
    {
      id: 'input-validation-as-protocol-error',
      versions: TOOL_ERROR_VERSIONS,
      summary: "Arguments that fail a tool's inputSchema got a JSON-RPC error instead of an isError result the model can correct",
    },
    (s, e) => {
      const code = argumentsCode(e.code);
      if (code === undefined) return [];
      const failed = failedValidation(s);
      if (!failed) return [];
      return [
        {
          message:
            `tools/call ${JSON.stringify(failed.tool)} arguments fail its inputSchema (${describeErrors(failed.errors)}) and got JSON-RPC error ${code}: ` +
            'from 2025-11-25 input validation errors are tool execution errors (isError) the model can see and correct ' +
            '(the 2026-07-28 schema.ts InvalidParamsError still lists invalid tool arguments under -32602)',
          pointer: '/response/error',
          evidence: excerpt({ code, message: e.message }),
          fix: `answer with a result {"content": [{"type": "text", "text": ${JSON.stringify(describeErrors(failed.errors, 1))}}], "isError": true} naming the parameter and what is valid`,
        },
      ];
    },
  ),
  validationRule(
    'result',
    {
      id: 'vague-iserror',
      versions: ALL,
      summary: "Arguments failed the tool's inputSchema, and the isError result names none of the failing parameters",
    },
    (s, answer) => {
      const result = asRecord(answer.result);
      if (result?.isError !== true) return [];
      const failed = failedValidation(s);
      if (!failed) return [];
      const names = new Set<string>();
      for (const e of failed.errors) {
        if (e.param !== undefined) names.add(e.param);
        const leaf = unescapeSegment(e.path.split('/').pop() ?? '');
        if (leaf && !/^\d+$/.test(leaf)) names.add(leaf);
      }
      if (names.size === 0) return [];
      // The whole text: a name it gives anywhere is named (a window would call a long answer vague).
      const { text } = textBlocks(result, WHOLE_TEXT);
      for (const name of names) if (mentions(text, name)) return [];
      // A backend that failed is what is wrong: no argument the model could change would fix it.
      if (namesBackendFailure(text)) return [];
      return [
        {
          message: `isError result for ${JSON.stringify(failed.tool)} does not name what is wrong with its arguments (${describeErrors(failed.errors)})`,
          pointer: '/response/result/content',
          evidence: excerpt(text || result.content),
          fix: `name the parameter and say what is valid, e.g. ${JSON.stringify(describeErrors(failed.errors, 1))}`,
        },
      ];
    },
  ),
];
