// Rewriter for requests the server answered with no JSON-RPC response at all: an HTML page, an
// empty body, text that is not JSON or not UTF-8, JSON that is not JSON-RPC, or a connection that
// dropped first. The client gets a JSON-RPC error with the request's id instead.
import { PROXY_ERRORS, type ProxyErrorCode } from '../errors.ts';
import type { ExchangeSubject } from '../rules/types.ts';
import type { Rewriter } from './types.ts';
import {
  defineRewriter,
  errorResponse,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  isResponse,
  uncataloguedTool,
  unknownToolMessage,
} from './message.ts';

/** What the client is told, per rule: generic, never the server's body. */
const MESSAGES: Readonly<Record<string, string>> = {
  'html-body': 'The MCP server answered with an HTML page instead of a JSON-RPC response',
  'empty-body': 'The MCP server answered with an empty body instead of a JSON-RPC response',
  'non-json-body': 'The MCP server answered with a body that is not JSON',
  'non-utf8-body': 'The MCP server answered with a body that is not valid UTF-8',
  'not-jsonrpc-body': 'The MCP server answered with JSON that is not a JSON-RPC response',
  'no-response': 'The MCP server closed the connection before responding',
  // Its tool is always one the catalogue lacks: the client gets "Unknown tool: NAME" (-32602).
  'unknown-tool-unanswered': 'The MCP server answered with no JSON-RPC response',
};

/** The stable message of the proxy's own error `code`, if it is one. */
const proxyErrorMessage = (code: string | undefined): string | undefined =>
  code !== undefined && Object.hasOwn(PROXY_ERRORS, code) ? PROXY_ERRORS[code as ProxyErrorCode].message : undefined;

/** The status the server sent; null when it sent none (the proxy answered for it, or the connection dropped). */
const upstreamStatus = (s: ExchangeSubject): number | null => (s.proxyError !== undefined ? null : (s.status ?? null));

/**
 * Whether the server's status says something the client must act on, so it is kept while the
 * body is replaced: 4xx: 403 may carry an authorization challenge, a legacy 404 tells the
 * client its session expired, a 2026-07-28 400/404/405 is how a dual-era client tells the
 * server's era; 408, 413, 429 and the rest name a condition a retry must respect.
 */
function statusMatters(status: number | null): boolean {
  return status !== null && status >= 400 && status < 500;
}

/** A redirect is no answer to rewrite: the client follows it (the rules do not flag one). */
const isRedirect = (status: number | null): boolean => status !== null && status >= 300 && status < 400;

/**
 * html-body, empty-body, non-json-body, non-utf8-body, not-jsonrpc-body, no-response: a JSON-RPC
 * error with the request's id, -32603 with `data: { reason: <rule id>, upstreamStatus }`, or, for
 * a tools/call of a tool a complete catalogue lacks, -32602 "Unknown tool: NAME" (with the same
 * data). HTTP 200 (no version pairs these codes with a status, and some clients drop the whole
 * session on other statuses), except that a 4xx status is kept: it is the server's word.
 */
export const bodyRewriter: Rewriter = defineRewriter(Object.keys(MESSAGES), (message, { subject: s, finding }) => {
  // One event, one wording: where the proxy gave up (a reset, a child's exit), the words its own error uses.
  const generic = (finding.rule === 'no-response' && proxyErrorMessage(s.proxyError)) || MESSAGES[finding.rule];
  if (generic === undefined || s.request.from !== 'client') return undefined;
  // An earlier rewrite already built the answer.
  if (isResponse(message)) return undefined;
  const status = upstreamStatus(s);
  if (isRedirect(status)) return undefined;
  const data = { reason: finding.rule, upstreamStatus: status };
  const tool = uncataloguedTool(s);
  const built =
    tool === undefined
      ? errorResponse(s.request.id, INTERNAL_ERROR, generic, data)
      : errorResponse(s.request.id, INVALID_PARAMS, unknownToolMessage(tool), data);
  return { message: built, status: statusMatters(status) ? status! : 200 };
});
