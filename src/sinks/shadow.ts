// Shadow decisions: under audit, what the shadow policy (by default the shipped enforce.yaml, what
// production would run) would do with each finding. Staging then says exactly what enforcing would
// change: each violation record carries `shadow`, and mcp_warden_shadow_decisions_total counts it.
import type { FindingContext } from '../engine/plans.ts';
import type { Policy } from '../config/types.ts';
import { RULES } from '../rules/index.ts';
import type { Action, PolicedFinding } from '../verdicts.ts';

const GROUP: ReadonlyMap<string, string> = new Map(RULES.map((r) => [r.id, r.group]));

/** The action `shadow` gives a finding seen at `where` (`off`: it would not even be reported). */
export function shadowAction(shadow: Policy, f: PolicedFinding, where: FindingContext): Action {
  return shadow.setting({ rule: f.rule, group: GROUP.get(f.rule) ?? f.rule, severity: f.severity, method: where.method, tool: where.tool })
    .action;
}
