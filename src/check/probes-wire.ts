// The probes of `mcp-warden check` about the wire rather than a method: a body that is not JSON,
// protocol versions and their header, the 2026-07-28 headers and _meta, Accept, and a foreign
// Origin. They run after the method probes of probes.ts, in this order.
import { LATEST_VERSION } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { LEGACY } from '../rules/versions.ts';
import { gotText, wantError, wantRejected } from './expect.ts';
import { factsOf, FOREIGN_ORIGIN, isStrings, plainRequest, type ProbeDefinition, rpc, UNSUPPORTED_VERSION } from './probe.ts';

export const WIRE_PROBES: readonly ProbeDefinition[] = [
  {
    id: 'malformed-json',
    title: 'A body that is not JSON',
    eras: ['legacy', 'modern'],
    http: true,
    rules: ['parse-error-code', 'parse-error-id'],
    build: (ctx) => {
      const { headers } = rpc(ctx, 'tools/list');
      return { headers, body: '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", ', id: undefined };
    },
    expect: () =>
      wantError({
        codes: [-32700],
        statuses: [400, 200],
        statusSeverity: 'warning',
        text: 'error -32700 with id null, HTTP 400',
        fix: 'answer a body that does not parse with HTTP 400 and {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
      }),
  },
  {
    id: 'unsupported-version',
    title: 'An unsupported protocol version',
    eras: ['legacy', 'modern'],
    http: true,
    rules: ['error-data-required', 'error-status-pairing', 'initialize-version'],
    build: (ctx) =>
      ctx.era === 'modern'
        ? {
            ...rpc(
              ctx,
              'server/discover',
              { _meta: { 'io.modelcontextprotocol/protocolVersion': UNSUPPORTED_VERSION } },
              { headers: { 'mcp-protocol-version': UNSUPPORTED_VERSION } },
            ),
            judgeAs: ctx.version,
          }
        : {
            ...rpc(
              ctx,
              'initialize',
              { protocolVersion: UNSUPPORTED_VERSION, capabilities: {}, clientInfo: { name: 'mcp-warden', version: ctx.clientVersion } },
              { headers: { 'mcp-protocol-version': '', 'mcp-session-id': '' } },
            ),
            judgeAs: ctx.version,
            opensSession: true,
          },
    expect: (ctx) =>
      ctx.era === 'modern'
        ? wantError({
            codes: [-32022],
            statuses: [400],
            text: 'error -32022 with data.supported, HTTP 400',
            fix: `answer with HTTP 400 and -32022 {"data": {"supported": ["${LATEST_VERSION}"], "requested": "${UNSUPPORTED_VERSION}"}}`,
            more: (_a, e) =>
              isStrings(asRecord(e.data)?.supported) && typeof asRecord(e.data)?.requested === 'string'
                ? []
                : [
                    {
                      message: '-32022 lacks data.supported (an array of versions) or data.requested',
                      pointer: '/response/error/data',
                      evidence: excerpt(e.data ?? e.value.error),
                      fix: `include data {"supported": ["${LATEST_VERSION}"], "requested": "${UNSUPPORTED_VERSION}"}`,
                    },
                  ],
          })
        : {
            text: 'result with a supported version',
            fix: 'answer an unknown proposal with the latest version the server supports',
            check(a) {
              const version = a.result?.protocolVersion;
              if (a.result)
                return typeof version === 'string' && LEGACY.includes(version)
                  ? []
                  : [
                      {
                        message: `initialize for ${UNSUPPORTED_VERSION} negotiated ${excerpt(version, 40)}`,
                        pointer: '/response/result/protocolVersion',
                        evidence: excerpt(version),
                        fix: 'answer with a version the server supports',
                      },
                    ];
              if (a.error?.code === -32602 && isStrings(asRecord(a.error.data)?.supported)) return [];
              return [
                {
                  message: `initialize proposing ${UNSUPPORTED_VERSION} got ${gotText(a)}, neither a negotiated version nor -32602 with data.supported`,
                  pointer: '/response',
                  evidence: excerpt(a.error?.value ?? a.status),
                  fix: 'answer with the latest version the server supports, which the client may accept or not',
                },
              ];
            },
          },
  },
  {
    id: 'bad-version-header',
    title: 'MCP-Protocol-Version naming an unsupported version',
    eras: ['legacy'],
    http: true,
    applies: (v) => v.versionHeaderAfterInit,
    rules: [],
    build: (ctx) => rpc(ctx, 'ping', {}, { headers: { 'mcp-protocol-version': UNSUPPORTED_VERSION } }),
    expect: () =>
      wantRejected({
        text: 'HTTP 400',
        preferred: 400,
        otherSeverity: 'warning',
        fix: 'answer a request whose MCP-Protocol-Version is invalid or unsupported with HTTP 400',
      }),
  },
  {
    id: 'header-mismatch',
    title: 'Mcp-Method disagreeing with the body',
    eras: ['modern'],
    http: true,
    rules: ['error-status-pairing'],
    build: (ctx) => rpc(ctx, 'server/discover', {}, { headers: { 'mcp-method': 'tools/list' } }),
    expect: () =>
      wantError({
        codes: [-32020],
        statuses: [400],
        text: 'error -32020 on HTTP 400',
        fix: 'validate Mcp-Method, Mcp-Name and MCP-Protocol-Version against the body; answer a mismatch with HTTP 400 and -32020',
      }),
  },
  {
    id: 'missing-meta',
    title: 'A request without its required _meta',
    eras: ['modern'],
    http: true,
    rules: ['error-status-pairing'],
    build: (ctx) => rpc(ctx, 'server/discover', {}, { noMeta: true, headers: { 'mcp-protocol-version': ctx.version } }),
    expect: () =>
      wantError({
        codes: [-32602],
        statuses: [400],
        text: 'error -32602 on HTTP 400',
        fix: 'reject a request without _meta protocolVersion and clientCapabilities with HTTP 400 and -32602',
      }),
  },
  {
    id: 'wrong-accept',
    title: 'Accept without application/json and text/event-stream',
    eras: ['legacy', 'modern'],
    http: true,
    applies: (v) => v.streamableHttp,
    rules: ['response-content-type'],
    build: (ctx) => plainRequest(ctx, { headers: { accept: 'text/html' } }),
    expect: () =>
      wantRejected({
        text: 'HTTP 406 Not Acceptable (or another 4xx)',
        preferred: 406,
        otherSeverity: 'info',
        servedSeverity: 'warning',
        fix: 'reject a POST whose Accept lacks application/json or text/event-stream with HTTP 406',
      }),
  },
  {
    id: 'foreign-origin',
    title: 'A foreign Origin',
    eras: ['legacy', 'modern'],
    http: true,
    applies: (v) => v.streamableHttp,
    rules: [],
    build: (ctx) => plainRequest(ctx, { headers: { origin: FOREIGN_ORIGIN } }),
    expect: (ctx) =>
      factsOf(ctx).foreignOrigin403
        ? wantRejected({
            text: 'HTTP 403 Forbidden',
            preferred: 403,
            fix: `validate Origin and answer one you do not serve (${FOREIGN_ORIGIN}) with HTTP 403 (DNS rebinding)`,
          })
        : wantRejected({
            text: 'a 4xx rejection',
            fix: `validate Origin and reject one you do not serve (${FOREIGN_ORIGIN}) (DNS rebinding)`,
          }),
  },
];
