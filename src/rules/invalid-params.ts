// Invalid params the spec names for a method: prompts/get of a prompt the server does not have
// (server/prompts#error-handling: "Invalid prompt name: -32602"), logging/setLevel with a level
// that is none of RFC 5424's eight (server/utilities/logging#error-handling: "Invalid log level:
// -32602") and a list request's cursor the server cannot read (server/utilities/pagination:
// "Invalid cursors SHOULD result in an error with code -32602"). All SHOULDs: a warning. The level
// is read from the request itself; a missing prompt and a bad cursor from the error's own words
// (the proxy keeps no prompt catalogue, nor the pages a cursor came from), so an error that does
// not say so is left alone. -32601 is left to the method rules (a server without the method).
import { asRecord } from '../codec/json-value.ts';
import { atCode, codeRule, MODERN_REJECTIONS } from './error-answers.ts';
import { excerpt } from '../redact/excerpt.ts';
import { errorMessage, isModern } from './read.ts';
import type { ExchangeRule, ExchangeSubject } from './types.ts';
import { ALL } from './versions.ts';

/** RFC 5424's levels, as MCP names them (R73). */
const LOG_LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);

/** The list methods that page (server/utilities/pagination). */
const PAGED: ReadonlySet<string> = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']);

/** An error's words saying the prompt it was asked for does not exist. */
const PROMPT_MISSING = /\b(?:not found|no such|does not exist|doesn't exist|unknown prompt|invalid prompt(?: name)?)\b/i;

/** Why a request's params are invalid as the spec names it, or undefined. */
function invalidBySpec(s: ExchangeSubject, message: string): string | undefined {
  const params = asRecord(s.request.params);
  // 2026-07-28 removed logging/setLevel: removed-method judges it there.
  if (s.request.method === 'logging/setLevel' && !isModern(s.version)) {
    const level = params?.level;
    if (typeof level === 'string' && LOG_LEVELS.has(level)) return undefined;
    return level === undefined ? 'no level was given' : `the level ${excerpt(level, 40)} is none of RFC 5424's eight`;
  }
  if (s.request.method === 'prompts/get' && PROMPT_MISSING.test(message) && !/method not found/i.test(message)) {
    const name = params?.name;
    return `the prompt${typeof name === 'string' ? ` ${excerpt(name, 80)}` : ''} does not exist, as the error says`;
  }
  if (PAGED.has(s.request.method) && typeof params?.cursor === 'string' && /\bcursor\b/i.test(message))
    return 'the server refused its cursor, as the error says';
  return undefined;
}

/** What a fix names, by method (a paged list: the cursor). */
const FIX_NAMES: Readonly<Record<string, string>> = {
  'logging/setLevel': 'the level, and the eight valid ones',
  'prompts/get': 'the prompt name',
};

export const invalidParamsCode: ExchangeRule = codeRule(
  {
    id: 'invalid-params-code',
    group: 'codes',
    severity: 'warning',
    versions: ALL,
    summary:
      'prompts/get of an unknown prompt, logging/setLevel with a level RFC 5424 does not define, or a list request whose cursor the server refused, answered with a code other than -32602',
    source:
      'https://modelcontextprotocol.io/specification/2025-11-25/server/prompts#error-handling, https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/logging#error-handling, https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/pagination#error-handling',
  },
  (s, e, code) => {
    if (code === -32602 || code === -32601 || MODERN_REJECTIONS.has(code)) return [];
    const why = invalidBySpec(s, errorMessage(e));
    if (!why) return [];
    return [
      {
        ...atCode(e),
        message: `${s.request.method}: ${why}, and the server answered ${code} instead of -32602 (Invalid params)`,
        fix: `answer invalid params with -32602 (Invalid params) and say which one: ${FIX_NAMES[s.request.method] ?? 'the cursor (invalid or expired)'}`,
      },
    ];
  },
);
