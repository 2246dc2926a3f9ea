// Codes 2026-07-28 pairs with an HTTP status: -32601 with 404; -32020, -32021, -32022 and -32602
// for a request without its _meta with 400. An answer sent as an SSE stream is judged too: its
// status (200) went out before its events, so the error should have come as a JSON body with the
// paired status instead; enforce cannot change a stream's status (rewrite/message.ts pairedStatus),
// so such a finding is logged.
import { isUnknownMethod } from '../mcp/methods.ts';
import { excerpt } from '../redact/excerpt.ts';
import { codeRule, legacyServer } from './error-answers.ts';
import { describeError, type ErrorMessage, errorMessage, missingMeta } from './read.ts';
import type { ExchangeRule, ExchangeSubject } from './types.ts';
import { MODERN, where } from './versions.ts';
import { STREAMABLE_HTTP } from './wires.ts';

const REASON: Readonly<Record<number, string>> = { 400: 'Bad Request', 404: 'Not Found' };

/** A rule that a JSON error body comes with HTTP `status`; `what` names the error when the pairing applies to it. */
const pairingRule = (
  info: Omit<ExchangeRule, 'subject' | 'check' | 'party'>,
  status: number,
  what: (s: ExchangeSubject, e: ErrorMessage, code: number) => string | undefined,
): ExchangeRule =>
  codeRule({ ...info, transports: STREAMABLE_HTTP }, (s, e, code) => {
    if ((s.transport !== 'json' && s.transport !== 'sse') || s.status === undefined || s.status === status) return [];
    const why = what(s, e, code);
    if (why === undefined) return [];
    const stream = s.transport === 'sse';
    return [
      {
        message: `${s.request.method} was answered with ${why} ${stream ? `on an SSE stream (HTTP ${s.status})` : `on HTTP ${s.status}`}; 2026-07-28 requires ${status}`,
        pointer: '/status',
        evidence: excerpt(`HTTP ${s.status}${stream ? ' text/event-stream' : ''}: ${describeError(e)}`),
        fix: stream
          ? `answer with a JSON body (application/json) on HTTP ${status} ${REASON[status]} carrying the ${code} error: a stream's status is sent before its events`
          : `send HTTP ${status} ${REASON[status]} with the ${code} JSON-RPC error body`,
      },
    ];
  });

/**
 * Requests that name an item of the server's (a tool, a prompt, a resource): one it lacks is
 * -32602 (Invalid params), not a method it lacks, so the 404 of -32601 is no fix for them.
 */
const NAMING_ITEMS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** A -32601 that says the method is unknown, as far as the pairing goes: not one for an item of a method the server may serve. */
const methodNotFound = (s: ExchangeSubject): boolean =>
  !NAMING_ITEMS.has(s.request.method) || isUnknownMethod(s.request.method, s.version, s.session.serverCapabilities) === true;

export const unknownMethodStatus: ExchangeRule = pairingRule(
  {
    id: 'unknown-method-status',
    group: 'status',
    severity: 'error',
    versions: MODERN,
    summary:
      'A -32601 (Method not found) that did not come as a JSON body on HTTP 404 (a tools/call, prompts/get or resources/read the server serves is not: an unknown item is -32602)',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#protocol-version-header',
  },
  404,
  (s, _e, code) => (code === -32601 && !legacyServer(s) && methodNotFound(s) ? '-32601 (Method not found)' : undefined),
);

const PAIRED_400: Readonly<Record<number, string>> = {
  [-32020]: 'Header mismatch',
  [-32021]: 'Missing required client capability',
  [-32022]: 'Unsupported protocol version',
};

export const errorStatusPairing: ExchangeRule = pairingRule(
  {
    id: 'error-status-pairing',
    group: 'status',
    severity: 'error',
    versions: MODERN,
    summary: '-32020, -32021, -32022, or -32602 for a request missing its required _meta, not sent as a JSON body with HTTP 400',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#server-validation, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#protocol-version-header, https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta',
  },
  400,
  (s, _e, code) => {
    const name = PAIRED_400[code];
    if (name) return `${code} (${name})`;
    const missing = code === -32602 ? missingMeta(s.request.params) : [];
    return missing.length > 0 ? `-32602 for a request missing ${missing.join(' and ')} in params._meta` : undefined;
  },
);

/** The versions of Streamable HTTP with sessions and no status pairing: a 404 means the session is gone. */
const SESSION_404_VERSIONS = where((v) => v.era === 'legacy' && v.streamableHttp && v.sessions);

// Before 2026-07-28 a 404 tells a Streamable HTTP client its session expired: it drops the session
// and initializes again (transports, "Session Management"). A -32601 sent on 404 therefore reads
// as a lost session, not as an unknown method: only 2026-07-28 pairs the two. Logged, never
// rewritten: a server that means its session is gone and names it with the wrong code must keep
// the 404 the client acts on.
export const methodNotFoundOn404: ExchangeRule = codeRule(
  {
    id: 'method-not-found-on-404',
    group: 'status',
    severity: 'warning',
    versions: SESSION_404_VERSIONS,
    transports: STREAMABLE_HTTP,
    summary:
      'Before 2026-07-28, a -32601 (Method not found) came on HTTP 404, which a client of that version reads as an expired session (and initializes again)',
    source:
      'https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#protocol-version-header',
  },
  (s, e, code) => {
    if (code !== -32601 || s.status !== 404 || !legacyServer(s) || /\bsession\b/i.test(errorMessage(e))) return [];
    return [
      {
        message: `${s.request.method} was answered with ${describeError(e)} on HTTP 404: a ${s.version} client reads a 404 as its session expired, and initializes again`,
        pointer: '/status',
        evidence: excerpt(`HTTP 404: ${describeError(e)}`),
        fix: 'send -32601 on HTTP 200 (only 2026-07-28 pairs it with 404); keep 404 for a session the server no longer has',
      },
    ];
  },
);
