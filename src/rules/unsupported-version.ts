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
import { asRecord } from '../codec/json-value.ts';
import { describeError, errorMessage, inBand, isModern, knownVersion, missingMeta } from './read.ts';
import type { ExchangeRule } from './types.ts';
import { LEGACY, MODERN } from './versions.ts';

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

/** The versions a legacy rejection lists: `data.supported`, an array of strings. */
const listsSupported = (data: unknown): boolean => {
  const supported = asRecord(data)?.supported;
  return Array.isArray(supported) && supported.length > 0 && supported.every((v) => typeof v === 'string');
};

// A legacy initialize is negotiated, not refused: a server that does not support the version
// offered MUST answer with one it does (lifecycle, "Version Negotiation"). One that refuses anyway
// should at least say what it supports, as the spec's own example does: -32602 "Unsupported
// protocol version" with data { supported, requested } (-32022 with the same data: a modern
// server turning a legacy client away). Judged only when the error is about the version: the
// version offered is none the spec defines, or the error's words say "version".
export const initializeVersionError: ExchangeRule = codeRule(
  {
    id: 'initialize-version-error',
    group: 'lifecycle',
    severity: 'warning',
    versions: LEGACY,
    summary:
      'A legacy initialize was refused over its protocol version with an error other than -32602 carrying data.supported (the negotiation asks for a version the server supports instead)',
    source:
      'https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#version-negotiation, https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#error-handling',
  },
  (s, e, code) => {
    const offered = asRecord(s.request.params)?.protocolVersion;
    if (s.request.method !== 'initialize' || typeof offered !== 'string' || !(inBand(s) || s.status === 400)) return [];
    if (knownVersion(offered) !== undefined && !/\bversion\b/i.test(errorMessage(e))) return [];
    if ((code === -32602 || code === -32022) && listsSupported(e.data)) return [];
    const asked = JSON.stringify(excerpt(offered, 40));
    return [
      {
        ...atCode(e),
        message: `initialize offering protocol version ${asked} was refused with ${describeError(e)}${code === -32602 || code === -32022 ? ' without data.supported' : ''}: the client cannot tell which version to offer instead`,
        fix: `answer initialize with a version the server supports (the client decides whether it can use it); if it must refuse, {"code":-32602,"message":"Unsupported protocol version","data":{"supported":["${LATEST_OF.legacy}"],"requested":${asked}}}`,
      },
    ];
  },
);

export const UNSUPPORTED_VERSION_RULES: readonly ExchangeRule[] = [unsupportedVersionCode, initializeVersionError];
