// Codes 2026-07-28 pairs with an HTTP status: -32601 with 404; -32020, -32021, -32022 and -32602
// for a request without its _meta with 400.
import { excerpt } from '../redact/excerpt.ts';
import { codeRule, legacyServer } from './error-answers.ts';
import { describeError, type ErrorMessage, missingMeta } from './read.ts';
import type { ExchangeRule, ExchangeSubject } from './types.ts';
import { MODERN } from './versions.ts';
import { STREAMABLE_HTTP } from './wires.ts';

const REASON: Readonly<Record<number, string>> = { 400: 'Bad Request', 404: 'Not Found' };

/** A rule that a JSON error body comes with HTTP `status`; `what` names the error when the pairing applies to it. */
const pairingRule = (
  info: Omit<ExchangeRule, 'subject' | 'check' | 'party'>,
  status: number,
  what: (s: ExchangeSubject, e: ErrorMessage, code: number) => string | undefined,
): ExchangeRule =>
  codeRule({ ...info, transports: STREAMABLE_HTTP }, (s, e, code) => {
    if (s.transport !== 'json' || s.status === undefined || s.status === status) return [];
    const why = what(s, e, code);
    if (why === undefined) return [];
    return [
      {
        message: `${s.request.method} was answered with ${why} on HTTP ${s.status}; 2026-07-28 requires ${status}`,
        pointer: '/status',
        evidence: excerpt(`HTTP ${s.status}: ${describeError(e)}`),
        fix: `send HTTP ${status} ${REASON[status]} with the ${code} JSON-RPC error body`,
      },
    ];
  });

export const unknownMethodStatus: ExchangeRule = pairingRule(
  {
    id: 'unknown-method-status',
    group: 'status',
    severity: 'error',
    versions: MODERN,
    summary: 'A -32601 (Method not found) JSON body that did not come with HTTP 404',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#protocol-version-header',
  },
  404,
  (s, _e, code) => (code === -32601 && !legacyServer(s) ? '-32601 (Method not found)' : undefined),
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
    summary: '-32020, -32021, -32022, or -32602 for a request missing its required _meta, not sent with HTTP 400',
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
