// The protocol family: JSON-RPC framing, parse errors, batches, notification POSTs, the response
// content type, the lifecycle (initialize, ping), session ids and, in protocol-modern.ts, the
// modern era's per-request rules. Each rule judges one exchange or one POST, alone.
//
// Rules of rules.md in this family's sections (A, B, D, E, F, I, K, L) that are NOT implemented,
// and why. "Not a subject" means the proxy sees the traffic but no rule is handed it: rules judge
// a client request with its answer (ExchangeSubject) or a client POST with its reply
// (PostSubject); GET/DELETE exchanges, server notifications and SSE events are not subjects.
//
// A. R1/R4 on SSE events that answer nothing: the bodies family (not-jsonrpc-body).
//    R3 (id uniqueness): needs every id a session ever used; the request table keeps only open
//    requests (a reuse while outstanding is logged as `expired: "replaced"`, not judged).
//    R5, R6 (error object shape, error id): the codes family.
//    R7, "a response to a notification": a notification has no id, so an answer to it cannot be
//    told from a response with a wrong id (ExchangeSubject.unmatched; the codes family judges the
//    id-less errors among them, R6).
//    The other half of R7 (a notifications/* method with an id) is request-envelope.
//    R8 for SSE events: an ExchangeSubject does not say whether its response came inside an array.
//    R10, server-initiated requests on a modern stream: a server request is not a subject (it is
//    only judged when the client answers it, which a modern client should not do).
//    R11 (_meta key syntax, reserved prefixes): whether a prefix is used by its owner cannot be
//    told; naming hygiene at warning level, not error handling.
//    R12 (clientInfo / serverInfo presence): SHOULD-level audit information, not a violation.
// B. R13, R14 (initialize first, traffic before initialized): message order across exchanges.
//    R16: the capabilities section (C), another family.
//    R17 (initialize cancelled): needs the session's initialize id when a later POST cancels it.
//    R18, the server's side (a request without the _meta must get 400 + -32602): the codes
//    family's error-status-pairing; the client's side is missing-request-meta.
//    R19, R20: the codes family. R21: differing list results across connections, heuristic and
//    cross-exchange. R22: whether a server is modern-only cannot be told from one exchange.
// D. R28 (one endpoint): the proxy serves one endpoint; nothing per exchange to judge.
//    R33, events after the response or unrelated requests on a POST stream: SSE events are not
//    subjects (a missing final response is the bodies family's no-response).
//    R34 (Origin): which origins are foreign is deployment policy, not protocol.
// E. R35 (GET stream): GET exchanges are not subjects. R36, R37 (no broadcast, event ids,
//    replay): the same message or event id on two streams, cross-stream state. R38 (priming event,
//    retry, reconnect timing): SSE events are not subjects and timing needs a clock.
//    R39, R43: behaviour, nothing to flag. R40, entropy and ids on non-initialize responses:
//    heuristic, and servers routinely echo the id on every response; the charset is
//    session-id-invalid. R41 (session id echo): a request without Mcp-Session-Id lands in another
//    session entry, so the proxy cannot tell which session it belonged to. R42 (404, then
//    re-initialize): the 404 and the client's next request together, cross-exchange. R44, the
//    server's 400 for a bad MCP-Protocol-Version: needs the server's supported versions; the
//    client's side is legacy-version-header. R45: probing, never flagged.
// F. R46, GET/DELETE answered 405, Last-Event-ID and SSE ids: GET/DELETE and SSE events are not
//    subjects; the session id part is session-id-minted. R47-R49, the server's reaction
//    (400 + -32020): the codes family. R50 (Mcp-Param-*): needs the tool catalogue's x-mcp-header
//    annotations and the encoding of integer and boolean values; the annotations themselves are
//    the tools family's. R51, R54: obligations of this proxy's rewrite stage, not of the traffic.
//    R52, a server still sending after the stream closed: unobservable once the client is gone.
//    R53 (X-Accel-Buffering): a SHOULD about delivery, not about errors.
// I. R66 (pagination): cursor validity and mutation need page history; an invalid cursor cannot
//    be recognised. R67, one cacheScope across the pages of a list and caching of MRTR retries:
//    page history; cache behaviour is a proxy obligation. R69, retry id, requestState echo and
//    reuse: correlating a retry with its original request is heuristic and cross-exchange.
//    R70 (subscriptions/listen): listen-stream contents are SSE notifications, not subjects.
//    R71, the 404 + -32601 pairing: the codes family; deprecated features in use: informational.
// K. R73, R74 (log levels, logLevel opt-in): notifications/message travels on server streams;
//    server notifications are not subjects.
// L. R75, R76 (cancellation): needs the outstanding ids and their direction across exchanges,
//    and server notifications are not subjects. R77 (progress): server notifications are not
//    subjects; client ones need the token registry of active requests.
import type { Message } from '../codec/jsonrpc.ts';
import { H } from '../mcp/headers.ts';
import { VERSIONS, versionInfo } from '../mcp/versions.ts';
import { asRecord, excerpt, pointer } from './evidence.ts';
import {
  headerOf,
  headerValues,
  is2xx,
  messagePointer,
  messagesOf,
  MODERN_PROTOCOL_RULES,
} from './protocol-modern.ts';
import type { ExchangeRule, PostRule, PostSubject, Report, Rule } from './types.ts';
import { ALL, from, LEGACY } from './versions.ts';

/** Versions whose HTTP transport is Streamable HTTP (2025-03-26 on). */
const STREAMABLE = VERSIONS.filter((v) => v.streamableHttp).map((v) => v.version);
/** Versions with Mcp-Session-Id sessions. */
const WITH_SESSIONS = VERSIONS.filter((v) => v.sessions).map((v) => v.version);
/** Legacy versions whose clients must send MCP-Protocol-Version after initialization. */
const VERSION_HEADER = from('2025-06-18').filter((v) => LEGACY.includes(v));

const PROBLEM: Readonly<Record<string, string>> = {
  'not-json': 'not JSON',
  'not-utf8': 'not valid UTF-8',
  empty: 'empty',
  html: 'HTML or XML, not JSON',
};

const nameOf = (m: Message): string => (m.kind === 'request' || m.kind === 'notification' ? m.method : m.kind);

// ---- parse errors (R1: a body that is not JSON gets -32700 with a null id) ----

type ErrorMessage = Extract<Message, { kind: 'error' }>;

/**
 * The server's JSON-RPC errors in reply to a client body that was not JSON. Only replies of the
 * JSON-RPC layer count (2xx or 400): a 401, 403, 404, 406, 413 or 415 rejects the POST before
 * its body is read, with a code about that.
 */
function parseErrorReplies(s: PostSubject): Array<{ m: ErrorMessage; i: number }> {
  if (s.request.ok || !(is2xx(s.status) || s.status === 400)) return [];
  return messagesOf(s.response).flatMap((m, i) => (m.kind === 'error' ? [{ m, i }] : []));
}

const problemOf = (s: PostSubject): string => (s.request.ok ? '' : (PROBLEM[s.request.problem] ?? s.request.problem));

const PARSE_ERROR_FIX = 'answer a body that does not parse with {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}} (HTTP 400)';

const FRAMING_RULES: readonly Rule[] = [
  {
    id: 'parse-error-code',
    group: 'parse-error',
    severity: 'error',
    versions: ALL,
    party: 'server',
    subject: 'post',
    summary: 'A POST body that is not JSON was answered with an error code other than -32700',
    source: 'R1',
    check(s): Report[] {
      return parseErrorReplies(s)
        .filter(({ m }) => m.code !== -32700)
        .map(({ m, i }) => ({
          message: `the client's body was ${problemOf(s)}, and the server answered error code ${excerpt(m.code, 40)} instead of -32700 (Parse error)`,
          pointer: messagePointer('response', s.response, i, 'error', 'code'),
          evidence: excerpt(m.value),
          fix: PARSE_ERROR_FIX,
        }));
    },
  },
  {
    id: 'parse-error-id',
    group: 'parse-error',
    severity: 'error',
    versions: ALL,
    party: 'server',
    subject: 'post',
    summary: 'A POST body that is not JSON was answered with an error carrying a made-up id',
    source: 'R1, R6',
    check(s): Report[] {
      return parseErrorReplies(s)
        .filter(({ m }) => typeof m.id === 'string' || typeof m.id === 'number')
        .map(({ m, i }) => ({
          message: `the client's body was ${problemOf(s)}, so no id could be read, yet the error carries id ${excerpt(m.id, 40)}`,
          pointer: messagePointer('response', s.response, i, 'id'),
          evidence: excerpt(m.value),
          fix: PARSE_ERROR_FIX,
        }));
    },
  },
  {
    id: 'request-envelope',
    group: 'framing',
    severity: 'error',
    versions: ALL,
    party: 'client',
    subject: 'post',
    summary: 'A client POST body is not JSON, or holds a message that is not valid JSON-RPC 2.0 (or a notification with an id)',
    source: 'R1, R2, R7, R9',
    check(s): Report[] {
      const fix = 'POST one JSON-RPC 2.0 message as UTF-8 JSON: {"jsonrpc":"2.0","id":<string or integer>,"method":...} for a request, no "id" for a notification';
      if (!s.request.ok) return [{ message: `the client's POST body is ${problemOf(s)}`, pointer: '/request', evidence: excerpt(s.request.detail), fix }];
      if (s.request.payload.batch && s.request.payload.messages.length === 0) {
        return [{ message: 'the client POSTed an empty JSON array', pointer: '/request', evidence: '[]', fix }];
      }
      const out: Report[] = [];
      s.request.payload.messages.forEach((m, i) => {
        if (m.kind === 'invalid') {
          out.push({ message: `the client sent a message that is not valid JSON-RPC 2.0: ${m.reason}`, pointer: messagePointer('request', s.request, i), evidence: excerpt(m.value), fix });
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
  },
  {
    id: 'jsonrpc-envelope',
    group: 'framing',
    severity: 'error',
    versions: ALL,
    party: 'server',
    subject: 'exchange',
    summary: 'A response that matched a request is not valid JSON-RPC 2.0 (no jsonrpc:"2.0", both result and error, ...)',
    source: 'R1, R4',
    check(s): Report[] {
      if (s.request.from !== 'client' || s.response?.kind !== 'invalid') return [];
      const { reason, value } = s.response;
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
  },
];

// ---- batches (R8, R30) ----

const BATCH_RULES: readonly PostRule[] = [
  {
    id: 'batch-not-allowed',
    group: 'batch',
    severity: 'error',
    versions: ALL,
    party: 'client',
    subject: 'post',
    summary: 'A client POSTed a JSON-RPC batch under a version without batching (2024-11-05: warning), or initialize inside a 2025-03-26 batch',
    source: 'R8, R30',
    check(s): Report[] {
      const info = versionInfo(s.version);
      if (!info || !s.request.ok || !s.request.payload.batch) return [];
      const { messages } = s.request.payload;
      const evidence = excerpt(messages.map(nameOf));
      if (info.batching) {
        const i = messages.findIndex((m) => m.kind === 'request' && m.method === 'initialize');
        if (i < 0) return [];
        return [{ message: 'initialize was sent inside a JSON-RPC batch', pointer: pointer('request', i, 'method'), evidence, fix: 'send initialize alone in its own POST; batch only later messages' }];
      }
      return [
        {
          // 2024-11-05 never mentions batches (JSON-RPC 2.0 has them): a warning there.
          ...(info.streamableHttp ? {} : { severity: 'warning' as const }),
          message: `the client POSTed a JSON-RPC batch of ${messages.length} message(s); ${s.version} ${info.streamableHttp ? 'removed batching' : 'does not define batches'}`,
          pointer: '/request',
          evidence,
          fix: 'send each JSON-RPC message in its own POST',
        },
      ];
    },
  },
  {
    // A separate rule from batch-not-allowed: the server breaks it. An array may only answer an
    // array (JSON-RPC 2.0), which only 2025-03-26 allows; an array answering a client's array
    // under another version is the client's fault, reported by batch-not-allowed alone.
    id: 'batch-response-not-allowed',
    group: 'batch',
    severity: 'error',
    versions: ALL,
    party: 'server',
    subject: 'post',
    summary: 'A server answered a POST that was not a batch with a JSON array',
    source: 'R8, R30',
    check(s): Report[] {
      if (!s.response?.ok || !s.response.payload.batch) return [];
      if (s.request.ok && s.request.payload.batch) return [];
      return [
        {
          message: `the server answered a single JSON-RPC message with a JSON array of ${s.response.payload.messages.length}`,
          pointer: '/response',
          evidence: excerpt(s.response.payload.messages.map((m) => m.value)),
          fix: 'answer a single request with a single JSON-RPC response object, not an array',
        },
      ];
    },
  },
];

// ---- Streamable HTTP replies (R29, R31, R32, R40, R44) ----

const ACCEPTED_TYPES = ['application/json', 'text/event-stream'];

/** The media ranges of an Accept header that are acceptable (q > 0), lower case. */
function acceptable(accept: string | undefined): string[] {
  return (accept ?? '').split(',').flatMap((part) => {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return q !== undefined && Number(q.slice(2)) === 0 ? [] : [range];
  });
}

const HTTP_RULES: readonly PostRule[] = [
  {
    id: 'notification-answered-with-body',
    group: 'notifications',
    severity: 'error',
    versions: STREAMABLE,
    party: 'server',
    subject: 'post',
    summary: 'A POST of only notifications/responses was accepted with something other than 202 and an empty body',
    source: 'R31',
    check(s): Report[] {
      const messages = messagesOf(s.request);
      if (messages.length === 0 || !messages.every((m) => m.kind === 'notification' || m.kind === 'result' || m.kind === 'error')) return [];
      if (!is2xx(s.status)) return [];
      const body = s.responseBytes > 0 || s.contentType === 'text/event-stream';
      if (s.status === 202 && !body) return [];
      const what = messages.every((m) => m.kind === 'notification') ? 'notification' : 'response';
      const reply = `HTTP ${s.status}${body ? ` with ${s.contentType === 'text/event-stream' ? 'an SSE stream' : `a body of ${s.responseBytes} bytes`}` : ' without a body'}`;
      return [
        {
          message: `a POST holding only ${what}s (${excerpt(messages.map(nameOf), 60)}) was answered ${reply} instead of 202 with no body`,
          pointer: body ? '/response' : '/status',
          evidence: body && s.response?.ok ? excerpt(s.response.payload.batch ? s.response.payload.messages.map((m) => m.value) : s.response.payload.messages[0].value) : reply,
          fix: `accept a ${what}-only POST with HTTP 202 Accepted and an empty body (reject it with a 4xx, optionally with an id-less JSON-RPC error)`,
        },
      ];
    },
  },
  {
    id: 'response-content-type',
    group: 'bodies',
    severity: 'error',
    versions: STREAMABLE,
    party: 'server',
    subject: 'post',
    summary: 'A POST carrying a request was answered 2xx with a Content-Type other than application/json or text/event-stream',
    source: 'R32',
    check(s): Report[] {
      if (!is2xx(s.status) || !messagesOf(s.request).some((m) => m.kind === 'request')) return [];
      // A body that did not decode, or holds no JSON-RPC message, is the bodies family's finding.
      if (!s.response?.ok || s.response.payload.messages.every((m) => m.kind === 'invalid')) return [];
      const type = (s.contentType ?? '').split(';')[0]!.trim().toLowerCase();
      if (ACCEPTED_TYPES.includes(type)) return [];
      return [
        {
          message: `a JSON-RPC response was sent as ${type ? `Content-Type ${type}` : 'a body without Content-Type'}`,
          pointer: pointer('response-headers', 'content-type'),
          evidence: excerpt(s.contentType ?? '(absent)'),
          fix: 'send the response with Content-Type: application/json (one JSON object) or text/event-stream (an SSE stream)',
        },
      ];
    },
  },
  {
    id: 'accept-header',
    group: 'client',
    severity: 'error',
    versions: STREAMABLE,
    party: 'client',
    subject: 'post',
    summary: 'A client POST does not list both application/json and text/event-stream in Accept',
    source: 'R29',
    check(s): Report[] {
      const accept = headerOf(s.requestHeaders, 'accept');
      const ranges = acceptable(accept);
      const missing = ACCEPTED_TYPES.filter((t) => !ranges.includes(t));
      if (missing.length === 0) return [];
      return [
        {
          message: accept === undefined ? 'the client POSTed without an Accept header' : `the client's Accept header does not list ${missing.join(' or ')}`,
          pointer: pointer('headers', 'accept'),
          evidence: excerpt(accept ?? '(absent)'),
          fix: 'send Accept: application/json, text/event-stream on every POST',
        },
      ];
    },
  },
  {
    id: 'legacy-version-header',
    group: 'client',
    severity: 'error',
    versions: VERSION_HEADER,
    party: 'client',
    subject: 'post',
    summary: 'After initialization a client POST lacks MCP-Protocol-Version (error) or names another version than the negotiated one (warning)',
    source: 'R44',
    check(s): Report[] {
      const negotiated = s.session.protocolVersion;
      if (negotiated === undefined || headerOf(s.requestHeaders, H.sessionId) === undefined) return [];
      if (messagesOf(s.request).some((m) => m.kind === 'request' && m.method === 'initialize')) return [];
      const sent = headerOf(s.requestHeaders, H.protocolVersion);
      if (sent === negotiated) return [];
      const fix = `send MCP-Protocol-Version: ${negotiated} (the negotiated version) on every request after initialize`;
      const at = pointer('headers', H.protocolVersion);
      if (sent === undefined) return [{ message: `a POST in a ${negotiated} session has no MCP-Protocol-Version header`, pointer: at, evidence: '(absent)', fix }];
      return [{ severity: 'warning', message: `MCP-Protocol-Version ${excerpt(sent, 40)} differs from the negotiated ${negotiated}`, pointer: at, evidence: excerpt(sent), fix }];
    },
  },
  {
    id: 'session-id-invalid',
    group: 'sessions',
    severity: 'error',
    versions: WITH_SESSIONS,
    party: 'server',
    subject: 'post',
    summary: 'An Mcp-Session-Id holds characters outside visible ASCII (0x21-0x7E)',
    source: 'R40',
    check(s): Report[] {
      const bad = headerValues(s.responseHeaders, H.sessionId).find((v) => !/^[\x21-\x7e]+$/.test(v));
      if (bad === undefined) return [];
      return [
        {
          message: 'the server issued an Mcp-Session-Id with characters outside visible ASCII (0x21-0x7E)',
          pointer: pointer('response-headers', H.sessionId),
          evidence: excerpt(JSON.stringify(bad), 60),
          fix: 'issue session ids of visible ASCII only, e.g. a random UUID or base64url of 16+ random bytes',
        },
      ];
    },
  },
];

// ---- lifecycle (R15, R65, R78) ----

const LIFECYCLE_RULES: readonly ExchangeRule[] = [
  {
    // The exchange's version is what the initialize result says, so an unknown answer makes an
    // unknown version: the rule must judge every version to see it. It only looks at initialize.
    id: 'initialize-version',
    group: 'lifecycle',
    severity: 'warning',
    versions: ALL,
    party: 'server',
    subject: 'exchange',
    summary: 'An initialize result names a protocolVersion that is not a legacy version the spec defines',
    source: 'R15',
    check(s): Report[] {
      if (s.request.from !== 'client' || s.request.method !== 'initialize' || s.response?.kind !== 'result') return [];
      const version = asRecord(s.response.result)?.protocolVersion;
      if (typeof version === 'string' && versionInfo(version)?.era === 'legacy') return [];
      const known = VERSIONS.filter((v) => v.era === 'legacy').map((v) => v.version);
      return [
        {
          message:
            typeof version !== 'string'
              ? 'the initialize result has no protocolVersion string'
              : versionInfo(version)
                ? `the initialize result negotiates ${version}, which has no initialize handshake`
                : `the initialize result negotiates ${excerpt(version, 40)}, which is not a protocol version the spec defines`,
          pointer: '/response/result/protocolVersion',
          evidence: excerpt(version ?? s.response.result),
          fix: `answer with the client's proposed version if supported, else the latest one you support of ${known.join(', ')}`,
        },
      ];
    },
  },
  {
    id: 'ping-result',
    group: 'lifecycle',
    severity: 'warning',
    versions: LEGACY,
    party: 'server',
    subject: 'exchange',
    summary: 'A ping was answered with something other than an empty result {}',
    source: 'R78',
    check(s): Report[] {
      if (s.request.from !== 'client' || s.request.method !== 'ping' || !s.response) return [];
      const fix = 'answer ping promptly with {"jsonrpc":"2.0","id":<its id>,"result":{}}';
      if (s.response.kind === 'result') {
        const result = asRecord(s.response.result);
        if (result && Object.keys(result).every((k) => k === '_meta')) return [];
        return [{ message: 'ping was answered with a result that is not empty', pointer: '/response/result', evidence: excerpt(s.response.result), fix }];
      }
      // An error on a 4xx/5xx is a transport rejection (session expired, auth); on 2xx the server refused to pong.
      if (s.response.kind === 'error' && is2xx(s.status)) {
        return [{ message: `ping was answered with error ${excerpt(s.response.code, 20)} instead of an empty result`, pointer: '/response/error', evidence: excerpt(s.response.value), fix }];
      }
      return [];
    },
  },
  {
    id: 'result-type-legacy',
    group: 'result-type',
    severity: 'warning',
    versions: LEGACY,
    party: 'server',
    subject: 'exchange',
    summary: 'A legacy-version result says resultType "input_required" (a 2026-07-28 construct)',
    source: 'R65',
    check(s): Report[] {
      if (s.request.from !== 'client' || s.response?.kind !== 'result') return [];
      const resultType = asRecord(s.response.result)?.resultType;
      if (resultType !== 'input_required') return [];
      return [
        {
          message: `${s.request.method} result says resultType "input_required" in a ${s.version} exchange, which has no multi round-trip requests`,
          pointer: '/response/result/resultType',
          evidence: excerpt(s.response.result),
          fix: `answer a ${s.version} request with its final result (ask for input with server-to-client requests such as elicitation/create)`,
        },
      ];
    },
  },
];

export const PROTOCOL_RULES: readonly Rule[] = [...FRAMING_RULES, ...BATCH_RULES, ...HTTP_RULES, ...LIFECYCLE_RULES, ...MODERN_PROTOCOL_RULES];
