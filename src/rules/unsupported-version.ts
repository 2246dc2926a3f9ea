// A 2026-07-28 request for a protocol version no spec defines (a client asking for 2027-01-01):
// the server must turn it away with -32022 UnsupportedProtocolVersion, data { supported,
// requested }, on HTTP 400. The version string is a fact about the request: the
// exchange is judged by 2026-07-28's rules (read.ts judgedVersion), so error-data-required and
// error-status-pairing judge the -32022's data and status; this rule judges the code.
//
// Only an error is judged. A result may come from a server that implements a version newer than
// this proxy knows; an error answers the request, and the one error the spec allows for a version
// the server does not implement is -32022. Errors a server may give before it reads the version
// are left alone: another modern rejection (-32020 header mismatch, -32021 missing capability),
// -32602 for a request without its `_meta`, -32601 for a method 2026-07-28 does not have, a
// legacy-only server's rejection of the probe (error-answers.ts probeAnswer), and replies outside
// the JSON-RPC layer (401, 403, 404, 405, 406, 413, 415, 429, 5xx: only 2xx and 400 count).
import { methodsOf } from '../mcp/methods.ts';
import { LATEST_OF } from '../mcp/versions.ts';
import { excerpt } from '../redact/excerpt.ts';
import { atCode, codeRule, MODERN_REJECTIONS } from './error-answers.ts';
import { describeError, inBand, isModern, knownVersion, missingMeta } from './read.ts';
import type { ExchangeRule } from './types.ts';
import { MODERN } from './versions.ts';

export const unsupportedVersionCode: ExchangeRule = codeRule(
  {
    id: 'unsupported-version-code',
    group: 'codes',
    severity: 'error',
    versions: MODERN,
    summary:
      'A 2026-07-28 request for a protocol version no spec defines was answered with an error other than -32022 (UnsupportedProtocolVersion)',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#protocol-version-negotiation, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#protocol-version-header',
  },
  (s, e, code) => {
    const requested = s.request.protocolVersion;
    if (requested === undefined || knownVersion(requested) !== undefined || !isModern(s.version)) return [];
    if (!(inBand(s) || s.status === 400)) return [];
    if (code === -32022 || MODERN_REJECTIONS.has(code)) return [];
    if (code === -32602 && missingMeta(s.request.params).length > 0) return [];
    if (code === -32601 && !methodsOf(s.version)?.has(s.request.method)) return [];
    const asked = JSON.stringify(excerpt(requested, 40));
    return [
      {
        ...atCode(e),
        message: `${s.request.method} asked for protocol version ${asked}, which no version of the spec defines, and was answered with ${describeError(e)} instead of -32022 (UnsupportedProtocolVersion)`,
        fix: `turn a version the server does not implement away with HTTP 400 and {"code":-32022,"message":"Unsupported protocol version","data":{"supported":["${LATEST_OF.modern}"],"requested":${asked}}} (the versions it does support in data.supported)`,
      },
    ];
  },
);

export const UNSUPPORTED_VERSION_RULES: readonly ExchangeRule[] = [unsupportedVersionCode];
