// Runs the rules that apply to a subject and its version. A rule that throws is a bug in the
// rule, never a reason to drop the traffic: it is reported and skipped.
import type { Finding, Rule, Subject } from './types.ts';
import { ALL } from './versions.ts';

/** Whether a rule judges traffic of `version`; traffic of unknown version meets only version-free rules. */
export function appliesTo(rule: Rule, version: string | undefined): boolean {
  if (version !== undefined && rule.versions.includes(version)) return true;
  return ALL.every((v) => rule.versions.includes(v));
}

export class RuleEngine {
  private readonly exchangeRules: Rule[];
  private readonly postRules: Rule[];

  private readonly groups: Map<string, string>;

  constructor(
    readonly rules: readonly Rule[],
    private readonly onRuleError: (ruleId: string, err: unknown) => void,
  ) {
    this.exchangeRules = rules.filter((r) => r.subject === 'exchange');
    this.postRules = rules.filter((r) => r.subject === 'post');
    this.groups = new Map(rules.map((r) => [r.id, r.group]));
  }

  /** The policy group of a rule id. */
  groupOf(ruleId: string): string {
    return this.groups.get(ruleId) ?? ruleId;
  }

  /**
   * Findings on a subject. `party` limits the rules to those of one party: the client's rules judge
   * a request before it is forwarded (so a policy can block or fix it), the server's rules judge
   * what came back.
   */
  evaluate(subject: Subject, party?: Rule['party']): Finding[] {
    const findings: Finding[] = [];
    for (const rule of subject.kind === 'exchange' ? this.exchangeRules : this.postRules) {
      if (party !== undefined && rule.party !== party) continue;
      if (!appliesTo(rule, subject.version)) continue;
      try {
        const reports = (rule.check as (s: Subject) => ReturnType<Rule['check']>)(subject);
        for (const r of reports) findings.push({ ...r, rule: rule.id, severity: r.severity ?? rule.severity, versions: rule.versions });
      } catch (err) {
        this.onRuleError(rule.id, err);
      }
    }
    return findings;
  }
}
