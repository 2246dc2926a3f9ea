// What came back instead of a JSON-RPC response: HTML, nothing, text that is not JSON, JSON that
// is not JSON-RPC, or a connection that dropped. A request must get a response
// (https://www.jsonrpc.org/specification#response_object).
import { excerpt } from '../redact/excerpt.ts';
import type { BodyProblem, ExchangeRule, ExchangeSubject, ProcessExit, Report } from './types.ts';
import { ALL } from './versions.ts';

/** What each body problem is, in a finding's words. */
const GOT: Readonly<Record<BodyProblem['problem'], string>> = {
  html: 'an HTML page',
  empty: 'an empty body',
  'not-json': 'a body that is not JSON',
  'not-utf8': 'a body that is not valid UTF-8',
  'not-jsonrpc': 'JSON that is not a JSON-RPC message',
};

/**
 * What a client request got instead of a JSON-RPC response, when that is an unusable answer. A
 * transport rejection speaks through its status; its body is optional: a redirect, an
 * authentication challenge, or any 4xx without a body is not an unusable answer. A 403 or 404
 * page with a body, though, is the server's answer to the request (and often carries a stack
 * trace): it is judged like a 500's.
 */
export function unusableBody(s: ExchangeSubject): string | undefined {
  if (s.request.from !== 'client' || !s.bodyProblem) return undefined;
  const status = s.status ?? 0;
  if ((status >= 300 && status < 400) || status === 401 || status === 407) return undefined;
  if (s.bodyProblem.problem === 'empty' && status >= 400 && status < 500) return undefined;
  return GOT[s.bodyProblem.problem];
}

const problemRule = (
  id: string,
  problem: BodyProblem['problem'],
  summary: string,
  source = 'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#messages, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages',
): ExchangeRule => ({
  id,
  group: 'bodies',
  severity: 'error',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary,
  source,
  check(s): Report[] {
    const what = s.bodyProblem?.problem === problem ? unusableBody(s) : undefined;
    if (what === undefined) return [];
    return [
      {
        message: `${s.request.method} was answered with ${what} (HTTP ${s.status ?? '?'}${s.contentType ? `, ${s.contentType}` : ''}) instead of a JSON-RPC response`,
        pointer: '/response/body',
        evidence: s.bodyProblem!.excerpt,
        fix: `answer every request with a JSON-RPC result or error carrying its id (${JSON.stringify(s.request.id)}), as application/json or text/event-stream`,
      },
    ];
  },
});

/** A response the proxy relayed without reading it: nothing wrong is known, nothing was checked either. */
/** How a stdio child ended, and the last lines of its stderr (redacted and cut where they were kept): why it never answered. */
const exitEvidence = (exit: ProcessExit): string =>
  excerpt(
    exit.stderr.length === 0 ? `exited with ${exit.how}, nothing on stderr` : `exited with ${exit.how}; stderr: ${exit.stderr.join(' | ')}`,
    1200,
  );

const unauditedRule: ExchangeRule = {
  id: 'unaudited-response',
  group: 'bodies',
  severity: 'info',
  versions: ALL,
  party: 'server',
  subject: 'exchange',
  summary: 'A response was larger than the audit limit: relayed as it came, not judged',
  source: 'mcp-warden limits (auditBody, auditEvent)',
  check(s): Report[] {
    if (s.request.from !== 'client' || s.outcome !== 'unaudited') return [];
    const what = s.transport === 'json' ? 'a body' : 'an SSE event';
    return [
      {
        message: `${s.request.method} was answered with ${what} larger than the audit limit: it was relayed unread, so no rule judged it`,
        pointer: '/response',
        evidence: `${s.transport} response, HTTP ${s.status ?? '?'}${s.contentType ? `, ${s.contentType}` : ''}`,
        fix: 'raise limits.auditBody / limits.auditEvent (--audit-limit) to judge responses this large, or have the tool return large content as a resource link',
      },
    ];
  },
};

export const BODY_RULES: readonly ExchangeRule[] = [
  problemRule('html-body', 'html', 'A request was answered with an HTML page instead of JSON-RPC'),
  problemRule('empty-body', 'empty', 'A request was answered with an empty body'),
  problemRule('non-json-body', 'not-json', 'A request was answered with a body that is not JSON'),
  problemRule(
    'non-utf8-body',
    'not-utf8',
    'A request was answered with a body that is not UTF-8',
    'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/index#messages, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#sending-messages',
  ),
  problemRule('not-jsonrpc-body', 'not-jsonrpc', 'A request was answered with JSON that is not a JSON-RPC message'),
  {
    id: 'no-response',
    group: 'bodies',
    severity: 'error',
    versions: ALL,
    party: 'server',
    subject: 'exchange',
    summary: 'The connection dropped (or the stream ended) before the request got its response',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#receiving-messages',
    check(s): Report[] {
      // A stream that ends with a request unanswered: the POST's own, or a legacy SSE session's, which carries every answer.
      const onStream = s.transport === 'sse' || (s.wire === 'sse' && s.transport === 'get-sse');
      const dropped =
        s.proxyError === 'WARDEN_UPSTREAM_RESET' ||
        s.proxyError === 'WARDEN_UPSTREAM_EXITED' ||
        (s.outcome === 'no-response' && onStream && !s.proxyError);
      if (s.request.from !== 'client' || !dropped) return [];
      const how =
        s.proxyError === 'WARDEN_UPSTREAM_EXITED'
          ? `the server process exited${s.exit ? ` (${s.exit.how})` : ''}`
          : s.proxyError
            ? 'the server closed the connection'
            : 'its SSE stream ended without one';
      return [
        {
          message: `${s.request.method} got no response: ${how}`,
          pointer: '/response',
          evidence: s.exit ? exitEvidence(s.exit) : (s.proxyError ?? 'stream ended'),
          fix: 'always finish a request with its JSON-RPC response; report failures as an error response (or isError result), never by dropping the connection',
        },
      ];
    },
  },
  unauditedRule,
];
