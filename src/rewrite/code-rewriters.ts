// Rewriters for error codes, their HTTP status pairings and the error envelope.
// A changed code keeps the original in `error.data.originalCode`; a code change that
// 2026-07-28 pairs with a status (-32601 → 404, -32020..-32022 → 400) also asks for that status.
import { isUnknownMethod } from '../mcp/methods.ts';
import { codeRange, isDefinedFor } from '../rules/codes.ts';
import { isTransportRejection } from '../rules/error-answers.ts';
import type { ExchangeSubject } from '../rules/types.ts';
import type { ResponseMessage, Rewriter, Rewritten } from './types.ts';
import {
  conformError,
  current,
  defineRewriter,
  errorOf,
  integerCode,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  isModern,
  METHOD_NOT_FOUND,
  missingMeta,
  pairedStatus,
  recoded,
  RESOURCE_NOT_FOUND,
} from './message.ts';

/**
 * The standard code for an undefined one, as the finding's fix says (rules/error-answers.ts
 * fixFor): -32600 (Invalid Request) on a 4xx, a transport rejection (no valid session, 406, 415);
 * else -32601 when the method is one the server does not implement, else -32603.
 */
const standardCode = (s: ExchangeSubject): number => {
  if (isTransportRejection(s.status)) return INVALID_REQUEST;
  return isUnknownMethod(s.request.method, s.version, s.session.serverCapabilities) === true ? METHOD_NOT_FOUND : INTERNAL_ERROR;
};

/** The error to rewrite (and the message holding it), with its integer code. */
function codedError(message: ResponseMessage | undefined, s: ExchangeSubject) {
  if (s.request.from !== 'client') return undefined;
  const m = current(message, s);
  const error = errorOf(m);
  const code = integerCode(error?.code);
  return m && error && code !== undefined ? { m, error, code } : undefined;
}

/**
 * reserved-code: a code in -32768..-32100 outside the five standard ones, or one in
 * -32099..-32020 the version does not define (-32042 is retired-code's), becomes -32600 (on a
 * 4xx), -32601 or -32603.
 */
export const reservedCodeRewriter: Rewriter = defineRewriter(['reserved-code'], (message, { subject: s }) => {
  const e = codedError(message, s);
  if (!e) return undefined;
  const range = codeRange(e.code);
  const undefinedHere = range === 'spec-owned' && e.code !== -32042 && s.version !== undefined && !isDefinedFor(e.code, s.version);
  if (range !== 'reserved' && !undefinedHere) return undefined;
  return recoded(e.m, e.error, standardCode(s), s);
});

/** legacy-range-code: a code in -32000..-32019 (not -32002) becomes -32600 (on a 4xx), -32601 or -32603. */
export const legacyRangeRewriter: Rewriter = defineRewriter(['legacy-range-code'], (message, { subject: s }) => {
  const e = codedError(message, s);
  if (!e || codeRange(e.code) !== 'legacy' || e.code === RESOURCE_NOT_FOUND) return undefined;
  return recoded(e.m, e.error, standardCode(s), s);
});

/**
 * retired-code: under 2026-07-28, -32002 outside resources/read becomes -32602; -32042
 * outside 2025-11-25 becomes -32603 (the request could not be completed: the URL elicitation it
 * needs cannot be asked for that way in this version).
 */
export const retiredCodeRewriter: Rewriter = defineRewriter(['retired-code'], (message, { subject: s }) => {
  const e = codedError(message, s);
  if (!e || s.version === undefined) return undefined;
  if (e.code === RESOURCE_NOT_FOUND && isModern(s.version) && s.request.method !== 'resources/read')
    return recoded(e.m, e.error, INVALID_PARAMS, s);
  if (e.code === -32042 && !isDefinedFor(-32042, s.version)) return recoded(e.m, e.error, INTERNAL_ERROR, s);
  return undefined;
});

/** resource-not-found-code: a missing resource is -32602 under 2026-07-28, -32002 before. */
export const resourceNotFoundRewriter: Rewriter = defineRewriter(['resource-not-found-code'], (message, { subject: s }) => {
  const e = codedError(message, s);
  if (!e || s.request.method !== 'resources/read' || s.version === undefined) return undefined;
  // Codes that say something else than "not found" are not this rewriter's to change.
  if (e.code === METHOD_NOT_FOUND || e.code === -32020 || e.code === -32021 || e.code === -32022) return undefined;
  const target = isModern(s.version) ? INVALID_PARAMS : RESOURCE_NOT_FOUND;
  if (e.code === target || (!isModern(s.version) && e.code === INVALID_PARAMS)) return undefined;
  return recoded(e.m, e.error, target, s);
});

/** unknown-method-wrong-code: the error becomes -32601 (and HTTP 404 under 2026-07-28). */
export const unknownMethodCodeRewriter: Rewriter = defineRewriter(['unknown-method-wrong-code'], (message, { subject: s }) => {
  const e = codedError(message, s);
  if (!e || e.code === METHOD_NOT_FOUND) return undefined;
  return recoded(e.m, e.error, METHOD_NOT_FOUND, s);
});

/** A status rewrite: the message unchanged, the status the spec pairs with its code. */
function statusFix(message: ResponseMessage | undefined, s: ExchangeSubject, wanted: (code: number) => boolean): Rewritten | undefined {
  const e = codedError(message, s);
  if (!e || !wanted(e.code)) return undefined;
  const status = pairedStatus(s, e.code);
  if (status === undefined || status === s.status) return undefined;
  return { message: e.m, status };
}

/** unknown-method-status: a 2026-07-28 -32601 on a JSON response goes with HTTP 404. */
export const unknownMethodStatusRewriter: Rewriter = defineRewriter(['unknown-method-status'], (message, { subject: s }) =>
  statusFix(message, s, (code) => code === METHOD_NOT_FOUND),
);

/** error-status-pairing: -32020/-32021/-32022, and -32602 for a request missing its `_meta`, go with HTTP 400. */
export const errorStatusRewriter: Rewriter = defineRewriter(['error-status-pairing'], (message, { subject: s }) =>
  statusFix(
    message,
    s,
    (code) => code === -32020 || code === -32021 || code === -32022 || (code === INVALID_PARAMS && missingMeta(s.request.params)),
  ),
);

/**
 * error-shape: a code that is not an integer becomes -32603 (the original in data.originalCode);
 * a message that is not a string becomes its JSON text (a missing one, the code's standard name).
 */
export const errorShapeRewriter: Rewriter = defineRewriter(['error-shape'], (message, { subject: s }) => {
  if (s.request.from !== 'client') return undefined;
  const m = current(message, s);
  const error = errorOf(m);
  if (!m || !error) return undefined;
  return conformError(error) ? { message: m } : undefined;
});

/** answer-id-type: the response carries the request's own id, as the client sent it. */
export const answerIdRewriter: Rewriter = defineRewriter(['answer-id-type'], (message, { subject: s }) => {
  if (
    s.request.from !== 'client' ||
    message === undefined ||
    message.id === undefined ||
    message.id === null ||
    message.id === s.request.id
  )
    return undefined;
  message.id = s.request.id;
  return { message };
});

/**
 * error-id-null: the request's answer came as an error with a null or missing id (it sits in
 * `subject.unmatched`): the same error, with the request's id. A message that already has an id
 * (an earlier rewrite built it from that error) is left.
 */
export const errorIdRewriter: Rewriter = defineRewriter(['error-id-null'], (message, { subject: s }) => {
  if (s.request.from !== 'client') return undefined;
  if (message !== undefined) {
    if (!errorOf(message) || (message.id !== null && message.id !== undefined)) return undefined;
    message.id = s.request.id;
    return { message };
  }
  const m = current(message, s);
  return m && errorOf(m) ? { message: m } : undefined;
});
