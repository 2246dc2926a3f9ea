// The probes `mcp-warden check` sends, in order: each a definition (eras, versions, request,
// expected answer, the rules aimed at it). The runner sends them one at a time; every answer is
// also judged by the whole rule catalogue. The era probes (discover, initialize) come first and
// tell which versions the server speaks; the rest run under the version chosen.
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { argumentPlans, type Plan } from './arguments.ts';
import { gotText, wantError, wantResult } from './expect.ts';
import { declares, factsOf, isStrings, type ProbeDefinition, rpc } from './probe.ts';
import { WIRE_PROBES } from './probes-wire.ts';

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
    http: true,
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
  ...WIRE_PROBES,
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
