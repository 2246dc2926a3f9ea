// The POST as a whole, judged by the server's rules once it replied (about the HTTP exchange: its
// status, content type, headers), and what enforce does about a body that did not parse.
import { mediaType } from '../mcp/media-type.ts';
import { decidePost } from '../rewrite/post-rewrite.ts';
import type { PostSubject } from '../rules/types.ts';
import type { Decision } from '../verdicts.ts';
import { policed } from './judge.ts';
import type { Judged } from './plans.ts';
import type { Frame } from './stages.ts';
import { postWhere, stagesFor, type EngineCore, type ExchangeState, type JudgedPost } from './state.ts';

/** The server's rules on the POST as a whole, through the policy (`reply`: the body's frame, when there was one). */
function judgedPost(core: EngineCore, x: ExchangeState, reply: Frame | undefined): JudgedPost {
  const up = x.upstream!;
  const subject: PostSubject = {
    kind: 'post',
    wire: x.flow.wire,
    version: x.flow.protocolVersion,
    requestHeaders: x.flow.requestHeaders,
    request: x.inbound!.decoded,
    status: up.status,
    contentType: mediaType(up.headers['content-type']) || undefined,
    responseHeaders: up.headers,
    response: reply?.decoded,
    responseBytes: reply?.size ?? 0,
    session: x.flow.session,
  };
  const where = postWhere(x);
  const ctx = stagesFor(core, x);
  return { subject, findings: policed(ctx, ctx.engine.evaluate(subject, 'server'), where.method, where.tool) };
}

/**
 * A client body that did not parse opened no request: its answer is the POST's own, judged by the
 * POST-level rules and decided before it goes out (parse-error-unanswered: -32700). Returns the
 * decision when it replaces the server's answer.
 */
export function postDecision(
  core: EngineCore,
  x: ExchangeState,
  reply: Frame | undefined,
  judged: Judged[],
): Exclude<Decision, { kind: 'pass' }> | undefined {
  const post = judgedPost(core, x, reply);
  const decision = decidePost(post.findings, post.subject, x.policy);
  x.judgedPost = decision.kind === 'pass' ? post : { ...post, applied: new Set(decision.rules) };
  if (decision.kind === 'pass') return undefined;
  judged.push({ kind: 'decision', decision, where: postWhere(x), counted: true });
  return decision;
}

/** The POST's findings once the server replied, judged now unless a decision judged them already. */
export function postFindings(core: EngineCore, x: ExchangeState, reply: Frame | undefined): Judged[] {
  if (x.kind !== 'post' || !x.inbound || !x.upstream) return [];
  const post = x.judgedPost ?? judgedPost(core, x, reply);
  return [
    { kind: 'findings', findings: post.findings, where: postWhere(x), applied: post.applied ?? new Set(), counted: true, on: 'post' },
  ];
}
