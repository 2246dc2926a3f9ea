// Requests a server must turn away, and how: a 2026-07-28 request without its required `_meta`
// (-32602), a tools/call that is no CallToolRequest (no tool name, arguments that are not an
// object: a protocol error, -32602, never a tool result). The client's side of the first is
// `missing-request-meta`; these judge the server's. (A cursor it cannot read: invalid-params.ts.)
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { atCode, legacyServer, MODERN_REJECTIONS } from './error-answers.ts';
import { answerRule, describeError, inBand, missingMeta } from './read.ts';
import type { ExchangeRule, ExchangeSubject } from './types.ts';
import { ALL, MODERN } from './versions.ts';

const INVALID_PARAMS = -32602;

/** Answers that are the server's own word on the request: in band, or a 400 (a 4xx/5xx else is the transport's). */
const ownWord = (s: ExchangeSubject): boolean => inBand(s) || s.status === 400;

export const missingMetaServed: ExchangeRule = {
  id: 'missing-meta-served',
  group: 'codes',
  severity: 'error',
  versions: MODERN,
  party: 'server',
  subject: 'exchange',
  summary: 'A 2026-07-28 request without its required _meta was served (a result) or refused with a code other than -32602',
  source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta',
  check(s) {
    if (s.request.from !== 'client' || legacyServer(s) || !s.response || !ownWord(s)) return [];
    const missing = missingMeta(s.request.params);
    if (missing.length === 0) return [];
    const lacks = `${s.request.method} lacked ${missing.join(' and ')} in params._meta`;
    const fix = 'refuse a request without its _meta with -32602 (Invalid params), on HTTP 400 over HTTP';
    if (s.response.kind === 'result')
      return [{ message: `${lacks} and was served anyway (a result)`, pointer: '/response/result', evidence: excerpt(missing), fix }];
    if (s.response.kind !== 'error') return [];
    const code = s.response.code;
    // Refusals the spec lets come first: a header or version the server checks before the body, an unknown method.
    if (code === INVALID_PARAMS || code === -32601 || (typeof code === 'number' && MODERN_REJECTIONS.has(code))) return [];
    return [{ ...atCode(s.response), message: `${lacks} and was refused with ${describeError(s.response)} instead of -32602`, fix }];
  },
};

/** Why tools/call params are no CallToolRequest's, if they are not. */
function notACall(params: unknown): string | undefined {
  const p = asRecord(params);
  if (!p) return 'it has no params object';
  if (typeof p.name !== 'string') return p.name === undefined ? 'it names no tool' : 'its tool name is not a string';
  if (p.arguments !== undefined && !asRecord(p.arguments)) return 'its arguments are not an object';
  return undefined;
}

export const malformedCallAnswered: ExchangeRule = answerRule(
  'result',
  'tools/call',
  {
    id: 'malformed-call-as-result',
    group: 'tools',
    severity: 'warning',
    versions: ALL,
    summary:
      'A tools/call that is no CallToolRequest (no tool name, arguments not an object) got a tool result instead of JSON-RPC error -32602',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling',
  },
  (s, answer) => {
    const why = notACall(s.request.params);
    if (why === undefined) return [];
    const isError = asRecord(answer.result)?.isError === true;
    return [
      {
        message: `tools/call was malformed (${why}) and got ${isError ? 'an isError result' : 'a result'}: a request that does not fit CallToolRequest is a protocol error`,
        pointer: '/response/result',
        evidence: excerpt(s.request.params ?? null),
        fix: 'answer a tools/call that is no CallToolRequest with JSON-RPC error -32602 (Invalid params); an isError result is for a tool that ran',
      },
    ];
  },
);

export const REQUEST_REJECTION_RULES: readonly ExchangeRule[] = [missingMetaServed, malformedCallAnswered];
