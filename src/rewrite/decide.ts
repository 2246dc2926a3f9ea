// From findings to what happens to the traffic. police() applies the policy to findings (drops
// `off`, overrides severities, attaches the action); decide() turns the policed findings of one
// exchange into one Decision: pass, mutate (the rewrites applied in catalogue order) or reject
// (a block). Nothing changes in audit mode: the actions are only reported.
import type { JsonRpcId } from '../codec/jsonrpc.ts';
import type { Policy } from '../config/types.ts';
import type { PolicedFinding } from '../verdicts.ts';
import { excerpt } from '../redact/excerpt.ts';
import type { ExchangeSubject, Finding, Severity } from '../rules/types.ts';
import { withIdToken } from './encode.ts';
import { copyOf, isModern, requestIdToken } from './message.ts';
import type { Decision, ResponseMessage, Rewriter } from './types.ts';

export type { PolicedFinding };

export function police(
  findings: readonly Finding[],
  policy: Policy,
  where: { method: string | undefined; tool: string | undefined },
  groupOf: (rule: string) => string,
): PolicedFinding[] {
  const out: PolicedFinding[] = [];
  for (const f of findings) {
    const setting = policy.setting({ rule: f.rule, group: groupOf(f.rule), severity: f.severity, method: where.method, tool: where.tool });
    if (setting.action === 'off') continue;
    out.push({ ...f, severity: setting.severity as Severity, action: setting.action });
  }
  return out;
}

/** The error a block answers with, by who broke the rule; client-side blocks answer as a server would. */
export function blockReply(
  f: PolicedFinding,
  party: 'client' | 'server',
  id: JsonRpcId | undefined,
  modern: boolean,
  /** The client's body did not parse as JSON: JSON-RPC's answer is -32700 Parse error, not -32600. */
  unparsed = false,
): { message: ResponseMessage; status: number } {
  const data = { reason: 'WARDEN_BLOCKED', rule: f.rule, by: 'mcp-warden' };
  if (party === 'server') {
    return {
      message: { jsonrpc: '2.0', id: id ?? null, error: { code: -32603, message: "The server's response was withheld by policy", data } },
      status: 200,
    };
  }
  const code = f.rule === 'header-mismatch' ? -32020 : f.rule === 'missing-request-meta' ? -32602 : unparsed ? -32700 : -32600;
  return { message: { jsonrpc: '2.0', id: id ?? null, error: { code, message: f.message, data } }, status: modern ? 400 : 200 };
}

export interface DecideInput {
  findings: readonly PolicedFinding[];
  subject: ExchangeSubject;
  policy: Policy;
  rewriters: ReadonlyMap<string, Rewriter>;
  /** Whose rules the findings are: a client block stops the request, a server block the response. */
  party: 'client' | 'server';
  modern: boolean;
}

export function decide({ findings, subject, policy, rewriters, party, modern }: DecideInput): Decision {
  if (policy.mode !== 'enforce') return { kind: 'pass' };
  const block = findings.find((f) => f.action === 'block');
  // The subject's version is the one judging it (a version nobody defined is judged by its era's
  // newest: rules/subjects.ts), so its era decides the block's status too.
  if (block) {
    const reply = blockReply(block, party, subject.request.id, modern || isModern(subject.version));
    return { kind: 'reject', message: withIdToken(reply.message, requestIdToken(subject)), status: reply.status, rules: [block.rule] };
  }

  const original =
    subject.response && subject.response.kind !== 'notification' && subject.response.kind !== 'request'
      ? subject.response.value
      : undefined;
  let message: ResponseMessage | undefined;
  if (original !== undefined) {
    message = copyOf(original) as ResponseMessage | undefined;
    // The copy reads any depth (a message past the walk bounds is unreadable-response's to judge,
    // and so the policy's); a value that still cannot be copied passes as it came.
    if (message === undefined) return { kind: 'pass' };
  }
  let status: number | undefined;
  const applied: string[] = [];
  const settled: string[] = [];
  for (const f of findings) {
    if (f.action !== 'rewrite') continue;
    const rewriter = rewriters.get(f.rule);
    if (!rewriter) continue;
    const out = rewriter.apply(message, { subject, finding: f, marker: policy.redactionMarker });
    if (out) {
      message = out.message;
      status = out.status ?? status;
      applied.push(f.rule);
    } else if (applied.length > 0) {
      // An earlier rewrite already left nothing for this one to change (e.g. the code it would fix is gone).
      settled.push(f.rule);
    }
  }
  if (applied.length === 0 || message === undefined) return { kind: 'pass' };
  const replaced = original ?? subject.unmatched.find((m) => m.kind === 'error')?.value;
  const before = replaced !== undefined ? excerpt(replaced, 2000) : (subject.bodyProblem?.excerpt ?? subject.proxyError ?? '');
  // The message goes out with the request's id as the client wrote it (1.0, 1e2, -0, an integer
  // beyond 2^53), wherever it still carries that id.
  return { kind: 'mutate', message: withIdToken(message, requestIdToken(subject)), status, rules: applied, settled, before };
}

/** Rewriters by the rule ids they handle. */
export function rewriterIndex(rewriters: readonly Rewriter[]): Map<string, Rewriter> {
  const index = new Map<string, Rewriter>();
  for (const r of rewriters) for (const rule of r.rules) index.set(rule, r);
  return index;
}
