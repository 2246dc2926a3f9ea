// What a policy needs at run time besides its settings: a rule engine and rewriters that use the
// policy's extra patterns. Built once per policy object and kept while the policy is.
import { rewriterIndex } from '../rewrite/decide.ts';
import { REWRITERS, rewritersWith } from '../rewrite/rewriters.ts';
import type { Rewriter } from '../rewrite/types.ts';
import { RuleEngine } from '../rules/engine.ts';
import { RULES, rulesWith } from '../rules/index.ts';
import { LEAK_PATTERNS, type LeakPattern } from '../rules/leaks.ts';
import { SILENT_SUCCESS_PATTERNS } from '../rules/silent-success.ts';
import type { Policy } from './types.ts';

export interface Runtime {
  engine: RuleEngine;
  rewriters: ReadonlyMap<string, Rewriter>;
}

const leakPatternLists = new WeakMap<Policy, readonly LeakPattern[]>();

/** The leak patterns a policy judges with: the built-in ones and the policy's own. */
export function leakPatternsOf(policy: Policy): readonly LeakPattern[] {
  if (policy.patterns.leaks.length === 0) return LEAK_PATTERNS;
  let list = leakPatternLists.get(policy);
  if (!list) {
    list = [
      ...LEAK_PATTERNS,
      ...policy.patterns.leaks.map((p, i) => ({
        rule: p.rule as LeakPattern['rule'],
        name: `policy-${i + 1}`,
        label: 'a pattern from the policy',
        re: p.re,
      })),
    ];
    leakPatternLists.set(policy, list);
  }
  return list;
}

export function runtimeFactory(onRuleError: (rule: string, err: unknown) => void): (policy: Policy) => Runtime {
  const base: Runtime = { engine: new RuleEngine(RULES, onRuleError), rewriters: rewriterIndex(REWRITERS) };
  const built = new WeakMap<Policy, Runtime>();
  return (policy) => {
    const { leaks, silentSuccess, replaceSilentSuccess } = policy.patterns;
    const { unknownTool } = policy.answers;
    // The built-in rules and rewriters serve a policy that neither adds patterns nor replaces them, and expects what the spec says.
    if (leaks.length === 0 && silentSuccess.length === 0 && !replaceSilentSuccess && unknownTool === 'spec') return base;
    let runtime = built.get(policy);
    if (!runtime) {
      const leakPatterns = leakPatternsOf(policy);
      const silent = replaceSilentSuccess ? silentSuccess : [...SILENT_SUCCESS_PATTERNS, ...silentSuccess];
      runtime = {
        engine: new RuleEngine(rulesWith({ leaks: leakPatterns, silentSuccess: silent, unknownTool }), onRuleError),
        rewriters: rewriterIndex(rewritersWith(leakPatterns)),
      };
      built.set(policy, runtime);
    }
    return runtime;
  };
}
