// JSON-RPC framing: a body that is not JSON gets -32700 with a null id, a client sends valid
// JSON-RPC 2.0 (no id on a notification), and a response is valid JSON-RPC 2.0.
import { excerpt, requestExcerpt } from '../redact/excerpt.ts';
import { answerRule, type ErrorMessage, messagePointer, messagesOf } from './read.ts';
import type { ExchangeRule, PostRule, PostSubject, Report, Rule } from './types.ts';
import { ALL } from './versions.ts';

const PROBLEM: Readonly<Record<string, string>> = {
  'not-json': 'not JSON',
  'not-utf8': 'not valid UTF-8',
  empty: 'empty',
  html: 'HTML or XML, not JSON',
};

export const problemOf = (s: PostSubject): string => (s.request.ok ? '' : (PROBLEM[s.request.problem] ?? s.request.problem));

export const PARSE_ERROR_FIX =
  'answer a body that does not parse with {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}} (HTTP 400)';

/**
 * Statuses that reject a POST before its body is read, for a reason of their own (authorization,
 * Origin or scope, session or endpoint, method, Accept, size, content type, rate): their JSON-RPC
 * error's code is about that reason, not about the body.
 */
const BEFORE_THE_BODY: ReadonlySet<number> = new Set([401, 403, 404, 405, 406, 413, 415, 429]);

/** Whether an HTTP answer's status may be the JSON-RPC layer's verdict on the body (any other, 5xx included). */
const judgesTheBody = (status: number | undefined): boolean => status !== undefined && !BEFORE_THE_BODY.has(status);

/** Any HTTP answer (a stdio line has no status; stdio's replies to unreadable lines are not judged here, as before). */
const anyStatus = (status: number | undefined): boolean => status !== undefined;

/**
 * A rule about the server's JSON-RPC errors in reply to a client body that was not JSON: `wrong`
 * picks the bad ones, `at` is where in the error, `onStatus` which statuses it judges (a 500
 * carrying -32603 answered the body as much as a 200 or 400 did).
 */
const parseErrorRule = (
  r: Pick<PostRule, 'id' | 'summary' | 'source'>,
  at: readonly string[],
  onStatus: (status: number | undefined) => boolean,
  wrong: (m: ErrorMessage) => boolean,
  message: (m: ErrorMessage, problem: string) => string,
): PostRule => ({
  group: 'parse-error',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'post',
  ...r,
  check(s): Report[] {
    if (s.request.ok || !onStatus(s.status)) return [];
    return messagesOf(s.response).flatMap((m, i) =>
      m.kind === 'error' && wrong(m)
        ? [
            {
              message: message(m, problemOf(s)),
              pointer: messagePointer('response', s.response, i, ...at),
              evidence: excerpt(m.value),
              fix: PARSE_ERROR_FIX,
            },
          ]
        : [],
    );
  },
});

const requestEnvelope: PostRule = {
  id: 'request-envelope',
  group: 'framing',
  severity: 'error',
  versions: ALL,
  party: 'client',
  subject: 'post',
  summary:
    'A client POST body (a stdio line) is not JSON, or holds a message that is not valid JSON-RPC 2.0 (or a notification with an id)',
  source:
    'https://www.jsonrpc.org/specification#request_object, https://modelcontextprotocol.io/specification/2026-07-28/basic/index#messages, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/index#messages',
  check(s): Report[] {
    const fix =
      'POST one JSON-RPC 2.0 message as UTF-8 JSON: {"jsonrpc":"2.0","id":<string or integer>,"method":...} for a request, no "id" for a notification';
    if (!s.request.ok) {
      const what = s.wire === 'stdio' ? 'line on stdin' : 'POST body';
      return [{ message: `the client's ${what} is ${problemOf(s)}`, pointer: '/request', evidence: excerpt(s.request.detail), fix }];
    }
    if (s.request.payload.batch && s.request.payload.messages.length === 0) {
      return [{ message: 'the client POSTed an empty JSON array', pointer: '/request', evidence: '[]', fix }];
    }
    const out: Report[] = [];
    s.request.payload.messages.forEach((m, i) => {
      if (m.kind === 'invalid') {
        out.push({
          message: `the client sent a message that is not valid JSON-RPC 2.0: ${m.reason}`,
          pointer: messagePointer('request', s.request, i),
          evidence: requestExcerpt(m.value),
          fix,
        });
      } else if (m.kind === 'request' && m.method.startsWith('notifications/')) {
        out.push({
          message: `${m.method} was sent with an id; a notification must not carry one`,
          pointer: messagePointer('request', s.request, i, 'id'),
          evidence: excerpt(m.id),
          fix: `send ${m.method} without an "id" member (a notification gets no response)`,
        });
      }
    });
    return out.slice(0, 3);
  },
};

const jsonrpcEnvelope: ExchangeRule = answerRule(
  'invalid',
  undefined,
  {
    id: 'jsonrpc-envelope',
    group: 'framing',
    severity: 'error',
    versions: ALL,
    summary: 'A response that matched a request is not valid JSON-RPC 2.0 (no jsonrpc:"2.0", both result and error, ...)',
    source:
      'https://www.jsonrpc.org/specification#response_object, https://modelcontextprotocol.io/specification/2026-07-28/basic/index#responses',
  },
  (s, { reason, value }) => {
    const at = reason.startsWith('jsonrpc')
      ? '/response/jsonrpc'
      : reason.startsWith('method')
        ? '/response/method'
        : reason.includes('error')
          ? '/response/error'
          : '/response';
    return [
      {
        message: `${s.request.method} was answered with a message that is not valid JSON-RPC 2.0: ${reason}`,
        pointer: at,
        evidence: excerpt(value),
        fix: `send {"jsonrpc":"2.0","id":${JSON.stringify(s.request.id)}} with exactly one of "result" or "error" (an object with code and message)`,
      },
    ];
  },
);

export const FRAMING_RULES: readonly Rule[] = [
  parseErrorRule(
    {
      id: 'parse-error-code',
      summary:
        'A POST body that is not JSON was answered with an error code other than -32700, on any HTTP status but a rejection before the body is read (401, 403, 404, 405, 406, 413, 415, 429)',
      source: 'https://www.jsonrpc.org/specification#error_object',
    },
    ['error', 'code'],
    judgesTheBody,
    (m) => m.code !== -32700,
    (m, problem) =>
      `the client's body was ${problem}, and the server answered error code ${excerpt(m.code, 40)} instead of -32700 (Parse error)`,
  ),
  parseErrorRule(
    {
      id: 'parse-error-id',
      summary: 'A POST body that is not JSON was answered (on any HTTP status) with an error carrying a made-up id',
      source:
        'https://www.jsonrpc.org/specification#response_object, https://modelcontextprotocol.io/specification/2026-07-28/basic/index#error-responses',
    },
    ['id'],
    // No status makes an id readable from a body that did not parse.
    anyStatus,
    (m) => typeof m.id === 'string' || typeof m.id === 'number',
    (m, problem) => `the client's body was ${problem}, so no id could be read, yet the error carries id ${excerpt(m.id, 40)}`,
  ),
  requestEnvelope,
  jsonrpcEnvelope,
];
