// Readers and builders the rewriters share. Pure and total: every input yields a value, nothing
// throws. A rewriter sees the response as it stands after earlier rewrites, so it reads the
// message it is handed (never the subject's original response) to decide whether it still has
// something to fix.
import { jsonText } from '../codec/json-text.ts';
import type { JsonRpcId } from '../codec/jsonrpc.ts';
import { META, versionInfo } from '../mcp/versions.ts';
import { idlessAllowed } from '../rules/error-envelope.ts';
import { asRecord } from '../codec/json-value.ts';
import type { ExchangeSubject } from '../rules/types.ts';
import { copyJson } from '../rules/walk.ts';
import type { ResponseMessage, RewriteContext, Rewriter, Rewritten } from './types.ts';

export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const RESOURCE_NOT_FOUND = -32002;

/** The error object of a message, when it is an error response (error, no result). */
export type ErrorObject = Record<string, unknown>;

export const isModern = (version: string | undefined): boolean => versionInfo(version)?.era === 'modern';

export const integerCode = (code: unknown): number | undefined => (typeof code === 'number' && Number.isInteger(code) ? code : undefined);

/** The error object of an error response; undefined for a result or anything else. */
export function errorOf(m: ResponseMessage | undefined): ErrorObject | undefined {
  if (!m || 'result' in m) return undefined;
  return asRecord(m.error);
}

/** The result of a result response, when it is an object; undefined for an error or anything else. */
export function resultOf(m: ResponseMessage | undefined): Record<string, unknown> | undefined {
  if (!m || 'error' in m || !('result' in m)) return undefined;
  return asRecord(m.result);
}

/** Whether a message is a well-formed response envelope (what an earlier rewrite produces). */
export function isResponse(m: ResponseMessage | undefined): m is ResponseMessage {
  const r = asRecord(m);
  if (r?.jsonrpc !== '2.0' || 'result' in r === 'error' in r) return false;
  return !('error' in r) || asRecord(r.error) !== undefined;
}

/**
 * A deep copy of a JSON value, at any depth (no recursion: structuredClone gives up past ~2,000
 * levels, and a message that deep is still the policy's to decide, through unreadable-response);
 * undefined if it cannot be copied.
 */
export function copyOf<T>(value: T): T | undefined {
  try {
    return copyJson(value);
  } catch {
    return undefined;
  }
}

/** The first error with a null or missing id among the responses that matched no request. */
export function idlessError(s: ExchangeSubject): Record<string, unknown> | undefined {
  for (const m of s.unmatched) if (m.kind === 'error' && (m.id === null || m.id === undefined)) return m.value;
  return undefined;
}

/**
 * The message a rewriter works on: the one it is handed, or, when the server's answer to the
 * request is an error that carried no id (the rules judge it as the request's answer; it sits in
 * `subject.unmatched`), a copy of that error. The copy gets the request's id where error-id-null
 * says the id is missing (an error with a null id is valid in no version's schema, and the
 * request's id is the one it answers); a transport rejection, which may be id-less, keeps its
 * id as the server sent it: a rewrite never changes an id without the finding that says why.
 */
export function current(message: ResponseMessage | undefined, s: ExchangeSubject): ResponseMessage | undefined {
  if (message !== undefined) return message;
  if (s.response !== undefined || s.request.from !== 'client') return undefined;
  const idless = idlessError(s);
  if (!idless) return undefined;
  const copy = copyOf(idless) as ResponseMessage | undefined;
  if (!copy) return undefined;
  if (!idlessAllowed(s)) copy.id = s.request.id;
  return copy;
}

/**
 * The request's id as the client wrote it (its raw JSON text), when the proxy kept it: a rewritten
 * answer carries it byte for byte (encode.ts withIdToken). Kept by the correlator on the open
 * request (`idToken`, from codec/jsonrpc.ts idTokenOf); read through this one place.
 */
export function requestIdToken(s: ExchangeSubject): string | undefined {
  const token = (s.request as ExchangeSubject['request'] & { idToken?: unknown }).idToken;
  return typeof token === 'string' ? token : undefined;
}

/** A JSON-RPC error response. */
export function errorResponse(id: JsonRpcId, code: number, message: string, data?: unknown): ResponseMessage {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/**
 * Moves an error to a new code, keeping the original in `data`: `{ ...data, originalCode }` when
 * data is an object, `{ originalCode, originalData }` when it was something else, `{ originalCode }`
 * when absent. An originalCode already there (an earlier rewrite) is the first original: kept.
 */
export function recode(error: ErrorObject, code: number): void {
  const original = error.code;
  const data = asRecord(error.data);
  if (data) error.data = 'originalCode' in data ? data : { ...data, originalCode: original };
  else if ('data' in error && error.data !== undefined) error.data = { originalCode: original, originalData: error.data };
  else if ('code' in error) error.data = { originalCode: original };
  error.code = code;
}

/** Whether a request lacks the `_meta` protocolVersion or clientCapabilities every modern request carries. */
export function missingMeta(params: unknown): boolean {
  const meta = asRecord(asRecord(params)?._meta);
  return typeof meta?.[META.protocolVersion] !== 'string' || asRecord(meta?.[META.clientCapabilities]) === undefined;
}

const PAIRED_400: ReadonlySet<number> = new Set([-32020, -32021, -32022]);

/**
 * The HTTP status 2026-07-28 pairs with an error code on a JSON response: 404 for -32601,
 * 400 for -32020/-32021/-32022 and for -32602 answering a request without its `_meta`. Undefined
 * when the spec pairs none, the version is legacy, the status can no longer change (SSE), or the
 * session is a legacy one probed by a dual-era client.
 */
export function pairedStatus(s: ExchangeSubject, code: unknown): number | undefined {
  if (!isModern(s.version) || s.transport !== 'json' || s.session.era === 'legacy') return undefined;
  if (code === METHOD_NOT_FOUND) return 404;
  if (typeof code === 'number' && PAIRED_400.has(code)) return 400;
  if (code === INVALID_PARAMS && missingMeta(s.request.params)) return 400;
  return undefined;
}

/** A rewrite of an error's code, with the status the new code pairs with (when it differs from the one sent). */
export function recoded(message: ResponseMessage, error: ErrorObject, code: number, s: ExchangeSubject): Rewritten {
  recode(error, code);
  const status = pairedStatus(s, code);
  return status === undefined || status === s.status ? { message } : { message, status };
}

/** The tool a tools/call named. */
export function toolName(s: ExchangeSubject): string | undefined {
  if (s.request.method !== 'tools/call') return undefined;
  if (typeof s.request.tool === 'string') return s.request.tool;
  const name = asRecord(s.request.params)?.name;
  return typeof name === 'string' ? name : undefined;
}

/** The tool a tools/call named, when the session's complete catalogue does not hold it. */
export function uncataloguedTool(s: ExchangeSubject): string | undefined {
  const name = toolName(s);
  if (name === undefined || !s.session.toolsComplete || s.session.tools.has(name)) return undefined;
  return name;
}

/** The error a client gets for a tools/call of a tool the server does not have (the spec's example: https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling). */
export const unknownToolMessage = (name: string): string => `Unknown tool: ${name}`;

/** The text of a result's text content blocks, joined by newlines. */
export function contentText(result: Record<string, unknown>): string {
  const content = result.content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const block of content) {
    const b = asRecord(block);
    if (b?.type === 'text' && typeof b.text === 'string' && b.text !== '') parts.push(b.text);
  }
  return parts.join('\n');
}

/** Standard messages, for an error that came without one. */
const STANDARD_MESSAGES: Readonly<Record<number, string>> = {
  [-32700]: 'Parse error',
  [-32600]: 'Invalid Request',
  [-32601]: 'Method not found',
  [-32602]: 'Invalid params',
  [-32603]: 'Internal error',
};

/** The JSON text of a value (at any depth); its String() when it has none. */
function textOf(value: unknown): string {
  try {
    const text = jsonText(value);
    if (typeof text === 'string') return text;
  } catch {
    // fall through
  }
  return typeof value === 'object' && value !== null ? Object.prototype.toString.call(value) : String(value);
}

/**
 * Puts an error object's shape right: a code that is not an integer becomes -32603 (the
 * original in data.originalCode), a message that is not a string becomes its JSON text (a missing
 * one, the code's standard name). Whether anything changed.
 */
export function conformError(error: ErrorObject): boolean {
  const badCode = integerCode(error.code) === undefined;
  const badMessage = typeof error.message !== 'string';
  if (badCode) recode(error, INTERNAL_ERROR);
  if (badMessage)
    error.message = error.message === undefined ? (STANDARD_MESSAGES[error.code as number] ?? 'Error') : textOf(error.message);
  return badCode || badMessage;
}

/**
 * What every rewritten message is made to be, whatever rule asked for the rewrite: a JSON-RPC
 * response of the session's version per its schema. A rewrite for one rule must not send out a
 * message the schema rejects because of another defect of the server's: an error whose code or
 * message has the wrong type, a null or missing id although the request's was readable (only
 * where error-id-null fires, not on a transport rejection, which may be id-less),
 * a 2026-07-28 result without resultType. Shapes of particular results (a CallToolResult's
 * content blocks) are left as they are.
 */
export function conform(message: ResponseMessage, s: ExchangeSubject): void {
  message.jsonrpc = '2.0';
  // Where error-id-null fires: an id-less transport rejection keeps its id (see current).
  if ((message.id === null || message.id === undefined) && s.request.from === 'client' && !idlessAllowed(s)) message.id = s.request.id;
  const error = errorOf(message);
  if (error) conformError(error);
  const result = resultOf(message);
  if (result && isModern(s.version) && !('resultType' in result)) result.resultType = 'complete';
}

/**
 * A rewriter for `rules`. Its body runs only for a finding of one of them, on a copy of the
 * message, and anything it throws means "nothing to change": a rewrite that fails halfway leaves
 * the caller's message as it was. What it returns is made to conform (see `conform`).
 */
export function defineRewriter(
  rules: readonly string[],
  apply: (message: ResponseMessage | undefined, ctx: RewriteContext) => Rewritten | undefined,
): Rewriter {
  return {
    rules,
    apply(message, ctx) {
      try {
        if (!rules.includes(ctx.finding.rule)) return undefined;
        const copy = message === undefined ? undefined : copyOf(message);
        if (message !== undefined && copy === undefined) return undefined;
        const out = apply(copy, ctx);
        if (out) conform(out.message, ctx.subject);
        return out;
      } catch {
        return undefined;
      }
    },
  };
}
