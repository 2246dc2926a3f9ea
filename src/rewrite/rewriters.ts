// Every rewriter, in the order of the rule catalogue (tools, codes, bodies, protocol, answer ids, leaks): the
// order decide() applies them in, one finding after another, on the same message. Each puts one
// rule's finding right and checks the message still has the shape it fixes; none throws.
import { bodyRewriter } from './body-rewriters.ts';
import {
  answerIdRewriter,
  errorIdRewriter,
  errorShapeRewriter,
  errorStatusRewriter,
  legacyRangeRewriter,
  reservedCodeRewriter,
  resourceNotFoundRewriter,
  retiredCodeRewriter,
  unknownMethodCodeRewriter,
  unknownMethodStatusRewriter,
} from './code-rewriters.ts';
import { LEAK_REWRITER, leakRewriter } from './leak-rewriters.ts';
import { POST_REWRITABLE } from './post-rewrite.ts';
import { STDIO_REWRITABLE } from '../rules/stdio.ts';
import { isErrorBooleanRewriter, resultTypeRewriter, silentSuccessRewriter, unknownToolRewriter } from './tool-rewriters.ts';
import type { Rewriter } from './types.ts';

export const REWRITERS: readonly Rewriter[] = [
  unknownToolRewriter,
  silentSuccessRewriter,
  isErrorBooleanRewriter,
  reservedCodeRewriter,
  legacyRangeRewriter,
  retiredCodeRewriter,
  resourceNotFoundRewriter,
  unknownMethodCodeRewriter,
  unknownMethodStatusRewriter,
  errorStatusRewriter,
  errorShapeRewriter,
  errorIdRewriter,
  bodyRewriter,
  resultTypeRewriter,
  answerIdRewriter,
  LEAK_REWRITER,
];

/** The rule ids some rewriter handles (the exchange rewriters above, and the POST-level one: post-rewrite.ts). */
export const REWRITABLE: ReadonlySet<string> = new Set([...REWRITERS.flatMap((r) => r.rules), ...POST_REWRITABLE, ...STDIO_REWRITABLE]);

/** The rewriters with the leak rewriter redacting `leakPatterns` (a policy's additions included). */
export function rewritersWith(leakPatterns: Parameters<typeof leakRewriter>[0]): readonly Rewriter[] {
  const leaks = leakRewriter(leakPatterns);
  return REWRITERS.map((r) => (r === LEAK_REWRITER ? leaks : r));
}
