// Rewriters for tools/call answers and results: an unknown tool becomes the
// JSON-RPC error -32602 "Unknown tool: NAME"; a result that reads as a failure gets isError; a
// non-boolean isError that clearly means true or false becomes one; a 2026-07-28 result without
// resultType gets "complete".
import type { Rewriter, Rewritten } from './types.ts';
import {
  contentText,
  current,
  defineRewriter,
  errorOf,
  errorResponse,
  integerCode,
  INVALID_PARAMS,
  isModern,
  resultOf,
  toolName,
  unknownToolMessage,
} from './message.ts';

/**
 * unknown-tool-as-iserror, unknown-tool-as-result, unknown-tool-wrong-code: whatever the server
 * answered becomes `{ code: -32602, message: "Unknown tool: NAME" }` with the request's id. The
 * server's own words go to `data.serverMessage` (its error message, or the text of its result),
 * and a code it used instead of -32602 to `data.originalCode`. HTTP 200: -32602 is paired with no
 * status here (2026-07-28 pairs 400 only with a request missing its `_meta`).
 */
export const unknownToolRewriter: Rewriter = defineRewriter(
  ['unknown-tool-as-iserror', 'unknown-tool-as-result', 'unknown-tool-wrong-code'],
  (message, { subject: s }): Rewritten | undefined => {
    const name = toolName(s);
    if (name === undefined || s.request.from !== 'client') return undefined;
    const m = current(message, s);
    const data: Record<string, unknown> = {};
    const error = errorOf(m);
    const result = resultOf(m);
    if (error) {
      // Already the right code: the server said it its own way, or an earlier rewrite did.
      if (error.code === INVALID_PARAMS) return undefined;
      if (typeof error.message === 'string' && error.message !== '') data.serverMessage = error.message;
      if (integerCode(error.code) !== undefined) data.originalCode = error.code;
    } else if (result) {
      const text = contentText(result);
      if (text !== '') data.serverMessage = text;
    } else if (m !== undefined && 'result' in m && !('error' in m)) {
      // A result that is not an object (`"result": "no such tool"`): its text, if it is one.
      if (typeof m.result === 'string' && m.result !== '') data.serverMessage = m.result;
    } else if (m !== undefined) {
      return undefined;
    }
    const built = errorResponse(s.request.id, INVALID_PARAMS, unknownToolMessage(name), Object.keys(data).length > 0 ? data : undefined);
    return { message: built, status: 200 };
  },
);

/** silent-success: a tools/call result that reads as a failure gets `isError: true`. */
export const silentSuccessRewriter: Rewriter = defineRewriter(['silent-success'], (message, { subject: s }) => {
  const result = resultOf(message);
  if (s.request.method !== 'tools/call' || !message || !result || result.isError === true) return undefined;
  result.isError = true;
  return { message };
});

/** iserror-not-boolean: "true"/"false" (any case, trimmed) and 1/0 become booleans; anything else is left. */
export const isErrorBooleanRewriter: Rewriter = defineRewriter(['iserror-not-boolean'], (message, { subject: s }) => {
  const result = resultOf(message);
  if (s.request.method !== 'tools/call' || !message || !result || !('isError' in result)) return undefined;
  const value = result.isError;
  let coerced: boolean | undefined;
  if (typeof value === 'string') {
    const word = value.trim().toLowerCase();
    coerced = word === 'true' ? true : word === 'false' ? false : undefined;
  } else if (value === 1 || value === 0) coerced = value === 1;
  if (coerced === undefined) return undefined;
  result.isError = coerced;
  return { message };
});

/**
 * result-type-missing: a 2026-07-28 result object without resultType gets "complete", which is
 * what a client reads an absent resultType as.
 */
export const resultTypeRewriter: Rewriter = defineRewriter(['result-type-missing'], (message, { subject: s }) => {
  const result = resultOf(message);
  if (!isModern(s.version) || !message || !result || 'resultType' in result) return undefined;
  result.resultType = 'complete';
  return { message };
});
