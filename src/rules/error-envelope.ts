// The error object itself: an integer code, a string message, and the request's id.
import { versionInfo } from '../mcp/versions.ts';
import { excerpt } from '../redact/excerpt.ts';
import { answerError, atCode, idless } from './error-answers.ts';
import { integerCode } from './read.ts';
import type { ExchangeRule, ExchangeSubject, Report } from './types.ts';
import { ALL } from './versions.ts';

export const errorShape: ExchangeRule = {
  id: 'error-shape',
  group: 'framing',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: 'An error response whose error.code is not an integer or whose error.message is not a string',
  source: 'https://www.jsonrpc.org/specification#error_object',
  check(s): Report[] {
    const e = answerError(s);
    if (!e) return [];
    const out: Report[] = [];
    if (integerCode(e.code) === undefined) {
      out.push({
        message: `error.code is ${e.code === undefined ? 'missing' : `${typeof e.code} ${excerpt(e.code, 40)}`}, not an integer`,
        ...atCode(e),
        fix: 'send error.code as an integer JSON number (e.g. -32603 for an internal error, -32602 for invalid params)',
      });
    }
    if (typeof e.message !== 'string') {
      out.push({
        message: `error.message is ${e.message === undefined ? 'missing' : `a ${e.message === null ? 'null' : typeof e.message}`}, not a string`,
        pointer: '/response/error/message',
        evidence: excerpt(e.value.error),
        fix: 'send error.message as a string: one short sentence saying what went wrong (details go in error.data)',
      });
    }
    return out;
  },
};

/**
 * Whether an error with a null or missing id may answer this request as it is: a transport-level
 * rejection (an HTTP error status) may be id-less from 2025-03-26 on
 * (https://modelcontextprotocol.io/specification/2025-03-26/basic/transports#sending-messages-to-the-server);
 * on 2xx, and in 2024-11-05, the id is required. A rewrite keeps such an error's id as the server
 * sent it: it fills in the request's id only where error-id-null says it is missing.
 */
export function idlessAllowed(s: ExchangeSubject): boolean {
  return (s.status ?? 200) >= 400 && versionInfo(s.version)?.streamableHttp !== false;
}

export const errorIdNull: ExchangeRule = {
  id: 'error-id-null',
  group: 'framing',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: "An error response with a null or missing id although the request's id was readable",
  source:
    'https://www.jsonrpc.org/specification#response_object, https://modelcontextprotocol.io/specification/2026-07-28/basic/index#error-responses',
  check(s): Report[] {
    if (s.request.from !== 'client' || s.response) return [];
    const e = s.unmatched.find(idless);
    if (!e) return [];
    const status = s.status ?? 200;
    const how = e.id === null ? 'id null' : 'no id';
    const base = {
      pointer: '/response/id',
      evidence: excerpt(e.value),
      fix: `answer with the request's id (${excerpt(JSON.stringify(s.request.id), 60)}); an error may have a null${versionInfo(s.version)?.errorIdOptional ? ' or absent' : ''} id only when the request's id could not be read`,
    };
    if (status < 400) {
      return [
        {
          ...base,
          message: `${s.request.method} (id ${excerpt(JSON.stringify(s.request.id), 60)}) was answered with an error with ${how}: the client cannot match it`,
        },
      ];
    }
    // A 4xx/5xx body is a transport-level rejection, which may be id-less from 2025-03-26 on;
    // 2024-11-05 allows it nowhere, and the spec disagrees with itself on it (the schema requires an
    // error's id through 2025-06-18).
    if (idlessAllowed(s)) return [];
    return [
      {
        ...base,
        severity: 'warning',
        message: `${s.request.method} (id ${excerpt(JSON.stringify(s.request.id), 60)}) was rejected with HTTP ${status} and an error with ${how}; 2024-11-05 requires the id`,
      },
    ];
  },
};
