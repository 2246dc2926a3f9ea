// Which code: whether an error's code is one the session's version defines, and the one the spec
// asks for a missing resource.
import { codeRange, definedIn, definitionOf, isDefinedFor } from './code-ranges.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { atCode, codeRule, fixFor, MODERN_REJECTIONS } from './error-answers.ts';
import { errorMessage, type ErrorMessage, isLegacy, isModern } from './read.ts';
import type { ExchangeRule } from './types.ts';
import { ALL } from './versions.ts';

export const reservedCode: ExchangeRule = codeRule(
  {
    id: 'reserved-code',
    group: 'codes',
    severity: 'error',
    versions: ALL,
    summary: "An error code in JSON-RPC's reserved range (-32768..-32020) that the session's version does not define",
    source:
      'https://www.jsonrpc.org/specification#error_object, https://modelcontextprotocol.io/specification/2026-07-28/basic/index#error-codes',
  },
  (s, e, code) => {
    const range = codeRange(code);
    const at = atCode(e);
    if (range === 'reserved') {
      return [
        {
          ...at,
          message: `error code ${code} is reserved by JSON-RPC 2.0 (-32768..-32100) and defined by no spec`,
          fix: fixFor(code, s.version, s.status),
        },
      ];
    }
    // -32042 is retired-code's; the others are undefined for this version, or defined by another one.
    if (range !== 'spec-owned' || code === -32042 || s.version === undefined || isDefinedFor(code, s.version)) return [];
    // A modern-only server turning a legacy client away: its 400 carries the modern rejection.
    if (isLegacy(s.version) && MODERN_REJECTIONS.has(code) && (s.status ?? 0) >= 400) return [];
    const def = definitionOf(code);
    const what = def ? `is ${def.name}, defined only in ${definedIn(code)}, not in ${s.version}` : 'is defined by no version of the spec';
    if (isModern(s.version)) {
      return [
        {
          ...at,
          message: `error code ${code} ${what}: 2026-07-28 forbids emitting undefined codes in -32020..-32099`,
          fix: fixFor(code, s.version, s.status),
        },
      ];
    }
    return [
      {
        ...at,
        severity: 'warning',
        message: `error code ${code} ${what}; JSON-RPC 2.0 leaves -32000..-32099 to implementations, but MCP now owns -32020..-32099`,
        fix: fixFor(code, s.version, s.status),
      },
    ];
  },
);

export const legacyRangeCode: ExchangeRule = codeRule(
  {
    id: 'legacy-range-code',
    group: 'codes',
    severity: 'warning',
    versions: ALL,
    summary: 'An error code in the legacy implementation-defined range -32000..-32019, which new servers should not use',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#error-codes',
  },
  (s, e, code) => {
    // -32002 is resource not found where defined; where it is not, retired-code and resource-not-found-code judge it.
    if (codeRange(code) !== 'legacy' || code === -32002) return [];
    return [
      {
        message: `error code ${code} is in the legacy implementation-defined range -32000..-32019: clients must not assume a meaning for it`,
        ...atCode(e),
        fix: fixFor(code, s.version, s.status),
      },
    ];
  },
);

export const retiredCode: ExchangeRule = codeRule(
  {
    id: 'retired-code',
    group: 'codes',
    severity: 'error',
    versions: ALL.filter((v) => v !== '2025-11-25'),
    summary: "A code the session's version does not have: -32002 outside resources/read in 2026-07-28, -32042 outside 2025-11-25",
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#error-codes',
  },
  (s, e, code) => {
    if (s.version === undefined || isDefinedFor(code, s.version)) return [];
    if (code === -32002 && isModern(s.version) && s.request.method !== 'resources/read') {
      return [
        {
          ...atCode(e),
          message: `${s.request.method} was answered with -32002 (Resource not found), which 2026-07-28 retired and MUST NOT be emitted`,
          fix: 'answer with -32602 (Invalid params) for a missing resource or bad argument, -32603 for an internal failure',
        },
      ];
    }
    if (code === -32042) {
      return [
        {
          ...atCode(e),
          message: `${s.request.method} was answered with -32042 (URL elicitation required), which exists only in 2025-11-25, not in ${s.version}`,
          fix: isModern(s.version)
            ? 'ask for the URL elicitation with an input_required result (MRTR) instead of an error'
            : 'do not require URL elicitation from a client of this version: report the failure with -32603 or a tool result with isError',
        },
      ];
    }
    return [];
  },
);

const NOT_FOUND = /not found|no such|does not exist|unknown resource/i;

/** Whether the error's own words say the resource is missing (and not the method). */
const saysNotFound = (e: ErrorMessage): boolean => NOT_FOUND.test(errorMessage(e)) && !/method not found/i.test(errorMessage(e));

export const resourceNotFoundCode: ExchangeRule = codeRule(
  {
    id: 'resource-not-found-code',
    group: 'codes',
    severity: 'error',
    versions: ALL,
    summary: 'resources/read of a missing resource answered with the wrong code (-32602 from 2026-07-28, -32002 before)',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/server/resources#error-handling, https://modelcontextprotocol.io/specification/2025-11-25/server/resources#error-handling',
  },
  (s, e, code) => {
    if (s.request.method !== 'resources/read' || s.version === undefined) return [];
    const uri = asRecord(s.request.params)?.uri;
    const at = atCode(e);
    if (isModern(s.version)) {
      if (code === -32002) {
        return [
          {
            ...at,
            message: 'resources/read was answered with -32002, retired in 2026-07-28: a missing resource MUST be -32602',
            fix: `answer with -32602 (Invalid params), e.g. data { uri: ${JSON.stringify(typeof uri === 'string' ? excerpt(uri, 80) : 'the uri')} }`,
          },
        ];
      }
      if (code === -32602 || code === -32601 || MODERN_REJECTIONS.has(code) || !saysNotFound(e)) return [];
      return [
        {
          ...at,
          severity: 'warning',
          message: `resources/read says the resource was not found but answers ${code}: 2026-07-28 requires -32602`,
          fix: 'answer a missing resource with -32602 (Invalid params); keep -32603 for internal failures',
        },
      ];
    }
    if (code === -32002 || code === -32602 || code === -32601 || !saysNotFound(e)) return [];
    return [
      {
        ...at,
        severity: 'warning',
        message: `resources/read says the resource was not found but answers ${code}: ${s.version} asks for -32002 (Resource not found)`,
        fix: 'answer a missing resource with -32002 and data { uri } (a 2026-07-28 server uses -32602)',
      },
    ];
  },
);
