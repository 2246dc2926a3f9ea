// What every 2026-07-28 client request carries: the `_meta` protocol version and client
// capabilities, and the headers that mirror its body.
import { decodeHeaderValue, encodeHeaderValue, H, headerOf } from '../mcp/headers.ts';
import { META } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt, requestExcerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { metaOf, metaVersion, missingMeta } from './read.ts';
import type { ExchangeRule, ExchangeSubject, Report } from './types.ts';
import { MODERN } from './versions.ts';
import { STREAMABLE_HTTP } from './wires.ts';

/** Methods whose Mcp-Name header mirrors a param, and which one: https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#standard-request-headers */
const NAME_PARAM: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

/** A rule about what a client request carries; server-to-client requests are not judged. */
const clientRule = (r: Pick<ExchangeRule, 'id' | 'summary' | 'source' | 'check' | 'transports'>): ExchangeRule => ({
  group: 'client',
  severity: 'error',
  versions: MODERN,
  party: 'client',
  subject: 'exchange',
  ...r,
  check: (s) => (s.request.from === 'client' ? r.check(s) : []),
});

/** How the spec spells the headers, for messages. */
const HEADER_NAMES: Readonly<Record<string, string>> = {
  [H.protocolVersion]: 'MCP-Protocol-Version',
  [H.method]: 'Mcp-Method',
  [H.name]: 'Mcp-Name',
};

/** Compares one request header with the body value it must mirror; a report when it is absent, malformed or different. */
function compareHeader(s: ExchangeSubject, name: string, expected: string, what: string): Report | undefined {
  const raw = headerOf(s.requestHeaders, name);
  const canonical = HEADER_NAMES[name] ?? name;
  const fix = `send ${canonical}: ${encodeHeaderValue(expected)} (equal to ${what})`;
  const at = pointer('headers', name);
  if (raw === undefined)
    return { message: `${s.request.method} request has no ${canonical} header`, pointer: at, evidence: '(absent)', fix };
  const decoded = decodeHeaderValue(raw);
  if (!decoded.ok) return { message: `${canonical} header is not a valid =?base64?...?= value`, pointer: at, evidence: excerpt(raw), fix };
  if (decoded.value === expected) return undefined;
  return {
    message: `${canonical} header ${excerpt(decoded.value, 60)} does not match ${what} ${excerpt(expected, 60)}`,
    pointer: at,
    evidence: excerpt(raw),
    fix,
  };
}

/** What a required `_meta` key holds when it is malformed, and how to send it. */
const REQUIRED_META: Readonly<Record<string, { malformed: string; fix: string }>> = {
  [META.protocolVersion]: { malformed: 'a non-string', fix: `send params._meta["${META.protocolVersion}"]: "2026-07-28" on every request` },
  [META.clientCapabilities]: {
    malformed: 'a non-object',
    fix: `send params._meta["${META.clientCapabilities}"] on every request ({} when the client supports no optional capability)`,
  },
};

export const MODERN_REQUEST_RULES: readonly ExchangeRule[] = [
  clientRule({
    id: 'missing-request-meta',
    summary: 'A 2026-07-28 request lacks _meta protocolVersion or clientCapabilities',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#meta',
    check(s): Report[] {
      const meta = metaOf(s.request.params);
      return missingMeta(s.request.params).map((key) => ({
        message: `${s.request.method} request ${meta?.[key] === undefined ? 'lacks' : `has ${REQUIRED_META[key]!.malformed}`} _meta["${key}"]`,
        pointer: pointer('request', 'params', '_meta', key),
        evidence: meta ? excerpt(meta) : requestExcerpt({ params: s.request.params ?? '(no params)' }),
        fix: REQUIRED_META[key]!.fix,
      }));
    },
  }),
  clientRule({
    id: 'header-mismatch',
    transports: STREAMABLE_HTTP,
    summary: 'MCP-Protocol-Version, Mcp-Method or Mcp-Name is missing or differs from the request body',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#protocol-version-header, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#standard-request-headers, https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http#value-encoding',
    check(s): Report[] {
      const out: Array<Report | undefined> = [];
      const version = metaVersion(s.request.params);
      if (version !== undefined) out.push(compareHeader(s, H.protocolVersion, version, `_meta protocolVersion`));
      else if (headerOf(s.requestHeaders, H.protocolVersion) === undefined) {
        out.push({
          message: `${s.request.method} request has no MCP-Protocol-Version header`,
          pointer: pointer('headers', H.protocolVersion),
          evidence: '(absent)',
          fix: 'send MCP-Protocol-Version: 2026-07-28 on every POST',
        });
      }
      out.push(compareHeader(s, H.method, s.request.method, 'the body method'));
      const param = NAME_PARAM[s.request.method];
      const value = param === undefined ? undefined : asRecord(s.request.params)?.[param];
      if (param !== undefined && typeof value === 'string') out.push(compareHeader(s, H.name, value, `params.${param}`));
      return out.filter((r): r is Report => r !== undefined);
    },
  }),
];
