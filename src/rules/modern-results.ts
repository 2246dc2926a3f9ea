// What a 2026-07-28 result must say: `resultType`, the shape of an InputRequiredResult (Multi
// Round-Trip Requests), caching hints, and no result at all for a method the era removed.
import { META } from '../mcp/versions.ts';
import { asRecord } from '../codec/json-value.ts';
import { excerpt } from '../redact/excerpt.ts';
import { pointer } from '../codec/json-pointer.ts';
import { answerOf, metaOf, metaVersion, quoted } from './read.ts';
import type { ExchangeRule, ExchangeSubject, Report } from './types.ts';
import { MODERN } from './versions.ts';

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
const modernResult = (s: ExchangeSubject): { result: unknown } | undefined =>
  metaVersion(s.request.params) === undefined ? undefined : answerOf(s, 'result');

const RESULT_TYPES = new Set(['complete', 'input_required']);
/** Methods that may answer with an InputRequiredResult: https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#supported-requests */
const MRTR_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);
/** What an inputRequests entry may ask for: https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#inputrequests */
const INPUT_REQUEST_METHODS = new Set(['elicitation/create', 'sampling/createMessage', 'roots/list']);
/** Methods whose complete results carry ttlMs and cacheScope: https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching#cacheable-results */
const CACHEABLE = new Set([
  'server/discover',
  'tools/list',
  'prompts/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
]);

/** A rule about the result of a modern client request: `check` gets it as an object (undefined when it is not one) and as sent. */
const resultRule = (
  r: Pick<ExchangeRule, 'id' | 'summary' | 'source'> & {
    check(s: ExchangeSubject, result: Record<string, unknown> | undefined, value: unknown): Report[];
  },
): ExchangeRule => ({
  group: 'result-type',
  severity: 'error',
  versions: MODERN,
  party: 'server',
  subject: 'exchange',
  ...r,
  check(s) {
    const answer = modernResult(s);
    return answer ? r.check(s, asRecord(answer.result), answer.result) : [];
  },
});

const RESULT_RULES: readonly ExchangeRule[] = [
  resultRule({
    id: 'result-type-missing',
    summary: 'A 2026-07-28 result lacks resultType',
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#result-responses',
    check(s, result, value): Report[] {
      if (result && 'resultType' in result) return [];
      return [
        {
          message: result
            ? `${s.request.method} result has no resultType (required from 2026-07-28)`
            : `${s.request.method} result is not an object, so it has no resultType`,
          pointer: result ? '/response/result/resultType' : '/response/result',
          evidence: excerpt(value),
          fix: 'send every result as an object with "resultType": "complete" (or "input_required" for an InputRequiredResult)',
        },
      ];
    },
  }),
  resultRule({
    id: 'result-type-unknown',
    summary: 'A 2026-07-28 result has a resultType other than complete or input_required',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/basic/index#result-responses, https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning#extension-negotiation',
    check(s, result): Report[] {
      if (!result || !('resultType' in result)) return [];
      const value = result.resultType;
      if (typeof value === 'string' && RESULT_TYPES.has(value)) return [];
      // An extension both sides advertise may define more values; the proxy cannot tell which.
      if (typeof value === 'string' && extensionPossible(s)) return [];
      return [
        {
          message: `${s.request.method} result has resultType ${quoted(value)}, which is not "complete" or "input_required" and no negotiated extension defines`,
          pointer: '/response/result/resultType',
          evidence: excerpt(value),
          fix: 'use "resultType": "complete" for a final result or "input_required" for an InputRequiredResult',
        },
      ];
    },
  }),
  resultRule({
    id: 'input-required-not-allowed',
    summary:
      'An InputRequiredResult answers a method other than tools/call, prompts/get, resources/read, or carries neither inputRequests nor requestState',
    source:
      'https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#supported-requests, https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#inputrequiredresult',
    check(s, result): Report[] {
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
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr#inputrequests',
    check(s, result): Report[] {
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
          message: `${s.request.method} InputRequiredResult asks for ${bad.length === 1 ? 'an input' : `${bad.length} inputs`} that ${bad.length === 1 ? 'is not' : 'are not'} elicitation/create, sampling/createMessage or roots/list (${bad
            .map(([k]) => k)
            .slice(0, 3)
            .join(', ')})`,
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
    source: 'https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching#cacheable-results',
    check(s, result): Report[] {
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

const REMOVED = new Set(['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const removedMethod: ExchangeRule = {
  id: 'removed-method',
  group: 'lifecycle',
  severity: 'warning',
  versions: MODERN,
  party: 'server',
  subject: 'exchange',
  summary:
    'A 2026-07-28 request for a removed method (initialize, ping, logging/setLevel, resources/(un)subscribe, tasks/*) got a result instead of -32601',
  source: 'https://modelcontextprotocol.io/specification/2026-07-28/changelog#major-changes',
  check(s): Report[] {
    const { method } = s.request;
    const tasks = method.startsWith('tasks/');
    if (!REMOVED.has(method) && !tasks) return [];
    // tasks/* lives on in an extension: fine when both sides advertise it (or the server's side is unknown).
    if (tasks && extensionPossible(s, TASKS_EXTENSION)) return [];
    const r = modernResult(s);
    if (!r) return [];
    return [
      {
        message: `${method} is not part of 2026-07-28, yet a modern request for it got a result`,
        pointer: '/response/result',
        evidence: excerpt(r.result),
        fix: `answer a modern ${method} request with HTTP 404 and {"error":{"code":-32601,"message":"Method not found"}}${tasks ? ` (or advertise the ${TASKS_EXTENSION} extension)` : ''}`,
      },
    ];
  },
};

export const MODERN_RESULT_RULES: readonly ExchangeRule[] = [...RESULT_RULES, removedMethod];
