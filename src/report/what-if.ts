// What a policy would have changed, counted in bounded memory: each exchange's decision, each
// finding's action by rule, and the first few rewrites and blocks as examples.
import { isoOrNull, type Action, type ReportData, type ReportExchange, type WhatIfExchange, type WouldDo } from './model.ts';
import { BoundedTally } from './tally.ts';

const EXAMPLES = 10;
/** Rules tracked at most (a log from elsewhere may name any). */
const TRACKED_RULES = 1000;
type RuleActions = { rule: string; actions: Partial<Record<Action, number>> };

export class WhatIfTally {
  exchanges = 0;
  private readonly decisions: Record<WouldDo, number> = { pass: 0, rewrite: 0, block: 0 };
  private readonly byRule = new BoundedTally<RuleActions>(
    TRACKED_RULES,
    (rule) => ({ rule, actions: {} }),
    (r) => Object.values(r.actions).reduce((a, b) => a + b, 0),
  );
  private readonly examples: ReportData['whatIf']['examples'] = [];

  add(x: WhatIfExchange): void {
    this.exchanges++;
    this.decisions[x.would.kind]++;
    for (const { rule, action } of x.actions) {
      const { actions } = this.byRule.row(rule);
      actions[action] = (actions[action] ?? 0) + 1;
    }
    const { would } = x;
    if (would.kind !== 'pass' && this.examples.length < EXAMPLES)
      this.examples.push({
        time: isoOrNull(x.time),
        method: x.method,
        tool: x.tool ?? null,
        kind: would.kind,
        rules: would.rules,
        before: would.before ?? null,
        after: would.after ?? null,
      });
  }

  data(source: ReportData['whatIf']['source'], policy: string | null): ReportData['whatIf'] {
    return {
      source,
      policy,
      exchanges: this.exchanges,
      decisions: { ...this.decisions },
      byRule: this.byRule.top(TRACKED_RULES).map(({ rule, actions }) => ({ rule, actions: { ...actions } })),
      examples: [...this.examples],
    };
  }
}

/**
 * What an exchange says a policy would do. From its shadow actions (audit): block if a finding's is
 * block, else rewrite if one's is rewrite. Else from what the policy in force did (its verdict).
 */
export function whatIfOf(x: ReportExchange, fromShadow: boolean): WhatIfExchange {
  const actions = x.findings.flatMap((f) => {
    const action = fromShadow ? f.shadow : f.action;
    return action ? [{ rule: f.rule, action }] : [];
  });
  const kind = fromShadow
    ? actions.some((a) => a.action === 'block')
      ? 'block'
      : actions.some((a) => a.action === 'rewrite')
        ? 'rewrite'
        : undefined
    : x.verdict;
  const rules = actions.filter((a) => a.action === kind).map((a) => a.rule);
  return { time: x.time, method: x.method, tool: x.tool, would: kind ? { kind, rules } : { kind: 'pass' }, actions };
}
