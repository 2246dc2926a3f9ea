// How findings become changes to the traffic. A rewriter puts one rule's finding right on a copy
// of the message; decide() turns all findings of an exchange plus the policy into one decision.
import type { ExchangeSubject, Finding } from '../rules/types.ts';
import type { Decision, ResponseMessage } from '../verdicts.ts';

export type { Decision, ResponseMessage };

export interface RewriteContext {
  subject: ExchangeSubject;
  finding: Finding;
  /** Replaces leaked internals. */
  marker: string;
}

/** The result of one rewriter: the new message, and an HTTP status it needs (only honoured where the status can still change). */
export interface Rewritten {
  message: ResponseMessage;
  status?: number;
}

export interface Rewriter {
  /** Rule ids this rewriter puts right. */
  rules: readonly string[];
  /**
   * Puts the finding right. `message` is the response as it stands after earlier rewrites (a copy
   * the rewriter may change), or undefined when the server sent no usable response (HTML, empty
   * body, dropped connection): then the rewriter builds one. Returns undefined when it has nothing
   * to change (e.g. an earlier rewrite already replaced what it would fix).
   */
  apply(message: ResponseMessage | undefined, ctx: RewriteContext): Rewritten | undefined;
}
