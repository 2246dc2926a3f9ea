// The error that answered a client request, as the codes family judges it: which one counts,
// which ones are an era probe's fallback rather than an answer, and what to send instead.
import type { Message } from '../codec/jsonrpc.ts';
import { codeRange } from './code-ranges.ts';
import { excerpt } from '../redact/excerpt.ts';
import { type ErrorMessage, integerCode, isLegacy, isModern } from './read.ts';
import type { ExchangeRule, ExchangeSubject, Report } from './types.ts';

/** Codes a modern server rejects a request with before it looks at the method. */
export const MODERN_REJECTIONS: ReadonlySet<number> = new Set([-32020, -32021, -32022]);

export const idless = (m: Message): m is ErrorMessage => m.kind === 'error' && (m.id === null || m.id === undefined);

/**
 * A legacy-only server's rejection of a modern request: a 4xx/5xx whose error is none of the
 * modern rejections, and either id-less or in the legacy range (the SDK's -32000 "Bad Request").
 * A dual-era client probes with a modern request and falls back on it
 * (https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#backward-compatibility): not judged by modern rules.
 */
export function probeAnswer(s: ExchangeSubject, e: ErrorMessage): boolean {
  if (!isModern(s.version) || (s.status ?? 0) < 400) return false;
  const code = integerCode(e.code);
  if (code === undefined) return idless(e);
  if (MODERN_REJECTIONS.has(code) || code === -32602 || code === -32601) return false;
  return idless(e) || codeRange(code) === 'legacy';
}

/**
 * The error that answered the request under test: its response if that is an error, else (no
 * response came) an id-less error on the same HTTP exchange, which is what a transport-level
 * rejection looks like. Era-probe answers are left out (see probeAnswer).
 */
export function answerError(s: ExchangeSubject): ErrorMessage | undefined {
  if (s.request.from !== 'client') return undefined;
  const e = s.response ? (s.response.kind === 'error' ? s.response : undefined) : s.unmatched.find(idless);
  return e && !probeAnswer(s, e) ? e : undefined;
}

/** A session the server negotiated a legacy version for: a modern request to it is a probe. */
export const legacyServer = (s: ExchangeSubject): boolean => s.session.era === 'legacy';

/** Where a finding about an error's code points, and its evidence. */
export const atCode = (e: ErrorMessage): Pick<Report, 'pointer' | 'evidence'> => ({
  pointer: '/response/error/code',
  evidence: excerpt(e.value.error),
});

/** A server rule about the integer code of the error that answered a client request (error-shape judges the others). */
export const codeRule = (
  info: Omit<ExchangeRule, 'subject' | 'check' | 'party'>,
  check: (s: ExchangeSubject, e: ErrorMessage, code: number) => Report[],
): ExchangeRule => ({
  ...info,
  party: 'server',
  subject: 'exchange',
  check(s) {
    const e = answerError(s);
    const code = e ? integerCode(e.code) : undefined;
    return e && code !== undefined ? check(s, e, code) : [];
  },
});

const OUTSIDE = 'an application code outside -32768..-32000';

/**
 * Whether an error came with a 4xx status: the server refused the HTTP request (no session, not
 * acceptable, unsupported media type, ...), and the JSON-RPC code for that is -32600 (Invalid
 * Request). A 5xx is a failure of the server, -32603.
 */
export const isTransportRejection = (status: number | undefined): boolean => status !== undefined && status >= 400 && status < 500;

/** What to send instead of a code the version does not define. */
export function fixFor(code: number, version: string | undefined, status?: number): string {
  if (code === -32022 && isLegacy(version))
    return 'reject an unsupported version with -32602 and data { supported, requested } (the legacy example), or negotiate one the server supports';
  if (code === -32021 && isLegacy(version))
    return 'a legacy server must not rely on a capability the client did not declare in initialize; report a failure with -32603 or a tool result with isError';
  if (code === -32020 && isLegacy(version))
    return 'reject a bad MCP-Protocol-Version header with HTTP 400 (no JSON-RPC code is defined for it before 2026-07-28)';
  if (isModern(version) && (code === -32001 || code === -32003 || code === -32004)) {
    const now = { [-32001]: -32020, [-32003]: -32021, [-32004]: -32022 }[code];
    return `${code} was a pre-release draft code: send ${now} (with HTTP 400) if that is what is meant; otherwise a standard code (-32602 invalid params, -32603 internal error) or ${OUTSIDE}`;
  }
  if (isTransportRejection(status))
    return `a transport rejection is said by its HTTP status (${status}); a JSON-RPC body with it should use -32600 (Invalid Request) or ${OUTSIDE}`;
  return `use the code the spec defines for the case (-32602 invalid params, -32601 method not found, -32603 internal error) or ${OUTSIDE}`;
}
