// What a probe is: a named, data-like definition (which eras and versions it applies to, how to
// build its HTTP request, what answer is expected, which rules it is aimed at), and the request
// builders probes share: JSON-RPC bodies with the headers and `_meta` each era requires.
import type { JsonRpcId } from '../codec/jsonrpc.ts';
import type { Tool } from '../exchange/sessions.ts';
import { H, modernRequestHeaders } from '../mcp/headers.ts';
import { judgingInfo, META, type Era, type VersionInfo } from '../mcp/versions.ts';
import type { Expectation } from './expect.ts';

/** What a probe knows when it is built: the version it runs under and what the server has said so far. */
export interface ProbeContext {
  version: string;
  era: Era;
  /** The legacy session's Mcp-Session-Id, if the server issued one. */
  sessionId: string | undefined;
  /** The server's capabilities (initialize result, or server/discover). */
  capabilities: Record<string, unknown> | undefined;
  /** The tool catalogue the session learned from tools/list. */
  tools: ReadonlyMap<string, Tool>;
  /** tools/list as returned, for the annotations the catalogue does not keep. */
  toolList: readonly unknown[];
  /** false with --no-tool-calls: no tools/call at all. */
  toolCalls: boolean;
  /** --safe-tool names: the only tools argument probes may call, whatever their schema. */
  safeTools: readonly string[];
  /** A random tag for made-up names, so no real tool or resource can match. */
  tag: string;
  /** The JSON-RPC id this probe uses. */
  id: number;
  /** mcp-warden's version, for clientInfo. */
  clientVersion: string;
}

export interface ProbeRequest {
  /** The headers this probe sets (the user's --header values are added by the runner). */
  headers: Record<string, string>;
  body: string;
  /** The id of the request in the body, if it holds one. */
  id: JsonRpcId | undefined;
  /** Judge the exchange as a client of this version, whatever the request declares. */
  judgeAs?: string;
  /** The request may open a session of its own (a second initialize): end it afterwards. */
  opensSession?: boolean;
}

export type Built = ProbeRequest | { skip: string };

export interface ProbeDefinition {
  id: string;
  title: string;
  /** Eras the probe runs in. */
  eras: readonly Era[];
  /** Versions of those eras it applies to, by their row of the versions table (default: all). */
  applies?: (facts: VersionInfo) => boolean;
  /** Catalogue rules aimed at the answer (every rule judges every answer; these are the ones the probe is for). */
  rules: readonly string[];
  build(ctx: ProbeContext): Built;
  expect(ctx: ProbeContext): Expectation;
  /** tools/list and the like: follow nextCursor (bounded). */
  pages?: boolean;
  /** About HTTP itself (statuses, headers, content types, a 202 for a notification): skipped over legacy SSE and stdio. */
  http?: true;
}

export const ACCEPT = 'application/json, text/event-stream';
export const FOREIGN_ORIGIN = 'http://mcp-warden-probe.invalid';
export const UNSUPPORTED_VERSION = '1999-01-01';

/** The `_meta` every 2026-07-28 request carries. */
export function modernMeta(ctx: Pick<ProbeContext, 'version' | 'clientVersion'>, version = ctx.version): Record<string, unknown> {
  return {
    [META.protocolVersion]: version,
    [META.clientCapabilities]: {},
    [META.clientInfo]: { name: 'mcp-warden', version: ctx.clientVersion },
  };
}

/** The versions-table row whose facts hold for the version a probe runs under. */
export const factsOf = (ctx: Pick<ProbeContext, 'version' | 'era'>): VersionInfo => judgingInfo(ctx.version, ctx.era);

/**
 * Headers of an established legacy session: Mcp-Session-Id, and MCP-Protocol-Version where the
 * version asks for it after initialize (basic/transports, "Session Management" and "Protocol
 * Version Header": https://modelcontextprotocol.io/specification/2025-06-18/basic/transports).
 */
export function sessionHeaders(ctx: Pick<ProbeContext, 'sessionId' | 'version' | 'era'>): Record<string, string> {
  if (ctx.era !== 'legacy') return {};
  const out: Record<string, string> = {};
  if (ctx.sessionId !== undefined) out[H.sessionId] = ctx.sessionId;
  if (factsOf(ctx).versionHeaderAfterInit) out[H.protocolVersion] = ctx.version;
  return out;
}

export interface RpcOptions {
  /** A notification: no id. */
  notification?: boolean;
  /** Modern era: leave out params._meta. */
  noMeta?: boolean;
  /** Headers set over (or, with '', removed from) the ones the era requires. */
  headers?: Record<string, string>;
  /** The tool's inputSchema, for Mcp-Param-* headers. */
  inputSchema?: unknown;
}

/** A JSON-RPC request (or notification) as a client of ctx's era sends it, headers included. */
export function rpc(ctx: ProbeContext, method: string, params: Record<string, unknown> = {}, opts: RpcOptions = {}): ProbeRequest {
  const modern = ctx.era === 'modern';
  const withMeta =
    modern && !opts.noMeta && !opts.notification
      ? { ...params, _meta: { ...modernMeta(ctx), ...(params._meta as object | undefined) } }
      : params;
  const id = opts.notification ? undefined : ctx.id;
  const message = { jsonrpc: '2.0', ...(id === undefined ? {} : { id }), method, params: withMeta };
  let headers: Record<string, string> = { accept: ACCEPT, 'content-type': 'application/json' };
  if (modern) headers = { ...headers, [H.protocolVersion]: ctx.version, ...modernRequestHeaders(method, withMeta, opts.inputSchema) };
  else headers = { ...headers, ...sessionHeaders(ctx) };
  for (const [name, value] of Object.entries(opts.headers ?? {})) {
    if (value === '') delete headers[name.toLowerCase()];
    else headers[name.toLowerCase()] = value;
  }
  return { headers, body: JSON.stringify(message), id };
}

/** Whether the server declared a capability. */
export const declares = (ctx: ProbeContext, capability: string): boolean =>
  ctx.capabilities !== undefined && capability in ctx.capabilities;

/** A request every server of the era answers, for probes about the HTTP layer: ping (legacy), server/discover (modern). */
export const plainRequest = (ctx: ProbeContext, opts: RpcOptions = {}): ProbeRequest =>
  ctx.era === 'modern' ? rpc(ctx, 'server/discover', {}, opts) : rpc(ctx, 'ping', {}, opts);

/** Whether a value is an array of strings (a server's list of versions). */
export const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
