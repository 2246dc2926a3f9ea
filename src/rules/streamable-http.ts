// Streamable HTTP replies and requests: 202 for a POST without requests, the response content
// type, the client's Accept and MCP-Protocol-Version headers, and session id characters.
import { H } from '../mcp/headers.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { headerOf, headerValues } from '../mcp/headers.ts';
import { is2xx, messagesOf, nameOf } from './read.ts';
import type { PostRule, Report } from './types.ts';
import { where } from './versions.ts';
import { STREAMABLE_HTTP } from './wires.ts';

/** Versions whose HTTP transport is Streamable HTTP (2025-03-26 on). */
const STREAMABLE = where((v) => v.streamableHttp);
/** Versions with Mcp-Session-Id sessions. */
const WITH_SESSIONS = where((v) => v.sessions);
/** Legacy versions whose clients must send MCP-Protocol-Version after initialization. */
const VERSION_HEADER = where((v) => v.versionHeaderAfterInit);

const ACCEPTED_TYPES = ['application/json', 'text/event-stream'];

/** The media ranges of an Accept header that are acceptable (q > 0), lower case. */
function acceptable(accept: string | undefined): string[] {
  return (accept ?? '').split(',').flatMap((part) => {
    const [range = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return q !== undefined && Number(q.slice(2)) === 0 ? [] : [range];
  });
}

export const HTTP_RULES: readonly PostRule[] = [
  {
    id: 'notification-answered-with-body',
    group: 'notifications',
    severity: 'error',
    versions: STREAMABLE,
    party: 'server',
    transports: STREAMABLE_HTTP,
    subject: 'post',
    summary: 'A POST of only notifications/responses was accepted with something other than 202 and an empty body',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages',
    check(s): Report[] {
      const messages = messagesOf(s.request);
      if (messages.length === 0 || !messages.every((m) => m.kind === 'notification' || m.kind === 'result' || m.kind === 'error'))
        return [];
      if (!is2xx(s.status)) return [];
      const body = s.responseBytes > 0 || s.contentType === 'text/event-stream';
      if (s.status === 202 && !body) return [];
      const what = messages.every((m) => m.kind === 'notification') ? 'notification' : 'response';
      const reply = `HTTP ${s.status}${body ? ` with ${s.contentType === 'text/event-stream' ? 'an SSE stream' : `a body of ${s.responseBytes} bytes`}` : ' without a body'}`;
      return [
        {
          message: `a POST holding only ${what}s (${excerpt(messages.map(nameOf), 60)}) was answered ${reply} instead of 202 with no body`,
          pointer: body ? '/response' : '/status',
          evidence:
            body && s.response?.ok
              ? excerpt(s.response.payload.batch ? s.response.payload.messages.map((m) => m.value) : s.response.payload.messages[0].value)
              : reply,
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
    transports: STREAMABLE_HTTP,
    subject: 'post',
    summary: 'A POST carrying a request was answered 2xx with a Content-Type other than application/json or text/event-stream',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages',
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
    transports: STREAMABLE_HTTP,
    subject: 'post',
    summary: 'A client POST does not list both application/json and text/event-stream in Accept',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages',
    check(s): Report[] {
      const accept = headerOf(s.requestHeaders, 'accept');
      const ranges = acceptable(accept);
      const missing = ACCEPTED_TYPES.filter((t) => !ranges.includes(t));
      if (missing.length === 0) return [];
      return [
        {
          message:
            accept === undefined
              ? 'the client POSTed without an Accept header'
              : `the client's Accept header does not list ${missing.join(' or ')}`,
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
    transports: STREAMABLE_HTTP,
    subject: 'post',
    summary:
      'After initialization a client POST lacks MCP-Protocol-Version (error) or names another version than the negotiated one (warning)',
    source: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#protocol-version-header',
    check(s): Report[] {
      const negotiated = s.session.protocolVersion;
      if (negotiated === undefined || headerOf(s.requestHeaders, H.sessionId) === undefined) return [];
      if (messagesOf(s.request).some((m) => m.kind === 'request' && m.method === 'initialize')) return [];
      const sent = headerOf(s.requestHeaders, H.protocolVersion);
      if (sent === negotiated) return [];
      const fix = `send MCP-Protocol-Version: ${negotiated} (the negotiated version) on every request after initialize`;
      const at = pointer('headers', H.protocolVersion);
      if (sent === undefined)
        return [
          { message: `a POST in a ${negotiated} session has no MCP-Protocol-Version header`, pointer: at, evidence: '(absent)', fix },
        ];
      return [
        {
          severity: 'warning',
          message: `MCP-Protocol-Version ${excerpt(sent, 40)} differs from the negotiated ${negotiated}`,
          pointer: at,
          evidence: excerpt(sent),
          fix,
        },
      ];
    },
  },
  {
    id: 'session-id-invalid',
    group: 'sessions',
    severity: 'error',
    versions: WITH_SESSIONS,
    party: 'server',
    transports: STREAMABLE_HTTP,
    subject: 'post',
    summary: 'An Mcp-Session-Id holds characters outside visible ASCII (0x21-0x7E)',
    source: 'https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management',
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
