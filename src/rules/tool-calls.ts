// Reading a tools/call exchange, for the tools family's rules: whether a result is the final
// answer, and whether the session's catalogue knows the tool.
import { asRecord } from '../codec/json-value.ts';
import { type Answer, answerRule, isLegacy } from './read.ts';
import type { ExchangeRule, ExchangeSubject, Report } from './types.ts';

/** How much of a result's text the text heuristics read as its opening statement. */
export const TEXT_WINDOW = 1024;

/**
 * A result's whole text, for the rules that look for something anywhere in it: no window of its
 * own, since the body it came in was bounded by the audit limit (auditBodyBytes, auditEventBytes)
 * when the proxy parsed it; a larger body is never judged.
 */
export const WHOLE_TEXT = Number.POSITIVE_INFINITY;

/**
 * Codes that say something other than "this tool call is wrong": the request did not parse, the
 * HTTP headers, version or client capabilities were rejected, or URL elicitation is needed first.
 */
export const UNRELATED_CODES: ReadonlySet<number> = new Set([-32700, -32600, -32020, -32021, -32022, -32042]);

/** A server rule about what answered a client's tools/call: `check` runs only on an answer of `kind`. */
export const callRule = <K extends 'result' | 'error'>(
  kind: K,
  info: Omit<ExchangeRule, 'subject' | 'check' | 'party'>,
  check: (s: ExchangeSubject, answer: Answer<K>) => Report[],
): ExchangeRule => answerRule(kind, 'tools/call', info, check);

/** Whether a result's resultType says it is not the final answer (modern era; legacy has no resultType). */
export const deferredType = (s: ExchangeSubject, result: Record<string, unknown>): boolean =>
  !isLegacy(s.version) && typeof result.resultType === 'string' && result.resultType !== 'complete';

/**
 * Whether the result is not (yet) a CallToolResult: a 2026-07-28 InputRequiredResult (or an
 * extension's result type), or the CreateTaskResult of a task-augmented call.
 */
export function notFinal(s: ExchangeSubject, result: Record<string, unknown>): boolean {
  if (deferredType(s, result)) return true;
  if (asRecord(asRecord(s.request.params)?.task)) return true;
  return asRecord(result.task) !== undefined && !('content' in result);
}

/** The tool the call named, when the session's complete catalogue does not hold it. */
export function missingFromCatalogue(s: ExchangeSubject): string | undefined {
  const name = s.request.tool;
  if (name === undefined || !s.session.toolsComplete || s.session.tools.has(name)) return undefined;
  return name;
}
