// A client body that is not JSON (or not UTF-8, or empty) must be answered with a JSON-RPC error,
// -32700 Parse error with id null (JSON-RPC 2.0 section 5.1). parse-error-code and
// parse-error-id (framing.ts) judge such an error's code and id; this rule judges a reply that
// holds no JSON-RPC error at all: an empty body, an HTML page, text that is not JSON, JSON that is
// no JSON-RPC error. Such a POST opened no request (nothing could be read), so the exchange rules
// (empty-body, html-body, ...) cannot see it: the POST is the exchange.
//
// Only replies of the JSON-RPC layer count: 2xx, or 400 (an empty 400 is how a framework's body
// parser fails). A 401, 403, 404, 405, 406, 413, 415 or 5xx without a JSON-RPC error rejects the
// POST before its body is read (or failed for its own reasons), with a status that says why; a
// JSON-RPC error on such a status did answer the body, and parse-error-code judges its code
// (framing.ts). An SSE stream is not read here (its events are the stream's own).
import { excerpt } from '../redact/excerpt.ts';
import { PARSE_ERROR_FIX, problemOf } from './framing.ts';
import { is2xx, messagesOf } from './read.ts';
import type { PostRule, PostSubject, Report } from './types.ts';
import { ALL } from './versions.ts';
import { STREAM_ANSWERED } from './wires.ts';

const WHAT: Readonly<Record<string, string>> = {
  'not-json': 'a body that is not JSON',
  'not-utf8': 'a body that is not valid UTF-8',
  html: 'an HTML page',
  empty: 'an empty body',
};

/** What the server sent instead of a JSON-RPC error, or undefined when it sent one (or a stream). */
function missingError(s: PostSubject): string | undefined {
  if ((s.contentType ?? '').toLowerCase() === 'text/event-stream') return undefined;
  if (s.response === undefined) return s.responseBytes === 0 ? 'an empty body' : undefined;
  if (!s.response.ok) return WHAT[s.response.problem] ?? s.response.problem;
  if (messagesOf(s.response).some((m) => m.kind === 'error')) return undefined;
  return 'JSON that holds no JSON-RPC error';
}

export const parseErrorUnanswered: PostRule = {
  id: 'parse-error-unanswered',
  group: 'parse-error',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'post',
  summary: 'A POST body that is not JSON was answered (2xx or 400) with no JSON-RPC error: an empty body, HTML, or other text',
  source: 'https://www.jsonrpc.org/specification#error_object',
  check(s): Report[] {
    if (s.request.ok || !(is2xx(s.status) || s.status === 400)) return [];
    const what = missingError(s);
    if (what === undefined) return [];
    return [
      {
        message: `the client's body was ${problemOf(s)}, and the server answered HTTP ${s.status} with ${what} instead of a -32700 Parse error`,
        pointer: '/response',
        evidence: s.response?.ok
          ? excerpt(s.response.payload.messages.map((m) => m.value))
          : `HTTP ${s.status}${s.contentType ? `, ${s.contentType}` : ''}, ${s.responseBytes} bytes`,
        fix: PARSE_ERROR_FIX,
      },
    ];
  },
};

/**
 * The same on a transport whose answers come on the session's stream (a stdio line, a legacy SSE
 * POST): a message that is not JSON, or JSON meant as a request that is no valid one, is still
 * owed an answer (-32700, -32600) there; no error with id null (or the id that could be read) came
 * within the window. Several SDKs' stdio servers never answer one (and the Go and Rust ones exit).
 */
export const malformedUnanswered: PostRule = {
  id: 'malformed-unanswered',
  group: 'parse-error',
  severity: 'warning',
  versions: ALL,
  transports: STREAM_ANSWERED,
  party: 'server',
  subject: 'post',
  summary:
    "A stdio line or legacy SSE POST that is not JSON, or no valid request, got no JSON-RPC error on the session's stream within the window",
  source: 'https://www.jsonrpc.org/specification#response_object',
  check(s): Report[] {
    if (s.unansweredAfterMs === undefined) return [];
    const what = s.request.ok ? 'JSON that is no valid request' : problemOf(s);
    return [
      {
        message: `the client's ${s.wire === 'stdio' ? 'line on stdin' : 'POST'} was ${what}, and no JSON-RPC error answered it in the ${s.unansweredAfterMs} ms the proxy waited on the session's stream`,
        pointer: '/request',
        evidence: s.request.ok ? excerpt(s.request.payload.messages[0]?.value) : excerpt(s.request.detail),
        fix: s.request.ok
          ? 'answer JSON that is not a valid request with {"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}} (its id if it could be read)'
          : 'answer a line that does not parse with {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}, and keep reading',
      },
    ];
  },
};

export const PARSE_ERROR_ANSWER_RULES: readonly PostRule[] = [parseErrorUnanswered, malformedUnanswered];
