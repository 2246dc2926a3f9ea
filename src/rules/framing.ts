// JSON-RPC framing: a body that is not JSON gets -32700 with a null id, JSON that is no request
// gets -32600, a client sends valid JSON-RPC 2.0 (no id on a notification), and a response is
// valid JSON-RPC 2.0.
import { excerpt, requestExcerpt } from '../redact/excerpt.ts';
import { MODERN_REJECTIONS } from './error-answers.ts';
import { answerRule, type ErrorMessage, integerCode, messagePointer, messagesOf } from './read.ts';
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

/**
 * Whether the server's answer may be the JSON-RPC layer's verdict on the body: an HTTP answer on
 * any status but those (5xx included), or an error that came on the session's stream without a
 * status (a stdio line, a legacy HTTP+SSE event: engine/malformed.ts matches it to the body).
 */
const judgesTheBody = (s: PostSubject): boolean => (s.status === undefined ? s.response !== undefined : !BEFORE_THE_BODY.has(s.status));

/** Any answer: an HTTP one on any status, or one that came on the session's stream. */
const anyAnswer = (s: PostSubject): boolean => s.status !== undefined || s.response !== undefined;

/**
 * A rule about the server's JSON-RPC errors in reply to a client body that was not JSON: `wrong`
 * picks the bad ones, `at` is where in the error, `onStatus` which statuses it judges (a 500
 * carrying -32603 answered the body as much as a 200 or 400 did).
 */
const parseErrorRule = (
  r: Pick<PostRule, 'id' | 'summary' | 'source'>,
  at: readonly string[],
  onStatus: (s: PostSubject) => boolean,
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
    if (s.request.ok || !onStatus(s)) return [];
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

/**
 * Whether a client's message that is no valid JSON-RPC message was meant as a request: a value
 * that is not an object (`42`), or an object with a `method` and neither `result` nor `error`
 * (`"method": 42`, `"jsonrpc": "1.0"`, an id that is neither a string nor an integer). An object
 * without a method may be a malformed response, which gets no answer.
 */
const meantAsRequest = (value: unknown): boolean =>
  typeof value !== 'object' || value === null || Array.isArray(value) || ('method' in value && !('result' in value) && !('error' in value));

/** The id a client's invalid message carries, when it is one a response could echo (a string or a number). */
const readableId = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && 'id' in value && (typeof value.id === 'string' || typeof value.id === 'number');

/**
 * JSON that is no request, alone in its POST, answered with a JSON-RPC error whose code is not
 * -32600 (Invalid Request), the JSON-RPC 2.0 table's code for it, or with an id when none could be
 * read (a bare value, an id that is an object): JSON-RPC asks for null then. On the statuses that
 * answered the body, as parse-error-code; a 2026-07-28 rejection of the headers (-32020..-32022)
 * may come first and is left alone. In a batch, which answer is whose is the batch rules' question.
 */
const invalidRequestCode: PostRule = {
  id: 'invalid-request-code',
  group: 'framing',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'post',
  summary:
    'A POST holding JSON that is not a valid request (a method that is not a string, jsonrpc other than "2.0", a bad id type, a bare value) was answered with an error code other than -32600, or with an id where none could be read',
  source: 'https://www.jsonrpc.org/specification#error_object',
  check(s): Report[] {
    if (!s.request.ok || s.request.payload.batch || !judgesTheBody(s)) return [];
    const [sent] = s.request.payload.messages;
    if (sent?.kind !== 'invalid' || !meantAsRequest(sent.value)) return [];
    const idUnreadable = !readableId(sent.value);
    return messagesOf(s.response).flatMap((m, i): Report[] => {
      if (m.kind !== 'error') return [];
      const code = integerCode(m.code);
      if (code !== undefined && MODERN_REJECTIONS.has(code)) return [];
      const reports: Report[] = [];
      if (code !== undefined && code !== -32600)
        reports.push({
          message: `the client sent JSON that is not a valid request (${sent.reason}), and the server answered error code ${code} instead of -32600 (Invalid Request)`,
          pointer: messagePointer('response', s.response, i, 'error', 'code'),
          evidence: excerpt(m.value),
          fix: INVALID_REQUEST_FIX,
        });
      if (idUnreadable && m.id !== null && m.id !== undefined)
        reports.push({
          message: `the client sent JSON that is not a valid request (${sent.reason}) with no id that could be read, yet the error carries id ${excerpt(m.id, 40)}`,
          pointer: messagePointer('response', s.response, i, 'id'),
          evidence: excerpt(m.value),
          fix: INVALID_REQUEST_FIX,
        });
      return reports;
    });
  },
};

const INVALID_REQUEST_FIX =
  'answer JSON that is not a valid request with {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}} (the id null when it could not be read)';

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
    anyAnswer,
    (m) => typeof m.id === 'string' || typeof m.id === 'number',
    (m, problem) => `the client's body was ${problem}, so no id could be read, yet the error carries id ${excerpt(m.id, 40)}`,
  ),
  invalidRequestCode,
  requestEnvelope,
  jsonrpcEnvelope,
];
