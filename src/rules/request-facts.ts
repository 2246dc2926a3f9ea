// What the rules read of a request's content that a capture redacts (tool arguments), as facts
// holding none of that content: the live proxy computes them on each exchange it captures, and a
// replay's rules read them instead of the redacted request (ExchangeSubject.facts). A fact is a
// verdict (a boolean, how the arguments failed a schema) or a reference to a leak-shaped part of
// the response the capture keeps anyway, never a value, a hash of one, or its length.
import { argumentErrors } from './input-validation.ts';
import { echoesOf, type LeakPattern } from './leaks.ts';
import { statementAboutArguments } from './silent-success.ts';
import type { ExchangeSubject, RequestFacts } from './types.ts';

/**
 * The facts of a judged exchange; `response`: the response message as the capture keeps it (the
 * echoes point into it); `leakPatterns`: the policy's, which say what a leak is.
 */
export function requestFacts(s: ExchangeSubject, response: unknown, leakPatterns: readonly LeakPattern[]): RequestFacts {
  if (s.request.from !== 'client') return {};
  const errors = argumentErrors(s);
  const echoes = response === null || response === undefined ? [] : echoesOf(s.request, response, leakPatterns, s.session.known);
  return {
    ...(statementAboutArguments(s) ? { aboutArguments: true as const } : {}),
    ...(errors ? { argumentErrors: errors } : {}),
    ...(echoes.length > 0 ? { echoes } : {}),
  };
}
