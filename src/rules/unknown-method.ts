// Methods a server does not serve: they must get -32601 (Method not found), and a 2026-07-28
// server must serve server/discover.
import { capabilityFor, declarable, isUnknownMethod, methodsOf } from '../mcp/methods.ts';
import { excerpt } from '../redact/excerpt.ts';
import { atCode, codeRule, legacyServer, MODERN_REJECTIONS, probeAnswer } from './error-answers.ts';
import { answerRule, describeError, errorMessage, inBand, integerCode, isModern, missingMeta } from './read.ts';
import type { ExchangeRule } from './types.ts';
import { ALL, MODERN } from './versions.ts';

const NOT_IMPLEMENTED = /method not found|unknown method|not (supported|implemented)|unsupported/i;

// Judges only the error that answered the request by its id, not codeRule's id-less one: a
// transport rejection is not about the method.
export const unknownMethodWrongCode: ExchangeRule = answerRule(
  'error',
  undefined,
  {
    id: 'unknown-method-wrong-code',
    group: 'unknown-method',
    severity: 'error',
    versions: ALL,
    summary: 'A method the server does not implement (or whose capability it did not declare) answered with a code other than -32601',
    source:
      'https://www.jsonrpc.org/specification#error_object, https://modelcontextprotocol.io/specification/2026-07-28/schema#methodnotfounderror',
  },
  (s, e) => {
    const code = integerCode(e.code);
    if (probeAnswer(s, e) || code === undefined || code === -32601 || s.version === undefined) return [];
    const { method } = s.request;
    // Rejections a modern server makes before routing the method: headers, version, capabilities, _meta.
    if (isModern(s.version) && (MODERN_REJECTIONS.has(code) || (code === -32602 && missingMeta(s.request.params).length > 0))) return [];
    const spec = methodsOf(s.version)?.has(method) ?? false;
    const capability = capabilityFor(method);
    // A capability the version does not have (2024-11-05's completions): a server could not declare it.
    if (spec && capability && !declarable(capability, s.version)) return [];
    if (isUnknownMethod(method, s.version, s.session.serverCapabilities) !== true) return [];
    const text = errorMessage(e);
    const at = atCode(e);
    if (spec) {
      // Only 2026-07-28 says it outright (MethodNotFoundError); legacy versions imply it (a warning).
      return [
        {
          ...at,
          ...(isModern(s.version) ? {} : { severity: 'warning' as const }),
          message: `${method} needs the "${capability}" capability, which the server did not declare, and was answered with ${describeError(e)} instead of -32601`,
          fix: `answer a method of an undeclared capability with -32601 (Method not found)${isModern(s.version) ? ' and HTTP 404' : ''}, or declare "${capability}" and serve it`,
        },
      ];
    }
    // A method outside the version's list may be an extension the server implements: only its own words say otherwise.
    if (!NOT_IMPLEMENTED.test(text) || /version/i.test(text)) return [];
    return [
      {
        ...at,
        message: `${method} is not implemented (the error says "${excerpt(text, 80)}") but was answered with ${code} instead of -32601`,
        fix: `answer a method the server does not implement with -32601 (Method not found)${isModern(s.version) ? ' and HTTP 404' : ''}`,
      },
    ];
  },
);

/** A message that says nothing of its own: the code's standard name, or as little. */
const GENERIC = /^\s*(?:internal(?: server)? error|server error|unknown error|error|invalid request|bad request)\s*[.!]?\s*$/i;

// A method outside the version's list may be an extension the server serves, so unknown-method-
// wrong-code waits for the server's words. Two answers say little either way but are wrong for a
// method the server lacks: -32600 (the request was a valid Request object) and a bare -32603
// "Internal error". A warning, never rewritten: an extension that failed may mean it.
export const unknownMethodGenericError: ExchangeRule = answerRule(
  'error',
  undefined,
  {
    id: 'unknown-method-generic-error',
    group: 'unknown-method',
    severity: 'warning',
    versions: ALL,
    summary:
      'A method outside the version\'s list got -32600 or a bare -32603 "Internal error": a method the server does not implement is -32601',
    source:
      'https://www.jsonrpc.org/specification#error_object, https://modelcontextprotocol.io/specification/2026-07-28/schema#methodnotfounderror',
  },
  (s, e) => {
    const code = integerCode(e.code);
    if (probeAnswer(s, e) || s.version === undefined || !(inBand(s) || s.status === 400)) return [];
    if (methodsOf(s.version)?.has(s.request.method) ?? true) return [];
    const text = errorMessage(e);
    // Words that say the method is not implemented are unknown-method-wrong-code's.
    if (NOT_IMPLEMENTED.test(text) || !(code === -32600 || (code === -32603 && GENERIC.test(text)))) return [];
    return [
      {
        ...atCode(e),
        severity: 'warning',
        message: `${s.request.method} is no method of ${s.version} and was answered with ${describeError(e)}, which says nothing of the method: if the server does not implement it, that is -32601`,
        fix: `answer a method the server does not implement with -32601 (Method not found)${isModern(s.version) ? ' and HTTP 404' : ''}; an extension method that fails should say why`,
      },
    ];
  },
);

export const serverDiscoverMissing: ExchangeRule = codeRule(
  {
    id: 'server-discover-missing',
    group: 'lifecycle',
    severity: 'error',
    versions: MODERN,
    summary: 'server/discover answered with -32601: every 2026-07-28 server must implement it',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/discover',
  },
  (s, e, code) => {
    if (s.request.method !== 'server/discover' || code !== -32601 || legacyServer(s)) return [];
    return [
      {
        message: `server/discover was answered with ${describeError(e)}: 2026-07-28 servers MUST implement it`,
        ...atCode(e),
        fix: 'implement server/discover: return supportedVersions, capabilities, ttlMs and cacheScope (resultType "complete")',
      },
    ];
  },
);
