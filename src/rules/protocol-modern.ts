// The modern era's per-request rules (2026-07-28): the `_meta` and the headers every request
// carries, `resultType` and Multi Round-Trip Requests, caching hints, removed methods, and what a
// stateless HTTP exchange must not carry (sessions, client responses, cancellation notifications).
// Rules.md: R10, R18, R30, R46-R49, R52, R64, R67-R69, R71. What this family leaves out, and why,
// is listed at the top of protocol.ts.
import type { IncomingHttpHeaders } from 'node:http';
import type { Decoded } from '../codec/json-body.ts';
import type { Message } from '../codec/jsonrpc.ts';
import { H } from '../mcp/headers.ts';
import { META } from '../mcp/versions.ts';
import { asRecord, excerpt, pointer } from './evidence.ts';
import type { ExchangeRule, ExchangeSubject, PostRule, PostSubject, Report } from './types.ts';
import { MODERN } from './versions.ts';

// ---- readers shared with protocol.ts (pure, total) ----

/** A header's value (the first, if repeated); undefined when absent. */
export function headerOf(headers: IncomingHttpHeaders | undefined, name: string): string | undefined {
  const v = headers?.[name];
  if (Array.isArray(v)) return v[0];
  return typeof v === 'string' ? v : undefined;
}

/** Every value of a header (a repeated header gives several). */
export function headerValues(headers: IncomingHttpHeaders | undefined, name: string): string[] {
  const v = headers?.[name];
  if (Array.isArray(v)) return v;
  return typeof v === 'string' ? [v] : [];
}

export const metaOf = (params: unknown): Record<string, unknown> | undefined => asRecord(asRecord(params)?._meta);

/** The protocol version a request's `_meta` declares: only modern requests carry one. */
export function metaVersion(params: unknown): string | undefined {
  const v = metaOf(params)?.[META.protocolVersion];
  return typeof v === 'string' ? v : undefined;
}

/** The messages of a decoded body; none when it did not decode. */
export const messagesOf = (d: Decoded | undefined): readonly Message[] => (d?.ok ? d.payload.messages : []);

/** Pointer to message `i` of a body (`/request`, or `/request/2` in a batch), then `rest`. */
export function messagePointer(where: 'request' | 'response', d: Decoded | undefined, i: number, ...rest: Array<string | number>): string {
  return d?.ok && d.payload.batch ? pointer(where, i, ...rest) : pointer(where, ...rest);
}

export const is2xx = (status: number | undefined): boolean => status !== undefined && status >= 200 && status < 300;

const keysOf = (v: unknown): string[] => Object.keys(asRecord(v) ?? {});

/** Extension identifiers the request's `_meta` client capabilities advertise. */
const clientExtensions = (params: unknown): string[] => keysOf(asRecord(metaOf(params)?.[META.clientCapabilities])?.extensions);

/** Extension identifiers the server advertised in server/discover; undefined when the proxy has not seen its capabilities. */
const serverExtensions = (s: ExchangeSubject): string[] | undefined =>
  s.session.serverCapabilities === undefined ? undefined : keysOf(s.session.serverCapabilities.extensions);

/** Whether an extension may be in use on this exchange: the client advertised it, and the server did too (or the proxy cannot tell). */
function extensionPossible(s: ExchangeSubject, id?: string): boolean {
  const client = clientExtensions(s.request.params);
  const server = serverExtensions(s);
  if (id === undefined) return client.length > 0 && (server === undefined || server.length > 0);
  return client.includes(id) && (server === undefined || server.includes(id));
}

/** The result of a modern client request (one that declares its version in `_meta`), if it got one. */
function modernResult(s: ExchangeSubject): { result: unknown } | undefined {
  if (s.request.from !== 'client' || metaVersion(s.request.params) === undefined || s.response?.kind !== 'result') return undefined;
  return { result: s.response.result };
}

// ---- result rules (R64, R67, R68, R69) ----

const RESULT_TYPES = new Set(['complete', 'input_required']);
/** Methods that may answer with an InputRequiredResult (R69). */
const MRTR_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);
/** What an inputRequests entry may ask for (R68). */
const INPUT_REQUEST_METHODS = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);
/** Methods whose complete results carry ttlMs and cacheScope (R67). */
const CACHEABLE = new Set(['server/discover', 'tools/list', 'prompts/list', 'resources/list', 'resources/templates/list', 'resources/read']);

const resultRule = (r: Pick<ExchangeRule, 'id' | 'summary' | 'source' | 'check'>): ExchangeRule => ({
  group: 'result-type',
  severity: 'error',
  versions: MODERN,
  party: 'server',
  subject: 'exchange',
  ...r,
});

const MODERN_RESULT_RULES: readonly ExchangeRule[] = [
  resultRule({
    id: 'result-type-missing',
    summary: 'A 2026-07-28 result lacks resultType',
    source: 'R64',
    check(s): Report[] {
      const r = modernResult(s);
      if (!r) return [];
      const result = asRecord(r.result);
      if (result && 'resultType' in result) return [];
      return [
        {
          message: result
            ? `${s.request.method} result has no resultType (required from 2026-07-28)`
            : `${s.request.method} result is not an object, so it has no resultType`,
          pointer: result ? '/response/result/resultType' : '/response/result',
          evidence: excerpt(r.result),
          fix: 'send every result as an object with "resultType": "complete" (or "input_required" for an InputRequiredResult)',
        },
      ];
    },
  }),
  resultRule({
    id: 'result-type-unknown',
    summary: 'A 2026-07-28 result has a resultType other than complete or input_required',
    source: 'R64, R27',
    check(s): Report[] {
      const r = modernResult(s);
      const result = asRecord(r?.result);
      if (!result || !('resultType' in result)) return [];
      const value = result.resultType;
      if (typeof value === 'string' && RESULT_TYPES.has(value)) return [];
      // An extension both sides advertise may define more values; the proxy cannot tell which.
      if (typeof value === 'string' && extensionPossible(s)) return [];
      return [
        {
          message: `${s.request.method} result has resultType ${JSON.stringify(value)}, which is not "complete" or "input_required" and no negotiated extension defines`,
          pointer: '/response/result/resultType',
          evidence: excerpt(value),
          fix: 'use "resultType": "complete" for a final result or "input_required" for an InputRequiredResult',
        },
      ];
    },
  }),
  resultRule({
    id: 'input-required-not-allowed',
    summary: 'An InputRequiredResult answers a method other than tools/call, prompts/get, resources/read, or carries neither inputRequests nor requestState',
    source: 'R69',
    check(s): Report[] {
      const result = asRecord(modernResult(s)?.result);
      if (result?.resultType !== 'input_required') return [];
      const out: Report[] = [];
      if (!MRTR_METHODS.has(s.request.method)) {
        out.push({
          message: `${s.request.method} was answered with an InputRequiredResult; only tools/call, prompts/get and resources/read may ask for input`,
          pointer: '/response/result/resultType',
          evidence: excerpt(result),
          fix: `answer ${s.request.method} with a "complete" result or a JSON-RPC error`,
        });
      }
      const has = (k: string): boolean => result[k] !== undefined && result[k] !== null;
      if (!has('inputRequests') && !has('requestState')) {
        out.push({
          message: `${s.request.method} InputRequiredResult carries neither inputRequests nor requestState`,
          pointer: '/response/result',
          evidence: excerpt(result),
          fix: 'include inputRequests (what the client must answer) and/or requestState (what the retry must echo)',
        });
      }
      return out;
    },
  }),
  resultRule({
    id: 'input-requests-shape',
    summary: 'An inputRequests entry is not an elicitation/create, sampling/createMessage or roots/list request',
    source: 'R68',
    check(s): Report[] {
      const result = asRecord(modernResult(s)?.result);
      if (result?.resultType !== 'input_required' || result.inputRequests === undefined) return [];
      const requests = asRecord(result.inputRequests);
      if (!requests) {
        return [
          {
            message: `${s.request.method} InputRequiredResult has an inputRequests that is not an object`,
            pointer: '/response/result/inputRequests',
            evidence: excerpt(result.inputRequests),
            fix: 'send inputRequests as an object mapping your keys to request objects ({"method": "elicitation/create", "params": {...}})',
          },
        ];
      }
      const bad = Object.entries(requests).filter(([, v]) => {
        const method = asRecord(v)?.method;
        return typeof method !== 'string' || !INPUT_REQUEST_METHODS.has(method);
      });
      const first = bad[0];
      if (!first) return [];
      return [
        {
          message: `${s.request.method} InputRequiredResult asks for ${bad.length === 1 ? 'an input' : `${bad.length} inputs`} that ${bad.length === 1 ? 'is not' : 'are not'} elicitation/create, sampling/createMessage or roots/list (${bad.map(([k]) => k).slice(0, 3).join(', ')})`,
          pointer: pointer('response', 'result', 'inputRequests', first[0]),
          evidence: excerpt(first[1]),
          fix: 'put only {"method": "elicitation/create" | "sampling/createMessage" | "roots/list", "params": {...}} objects in inputRequests',
        },
      ];
    },
  }),
  resultRule({
    id: 'caching-hints',
    summary: 'A complete discover/list/read result lacks an integer ttlMs >= 0 or a cacheScope of public/private',
    source: 'R67',
    check(s): Report[] {
      const r = modernResult(s);
      const result = asRecord(r?.result);
      if (!result || !CACHEABLE.has(s.request.method)) return [];
      // A result without resultType counts as complete (result-type-missing reports the omission).
      if (result.resultType !== undefined && result.resultType !== 'complete') return [];
      const out: Report[] = [];
      const { ttlMs, cacheScope } = result;
      if (!(typeof ttlMs === 'number' && Number.isInteger(ttlMs) && ttlMs >= 0)) {
        out.push({
          message: `${s.request.method} result ${ttlMs === undefined ? 'has no ttlMs' : `has ttlMs ${excerpt(ttlMs, 40)}, not an integer >= 0`}`,
          pointer: '/response/result/ttlMs',
          evidence: excerpt(ttlMs === undefined ? result : ttlMs),
          fix: 'add "ttlMs": <integer milliseconds the client may cache the result, 0 for immediately stale>',
        });
      }
      if (cacheScope !== 'public' && cacheScope !== 'private') {
        out.push({
          message: `${s.request.method} result ${cacheScope === undefined ? 'has no cacheScope' : `has cacheScope ${excerpt(cacheScope, 40)}, not "public" or "private"`}`,
          pointer: '/response/result/cacheScope',
          evidence: excerpt(cacheScope === undefined ? result : cacheScope),
          fix: 'add "cacheScope": "private" (per authorization context) or "public" (no user-specific data)',
        });
      }
      return out;
    },
  }),
];

// ---- per-request metadata and headers (R18, R47, R48, R49) ----

/** Decodes a `=?base64?...?=` header value (R49); plain values come back as they are. */
export function decodeHeaderValue(value: string): { ok: true; value: string } | { ok: false } {
  if (!(value.length >= 11 && value.startsWith('=?base64?') && value.endsWith('?='))) return { ok: true, value };
  const b64 = value.slice(9, -2);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64) || b64.replace(/=+$/, '').length % 4 === 1) return { ok: false };
  try {
    return { ok: true, value: new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(b64, 'base64')) };
  } catch {
    return { ok: false };
  }
}

/** How a value must travel in a header: as is when it is plain visible ASCII, else in the base64 sentinel. */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !value.startsWith('=?base64?');
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/** Methods whose Mcp-Name header mirrors a param, and which one (R48). */
const NAME_PARAM: Readonly<Record<string, string>> = { 'tools/call': 'name', 'prompts/get': 'name', 'resources/read': 'uri' };

const clientRule = (r: Pick<ExchangeRule, 'id' | 'summary' | 'source' | 'check'>): ExchangeRule => ({
  group: 'client',
  severity: 'error',
  versions: MODERN,
  party: 'client',
  subject: 'exchange',
  ...r,
});

/** How the spec spells the headers, for messages. */
const HEADER_NAMES: Readonly<Record<string, string>> = { [H.protocolVersion]: 'MCP-Protocol-Version', [H.method]: 'Mcp-Method', [H.name]: 'Mcp-Name' };

/** Compares one request header with the body value it must mirror; a report when it is absent, malformed or different. */
function compareHeader(s: ExchangeSubject, name: string, expected: string, what: string): Report | undefined {
  const raw = headerOf(s.requestHeaders, name);
  const canonical = HEADER_NAMES[name] ?? name;
  const fix = `send ${canonical}: ${encodeHeaderValue(expected)} (equal to ${what})`;
  const at = pointer('headers', name);
  if (raw === undefined) return { message: `${s.request.method} request has no ${canonical} header`, pointer: at, evidence: '(absent)', fix };
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

const MODERN_REQUEST_RULES: readonly ExchangeRule[] = [
  clientRule({
    id: 'missing-request-meta',
    summary: 'A 2026-07-28 request lacks _meta protocolVersion or clientCapabilities',
    source: 'R18',
    check(s): Report[] {
      if (s.request.from !== 'client') return [];
      const meta = metaOf(s.request.params);
      const out: Report[] = [];
      const version = meta?.[META.protocolVersion];
      if (typeof version !== 'string') {
        out.push({
          message: `${s.request.method} request ${version === undefined ? 'lacks' : 'has a non-string'} _meta["${META.protocolVersion}"]`,
          pointer: pointer('request', 'params', '_meta', META.protocolVersion),
          evidence: excerpt(meta ?? s.request.params ?? '(no params)'),
          fix: `send params._meta["${META.protocolVersion}"]: "2026-07-28" on every request`,
        });
      }
      const caps = meta?.[META.clientCapabilities];
      if (!asRecord(caps)) {
        out.push({
          message: `${s.request.method} request ${caps === undefined ? 'lacks' : 'has a non-object'} _meta["${META.clientCapabilities}"]`,
          pointer: pointer('request', 'params', '_meta', META.clientCapabilities),
          evidence: excerpt(meta ?? s.request.params ?? '(no params)'),
          fix: `send params._meta["${META.clientCapabilities}"] on every request ({} when the client supports no optional capability)`,
        });
      }
      return out;
    },
  }),
  clientRule({
    id: 'header-mismatch',
    summary: 'MCP-Protocol-Version, Mcp-Method or Mcp-Name is missing or differs from the request body',
    source: 'R47, R48, R49',
    check(s): Report[] {
      if (s.request.from !== 'client') return [];
      const out: Array<Report | undefined> = [];
      const version = metaVersion(s.request.params);
      if (version !== undefined) out.push(compareHeader(s, H.protocolVersion, version, `_meta protocolVersion`));
      else if (headerOf(s.requestHeaders, H.protocolVersion) === undefined) {
        out.push({ message: `${s.request.method} request has no MCP-Protocol-Version header`, pointer: pointer('headers', H.protocolVersion), evidence: '(absent)', fix: 'send MCP-Protocol-Version: 2026-07-28 on every POST' });
      }
      out.push(compareHeader(s, H.method, s.request.method, 'the body method'));
      const param = NAME_PARAM[s.request.method];
      const value = param === undefined ? undefined : asRecord(s.request.params)?.[param];
      if (param !== undefined && typeof value === 'string') out.push(compareHeader(s, H.name, value, `params.${param}`));
      return out.filter((r): r is Report => r !== undefined);
    },
  }),
];

// ---- methods, sessions and messages the modern era removed (R10, R30, R46, R52, R71) ----

const REMOVED = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const removedMethod: ExchangeRule = {
  id: 'removed-method',
  group: 'lifecycle',
  severity: 'warning',
  versions: MODERN,
  party: 'server',
  subject: 'exchange',
  summary: 'A 2026-07-28 request for a removed method (initialize, ping, logging/setLevel, resources/(un)subscribe, tasks/*) got a result instead of -32601',
  source: 'R71',
  check(s): Report[] {
    const { method } = s.request;
    const tasks = method.startsWith('tasks/');
    if (!REMOVED.has(method) && !tasks) return [];
    // tasks/* lives on in an extension: fine when both sides advertise it (or the server's side is unknown).
    if (tasks && extensionPossible(s, TASKS_EXTENSION)) return [];
    if (!modernResult(s)) return [];
    return [
      {
        message: `${method} is not part of 2026-07-28, yet a modern request for it got a result`,
        pointer: '/response/result',
        evidence: excerpt(s.response?.kind === 'result' ? s.response.result : undefined),
        fix: `answer a modern ${method} request with HTTP 404 and {"error":{"code":-32601,"message":"Method not found"}}${tasks ? ` (or advertise the ${TASKS_EXTENSION} extension)` : ''}`,
      },
    ];
  },
};

const postRule = (r: Omit<PostRule, 'subject' | 'versions'>): PostRule => ({ subject: 'post', versions: MODERN, ...r });

/** Whether the POST carries a request that declares its version in `_meta` (a real modern request). */
const hasModernRequest = (s: PostSubject): boolean => messagesOf(s.request).some((m) => m.kind === 'request' && metaVersion(m.params) !== undefined);

const MODERN_POST_RULES: readonly PostRule[] = [
  postRule({
    id: 'session-id-minted',
    group: 'sessions',
    severity: 'error',
    party: 'server',
    summary: 'A server answered a 2026-07-28 request with an Mcp-Session-Id header',
    source: 'R46',
    check(s): Report[] {
      const sid = headerOf(s.responseHeaders, H.sessionId);
      if (sid === undefined || !is2xx(s.status) || !hasModernRequest(s)) return [];
      return [
        {
          message: `a 2026-07-28 request was answered with Mcp-Session-Id; the modern era has no sessions`,
          pointer: pointer('response-headers', H.sessionId),
          evidence: excerpt(sid, 60),
          fix: 'do not set Mcp-Session-Id on 2026-07-28 responses (neither mint nor echo it); carry state in explicit handles or arguments',
        },
      ];
    },
  }),
  postRule({
    id: 'client-response-not-allowed',
    group: 'framing',
    severity: 'error',
    party: 'client',
    summary: 'A 2026-07-28 client POST carries a JSON-RPC response (servers send no requests in the modern era)',
    source: 'R10, R30',
    check(s): Report[] {
      const messages = messagesOf(s.request);
      const i = messages.findIndex((m) => m.kind === 'result' || m.kind === 'error');
      const m = messages[i];
      if (!m) return [];
      return [
        {
          message: 'the client POSTed a JSON-RPC response under 2026-07-28, where a POST holds one request or notification',
          pointer: messagePointer('request', s.request, i),
          evidence: excerpt(m.kind === 'result' || m.kind === 'error' ? m.value : m),
          fix: 'answer input requests by retrying the original request with inputResponses (MRTR), never with a JSON-RPC response',
        },
      ];
    },
  }),
  postRule({
    id: 'cancelled-over-http',
    group: 'notifications',
    severity: 'warning',
    party: 'client',
    summary: 'A 2026-07-28 client sent notifications/cancelled over HTTP, where closing the stream cancels',
    source: 'R52',
    check(s): Report[] {
      const messages = messagesOf(s.request);
      const i = messages.findIndex((m) => m.kind === 'notification' && m.method === 'notifications/cancelled');
      const m = messages[i];
      if (!m || m.kind !== 'notification') return [];
      return [
        {
          message: 'notifications/cancelled was POSTed under 2026-07-28; on HTTP a request is cancelled by closing its response stream',
          pointer: messagePointer('request', s.request, i, 'method'),
          evidence: excerpt(m.params ?? m.method),
          fix: "close the request's SSE response stream (or abort the HTTP request) instead of sending notifications/cancelled",
        },
      ];
    },
  }),
];

export const MODERN_PROTOCOL_RULES: readonly (ExchangeRule | PostRule)[] = [
  ...MODERN_REQUEST_RULES,
  ...MODERN_RESULT_RULES,
  removedMethod,
  ...MODERN_POST_RULES,
];
