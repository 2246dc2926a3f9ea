// Judging one exchange: the rules of the party that answered, through the policy, and what the
// policy decides about it. Values in, values out (replay and check judge with these too).
import type { Completed } from '../exchange/correlate.ts';
import { eraOf } from '../mcp/versions.ts';
import type { Policy } from '../config/types.ts';
import { decide, police, type PolicedFinding } from '../rewrite/decide.ts';
import type { Rewriter } from '../rewrite/types.ts';
import type { RuleEngine } from '../rules/engine.ts';
import type { ExchangeSubject, Finding } from '../rules/types.ts';
import { PASS, type Decision } from '../verdicts.ts';
import type { JudgedExchange } from './plans.ts';

/** What judging needs: the rules and rewriters of the policy in force. */
export interface JudgeContext {
  engine: RuleEngine;
  rewriters: ReadonlyMap<string, Rewriter>;
  policy: Policy;
}

/** Findings through the policy of `ctx`, where they were seen. */
export const policed = (
  ctx: JudgeContext,
  findings: readonly Finding[],
  method: string | undefined,
  tool: string | undefined,
): PolicedFinding[] => police(findings, ctx.policy, { method, tool }, (r) => ctx.engine.groupOf(r));

/** Judges a completed exchange: the rules of the party that answered, through the policy. */
export function judge(c: Completed, subject: ExchangeSubject, ctx: JudgeContext): PolicedFinding[] {
  // The answer to a client's request is the server's to get right; the client's own rules
  // judged the request before it was forwarded.
  const party = c.request.from === 'client' ? 'server' : undefined;
  return policed(ctx, ctx.engine.evaluate(subject, party), c.request.method, c.request.tool);
}

/** What the policy does about a judged exchange (only a client's request has an answer to change). */
export function decideFor(c: Completed, subject: ExchangeSubject, findings: readonly PolicedFinding[], ctx: JudgeContext): Decision {
  if (c.request.from !== 'client') return PASS;
  return decide({
    findings,
    subject,
    policy: ctx.policy,
    rewriters: ctx.rewriters,
    party: 'server',
    modern: eraOf(subject.version ?? '') === 'modern',
  });
}

/** Judges an exchange and, when `decidable`, decides about it. */
export function judgeExchange(c: Completed, subject: ExchangeSubject, ctx: JudgeContext, decidable = true): JudgedExchange {
  const findings = judge(c, subject, ctx);
  return { exchange: c, subject, findings, decision: decidable ? decideFor(c, subject, findings, ctx) : PASS };
}
