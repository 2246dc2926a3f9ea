// The probes `mcp-warden check` sends, in order: each a definition (eras, versions, request,
// expected answer, the rules aimed at it). The runner sends them one at a time; every answer is
// also judged by the whole rule catalogue. The era probes (discover, initialize) come first and
// tell which versions the server speaks; the rest run under the version chosen.
import { LATEST_VERSION } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { LEGACY } from '../rules/versions.ts';
import { argumentPlans, type Plan } from './arguments.ts';
import { gotText, wantError, wantRejected, wantResult } from './expect.ts';
import { declares, factsOf, FOREIGN_ORIGIN, plainRequest, rpc, UNSUPPORTED_VERSION, type ProbeDefinition } from './probe.ts';

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const unknownTool = (tag: string): string => `mcp_warden_probe_no_such_tool_${tag}`;
const unknownUri = (tag: string): string => `mcp-warden-probe://no-such-resource/${tag}`;

/** server/discover: the first request of a 2026-07-28 client (https://modelcontextprotocol.io/specification/2026-07-28/server/discover). */
export const DISCOVER: ProbeDefinition = {
  id: 'discover',
  title: 'server/discover (2026-07-28)',
  eras: ['modern'],
  rules: ['server-discover-missing', 'result-type-missing', 'caching-hints'],
  build: (ctx) => rpc(ctx, 'server/discover'),
  expect: () =>
    wantResult(
      'result: supportedVersions, capabilities',
      'implement server/discover: supportedVersions, capabilities, ttlMs, cacheScope, resultType "complete"',
      (_a, r) =>
        isStrings(r.supportedVersions) && asRecord(r.capabilities)
          ? []
          : [
              {
                message: 'the server/discover result lacks supportedVersions (strings) or capabilities (an object)',
                pointer: '/response/result',
                evidence: excerpt(r),
                fix: 'return supportedVersions: ["2026-07-28", ...] and a capabilities object',
              },
            ],
    ),
};

/** initialize: the legacy handshake, proposing the newest legacy version (or --protocol): https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle */
export const INITIALIZE: ProbeDefinition = {
  id: 'initialize',
  title: 'initialize (legacy handshake)',
  eras: ['legacy'],
  rules: ['initialize-version'],
  build: (ctx) =>
    rpc(
      ctx,
      'initialize',
      { protocolVersion: ctx.version, capabilities: {}, clientInfo: { name: 'mcp-warden', version: ctx.clientVersion } },
      { headers: { 'mcp-protocol-version': '', 'mcp-session-id': '' } },
    ),
  expect: (ctx) =>
    wantResult(
      `result negotiating ${ctx.version} (or another)`,
      'answer initialize with protocolVersion, capabilities and serverInfo',
      (_a, r) =>
        asRecord(r.capabilities) && typeof r.protocolVersion === 'string'
          ? []
          : [
              {
                message: 'the initialize result lacks protocolVersion or capabilities',
                pointer: '/response/result',
                evidence: excerpt(r),
                fix: 'return protocolVersion, capabilities and serverInfo',
              },
            ],
    ),
};

export const PROBES: readonly ProbeDefinition[] = [
  {
    id: 'notification',
    title: 'A notification',
    eras: ['legacy', 'modern'],
    rules: ['notification-answered-with-body'],
    build: (ctx) =>
      ctx.era === 'legacy'
        ? rpc(ctx, 'notifications/initialized', {}, { notification: true })
        : rpc(
            ctx,
            'notifications/cancelled',
            { requestId: `mcp-warden-${ctx.tag}`, reason: 'mcp-warden check probe' },
            { notification: true },
          ),
    expect: (ctx) => ({
      text: ctx.era === 'legacy' ? '202 Accepted, no body' : '202 Accepted with no body, or a 4xx rejection',
      fix: 'accept a notification with HTTP 202 and an empty body',
      check(a) {
        const status = a.status ?? 0;
        if (status === 202 && a.bytes === 0) return [];
        if (status >= 400 && status < 500 && ctx.era === 'modern') return [];
        if (status >= 200 && status < 300) return []; // notification-answered-with-body judges it
        const method = ctx.era === 'legacy' ? 'notifications/initialized' : 'notifications/cancelled';
        return [
          {
            message: `${method} got ${gotText(a)} instead of 202`,
            pointer: '/status',
            evidence: `HTTP ${status}`,
            fix: `accept ${method} with HTTP 202 and an empty body`,
            ...(status < 500 ? { severity: 'warning' as const } : {}),
          },
        ];
      },
    }),
  },
  {
    id: 'ping',
    title: 'ping',
    eras: ['legacy'],
    rules: ['ping-result'],
    build: (ctx) => rpc(ctx, 'ping'),
    expect: () => wantResult('empty result {}', 'answer ping with {"result": {}}'),
  },
  {
    id: 'tools-list',
    title: 'tools/list',
    eras: ['legacy', 'modern'],
    rules: ['tools-list-shape', 'caching-hints', 'result-type-missing'],
    pages: true,
    build: (ctx) => (declares(ctx, 'tools') ? rpc(ctx, 'tools/list') : { skip: 'the server declares no tools capability' }),
    expect: () =>
      wantResult('result with a tools array', 'return {"tools": [...]}', (_a, r) =>
        Array.isArray(r.tools)
          ? []
          : [
              {
                message: 'the tools/list result has no tools array',
                pointer: '/response/result/tools',
                evidence: excerpt(r),
                fix: 'return {"tools": [...]}',
              },
            ],
      ),
  },
  {
    id: 'unknown-method',
    title: 'An unknown method',
    eras: ['legacy', 'modern'],
    rules: ['unknown-method-wrong-code', 'unknown-method-status'],
    build: (ctx) => rpc(ctx, 'mcp-warden/no-such-method'),
    expect: (ctx) =>
      ctx.era === 'modern'
        ? wantError({
            codes: [-32601],
            statuses: [404],
            text: 'error -32601 on HTTP 404',
            fix: 'answer a method the server does not implement with HTTP 404 and -32601 (Method not found)',
          })
        : wantError({
            codes: [-32601],
            statuses: [200],
            statusSeverity: 'warning',
            text: 'error -32601 on HTTP 200',
            fix: 'answer a method the server does not implement with -32601 (Method not found) on HTTP 200 (a legacy 404 means "session expired")',
          }),
  },
  {
    id: 'unknown-tool',
    title: 'tools/call of a tool that does not exist',
    eras: ['legacy', 'modern'],
    rules: ['unknown-tool-as-iserror', 'unknown-tool-as-result', 'unknown-tool-wrong-code'],
    build: (ctx) => {
      if (!declares(ctx, 'tools')) return { skip: 'the server declares no tools capability' };
      if (!ctx.toolCalls) return { skip: 'tool calls are off (--no-tool-calls)' };
      return rpc(ctx, 'tools/call', { name: unknownTool(ctx.tag), arguments: {} });
    },
    expect: (ctx) =>
      wantError({
        codes: [-32602],
        text: 'error -32602 "Unknown tool: ..."',
        fix: `answer with a JSON-RPC error {"code": -32602, "message": "Unknown tool: ${unknownTool(ctx.tag)}"}`,
      }),
  },
  argumentProbe('tool-argument-type', 'tools/call with an argument of the wrong type', (ctx) => argumentPlans(ctx).type),
  argumentProbe('tool-argument-missing', 'tools/call without a required argument', (ctx) => argumentPlans(ctx).missing),
  {
    id: 'unknown-resource',
    title: 'resources/read of a resource that does not exist',
    eras: ['legacy', 'modern'],
    rules: ['resource-not-found-code', 'retired-code'],
    build: (ctx) =>
      declares(ctx, 'resources')
        ? rpc(ctx, 'resources/read', { uri: unknownUri(ctx.tag) })
        : { skip: 'the server declares no resources capability' },
    expect: (ctx) =>
      wantError({
        codes: ctx.era === 'modern' ? [-32602] : [-32002, -32602],
        codeSeverity: ctx.era === 'modern' ? 'error' : 'warning', // MUST from 2026-07-28, SHOULD before
        text: ctx.era === 'modern' ? 'error -32602' : 'error -32002 (or -32602)',
        fix: ctx.era === 'modern' ? 'answer a missing resource with -32602' : 'answer a missing resource with -32002 and data { uri }',
      }),
  },
  {
    id: 'malformed-json',
    title: 'A body that is not JSON',
    eras: ['legacy', 'modern'],
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

function argumentProbe(id: string, title: string, plan: (ctx: Parameters<ProbeDefinition['build']>[0]) => Plan): ProbeDefinition {
  return {
    id,
    title,
    eras: ['legacy', 'modern'],
    rules: ['vague-iserror', 'input-validation-as-protocol-error'],
    build(ctx) {
      if (!declares(ctx, 'tools')) return { skip: 'the server declares no tools capability' };
      const p = plan(ctx);
      if ('skip' in p) return p;
      return rpc(ctx, 'tools/call', { name: p.tool, arguments: p.arguments }, { inputSchema: p.inputSchema });
    },
    expect(ctx) {
      const p = plan(ctx);
      const what = 'skip' in p ? 'the arguments' : `${p.tool}: ${p.why}`;
      const fix = 'validate arguments against the inputSchema and answer with an isError result naming the parameter and what is valid';
      return {
        text: `${factsOf(ctx).inputErrorsAreToolErrors ? 'isError' : 'isError (or -32602)'} naming the parameter; ${what}`,
        fix,
        check(a) {
          if (a.result) {
            if (a.result.isError === true) return []; // vague-iserror judges the wording
            return [
              {
                message: `the server ran ${'skip' in p ? 'the tool' : p.tool} with arguments that fail its inputSchema (${what}) and returned a plain result`,
                pointer: '/response/result',
                evidence: excerpt(a.result),
                fix,
              },
            ];
          }
          if (a.error?.code === -32602) return []; // input-validation-as-protocol-error judges it from 2025-11-25
          return [
            {
              message: `expected an isError result, got ${gotText(a)}`,
              pointer: a.error ? '/response/error/code' : '/response',
              evidence: excerpt(a.error?.value.error ?? a.status),
              fix,
            },
          ];
        },
      };
    },
  };
}
