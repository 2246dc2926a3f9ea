// Runs the rules that apply to a subject and its version. A rule that throws is a bug in the
// rule, never a reason to drop the traffic: it is reported and skipped.
import type { Finding, Rule, Subject, Wire } from './types.ts';
import { judgedVersion, messagesOf, type SentMessage } from './read.ts';
import { ALL } from './versions.ts';

/**
 * The subject as the rules judge it: a version string nobody defined never selects a rule table.
 * Exchange subjects come with their judging version already (subjects.ts); a POST's subject is
 * built with the version its flow resolved, so it is mapped here the same way (read.ts
 * judgedVersion: the era the POST was sent in), and judged by the version-free rules alone when
 * nothing says which era.
 */
function judgedSubject(subject: Subject): Subject {
  // A stdio line's rules are version-free.
  if (subject.kind === 'line' || subject.version === undefined || ALL.includes(subject.version)) return subject;
  const version =
    subject.kind === 'post'
      ? judgedVersion(subject.version, messagesOf(subject.request) as readonly SentMessage[], subject.requestHeaders, subject.session)
      : judgedVersion(subject.version, [subject.request], subject.requestHeaders, subject.session);
  return { ...subject, version };
}

/** Whether a rule judges traffic of `version`; traffic of unknown version meets only version-free rules. */
export function appliesTo(rule: Rule, version: string | undefined): boolean {
  if (version !== undefined && rule.versions.includes(version)) return true;
  return ALL.every((v) => rule.versions.includes(v));
}

export class RuleEngine {
  private readonly groups: Map<string, string>;
  /** The rules for one subject kind, party and version, worked out once: evaluation runs per message. */
  private readonly selections = new Map<string, readonly Rule[]>();

  constructor(
    readonly rules: readonly Rule[],
    private readonly onRuleError: (ruleId: string, err: unknown) => void,
  ) {
    this.groups = new Map(rules.map((r) => [r.id, r.group]));
  }

  /** The policy group of a rule id. */
  groupOf(ruleId: string): string {
    return this.groups.get(ruleId) ?? ruleId;
  }

  private select(kind: Subject['kind'], party: Rule['party'] | undefined, version: string | undefined, wire: Wire): readonly Rule[] {
    const key = `${kind} ${party ?? '*'} ${wire} ${version ?? ''}`;
    let selected = this.selections.get(key);
    if (!selected) {
      selected = this.rules.filter(
        (r) =>
          r.subject === kind &&
          (party === undefined || r.party === party) &&
          (r.transports === undefined || r.transports.includes(wire)) &&
          appliesTo(r, version),
      );
      // Versions come from traffic: only the known ones are worth keeping (an unknown one selects the version-free rules).
      if (version === undefined || ALL.includes(version)) this.selections.set(key, selected);
    }
    return selected;
  }

  /**
   * Findings on a subject. `party` limits the rules to those of one party: the client's rules judge
   * a request before it is forwarded (so a policy can block or fix it), the server's rules judge
   * what came back.
   */
  evaluate(given: Subject, party?: Rule['party']): Finding[] {
    const subject = judgedSubject(given);
    const findings: Finding[] = [];
    for (const rule of this.select(subject.kind, party, subject.version, subject.wire ?? 'streamable-http')) {
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
