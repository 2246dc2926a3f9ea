// What a stateless 2026-07-28 POST must not carry: a session id in the reply, a client's
// JSON-RPC response, or notifications/cancelled (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http).
import type { Message } from '../codec/jsonrpc.ts';
import { H } from '../mcp/headers.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { headerOf } from '../mcp/headers.ts';
import { findMessage, is2xx, messagePointer, messagesOf, metaVersion } from './read.ts';
import type { PostRule, PostSubject, Report } from './types.ts';
import { MODERN } from './versions.ts';
import { STREAMABLE_HTTP } from './wires.ts';

const postRule = (r: Omit<PostRule, 'subject' | 'versions'>): PostRule => ({
  subject: 'post',
  versions: MODERN,
  transports: STREAMABLE_HTTP,
  ...r,
});

/** Whether the POST carries a request that declares its version in `_meta` (a real modern request). */
const hasModernRequest = (s: PostSubject): boolean =>
  messagesOf(s.request).some((m) => m.kind === 'request' && metaVersion(m.params) !== undefined);

export const MODERN_POST_RULES: readonly PostRule[] = [
  postRule({
    id: 'session-id-minted',
    group: 'sessions',
    severity: 'error',
    party: 'server',
    summary: 'A server answered a 2026-07-28 request with an Mcp-Session-Id header',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#earlier-streamable-http-revisions',
    check(s): Report[] {
      const sid = headerOf(s.responseHeaders, H.sessionId);
      if (sid === undefined || !is2xx(s.status) || !hasModernRequest(s)) return [];
      return [
        {
          message: `a 2026-07-28 request was answered with Mcp-Session-Id; the modern era has no sessions`,
          pointer: pointer('response-headers', H.sessionId),
          evidence: excerpt(sid, 60),
          fix: 'do not set Mcp-Session-Id on 2026-07-28 responses (neither mint nor echo it); carry state in explicit handles or arguments',
        },
      ];
    },
  }),
  postRule({
    id: 'client-response-not-allowed',
    group: 'framing',
    severity: 'error',
    party: 'client',
    summary: 'A 2026-07-28 client POST carries a JSON-RPC response (servers send no requests in the modern era)',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/index, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages',
    check(s): Report[] {
      const found = findMessage(
        s.request,
        (m): m is Extract<Message, { kind: 'result' | 'error' }> => m.kind === 'result' || m.kind === 'error',
      );
      if (!found) return [];
      return [
        {
          message: 'the client POSTed a JSON-RPC response under 2026-07-28, where a POST holds one request or notification',
          pointer: messagePointer('request', s.request, found.i),
          evidence: excerpt(found.m.value),
          fix: 'answer input requests by retrying the original request with inputResponses (MRTR), never with a JSON-RPC response',
        },
      ];
    },
  }),
  postRule({
    id: 'cancelled-over-http',
    group: 'notifications',
    severity: 'warning',
    party: 'client',
    summary: 'A 2026-07-28 client sent notifications/cancelled over HTTP, where closing the stream cancels',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#cancellation',
    check(s): Report[] {
      const found = findMessage(
        s.request,
        (m): m is Extract<Message, { kind: 'notification' }> => m.kind === 'notification' && m.method === 'notifications/cancelled',
      );
      if (!found) return [];
      return [
        {
          message: 'notifications/cancelled was POSTed under 2026-07-28; on HTTP a request is cancelled by closing its response stream',
          pointer: messagePointer('request', s.request, found.i, 'method'),
          evidence: excerpt(found.m.params ?? found.m.method),
          fix: "close the request's SSE response stream (or abort the HTTP request) instead of sending notifications/cancelled",
        },
      ];
    },
  }),
];
